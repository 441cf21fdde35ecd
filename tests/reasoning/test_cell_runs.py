"""Cell runs (apps/reasoning/services/cell_runs.py) and their socket (/ws/runs/, apps/reasoning/consumers.py): a run
is queued with an id, a worker's delivery claims it once, its output reaches the owner's socket while it runs, a
cancel kills it, an orphan is taken over, and nobody else can watch, read or cancel it.

The socket tests drive the whole ASGI application (config.asgi) with Channels' WebsocketCommunicator, with the
session cookie of a logged-in user; the run executes in a thread of its own, as a worker would, and its nudges
cross the real channel layer (PostgreSQL NOTIFY, or Redis when configured). Real Celery workers run them in
test_cell_runs_worker.py."""
import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import connections
from django.test import Client
from django.utils import timezone

from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.reasoning.models import Cell, CellRun
from apps.reasoning.services.cell_runs import (
    cell_run, cell_run_cancel, cell_run_execute, cell_run_get, cell_run_start,
)
from apps.reasoning.services.notebooks import cell_add, notebook_create, notebook_delete, notebook_directory
from config.asgi import application
from tests.reasoning.notebook_support import notebook_dir  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("notebook_dir")

ORIGIN = (b"origin", b"http://testserver")
SECONDS = 30
# Prints, then waits (without spinning) until the test creates the file "go" in the notebook directory.
WAITS_FOR_GO = ("const fs = require('fs'); console.log('first');"
                "const pause = new Int32Array(new SharedArrayBuffer(4));"
                "while (!fs.existsSync('go')) Atomics.wait(pause, 0, 0, 20); console.log('second');")


def code(user, notebook, content, filename="main.js"):
    return cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", content=content, filename=filename)


@pytest.fixture
def notebook(user):
    return notebook_create(actor=user, title="Runs")


# ---- the service -------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_started_run_is_queued_and_its_delivery_runs_it_once(user, notebook):
    cell = code(user, notebook, "const fs = require('fs'); fs.appendFileSync('count', 'x');"
                                "console.log(fs.readFileSync('count', 'utf8').length);")
    run = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    assert (run.status, run.owner, run.cell, run.notebook) == ("queued", user, cell, notebook)
    done = cell_run_execute(run_id=str(run.pk))
    assert (done.status, done.exit_code, done.stdout, done.message) == ("completed", 0, "1\n", "completed, exit code 0")
    assert done.started_at <= done.finished_at and done.duration_ms is not None and done.lease == ""
    # A second delivery of the finished run does nothing: the cell did not run again.
    assert cell_run_execute(run_id=str(run.pk)) is None
    assert (notebook_directory(notebook) / "count").read_text() == "x"
    assert CellRun.objects.get(pk=run.pk).finished_at == done.finished_at
    stored = Cell.objects.get(pk=cell.pk)
    assert (stored.status, stored.stdout, stored.exit_code) == ("completed", "1\n", 0)


@pytest.mark.django_db
def test_a_failure_says_why_and_a_timeout_is_a_failure(user, notebook, settings):
    thrown = code(user, notebook, "throw new Error('kaboom')", filename="boom.js")
    failed = cell_run_execute(run_id=cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=thrown.pk).pk)
    assert (failed.status, failed.exit_code, failed.message) == ("failed", 1, "the code failed (exit code 1)")
    assert "kaboom" in failed.stderr
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 1
    endless = code(user, notebook, "while (true) {}", filename="loop.js")
    timed_out = cell_run_execute(run_id=cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=endless.pk).pk)
    assert (timed_out.status, timed_out.exit_code) == ("failed", 124)
    assert timed_out.message == "timed out after 1 s (the notebook time limit); the process was killed (exit code 124)"
    assert Cell.objects.get(pk=endless.pk).status == "failed"


@pytest.mark.django_db
def test_one_unfinished_run_per_cell_and_a_cancelled_queued_run_never_runs(user, notebook):
    cell = code(user, notebook, "require('fs').writeFileSync('ran', 'x')")
    first = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    with pytest.raises(Conflict) as caught:
        cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    assert caught.value.code == "cell_running" and caught.value.extra["run_id"] == str(first.pk)
    with pytest.raises(Conflict):
        cell_run(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)  # REST and MCP too
    cancelled = cell_run_cancel(actor=user, run_id=first.pk)
    assert (cancelled.status, cancelled.message) == ("cancelled", "cancelled before it started")
    assert cell_run_execute(run_id=first.pk) is None
    assert not (notebook_directory(notebook) / "ran").exists()
    assert cell_run_cancel(actor=user, run_id=first.pk).status == "cancelled"  # again: nothing changes
    assert cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk).status == "queued"


@pytest.mark.django_db
def test_an_orphaned_run_is_taken_over_by_the_next_delivery_or_failed_by_the_next_start(user, notebook, settings):
    cell = code(user, notebook, "console.log('again')")
    run = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    long_ago = timezone.now() - timedelta(hours=2)
    # What a worker killed mid-run leaves behind.
    CellRun.objects.filter(pk=run.pk).update(status="running", lease="dead", started_at=long_ago)
    assert cell_run_execute(run_id=run.pk).stdout == "again\n"
    # A recent "running" run is another worker's: a second delivery leaves it alone.
    other = code(user, notebook, "console.log(1)", filename="other.js")
    held = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=other.pk)
    CellRun.objects.filter(pk=held.pk).update(status="running", lease="alive", started_at=timezone.now())
    assert cell_run_execute(run_id=held.pk) is None
    assert CellRun.objects.get(pk=held.pk).lease == "alive"
    # Once it is older than the limits, starting the cell again fails it and queues a new run.
    CellRun.objects.filter(pk=held.pk).update(started_at=long_ago)
    again = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=other.pk)
    orphan = CellRun.objects.get(pk=held.pk)
    assert (orphan.status, orphan.message) == ("failed", "the worker running it stopped before it finished")
    assert again.status == "queued"


@pytest.mark.django_db
def test_a_run_of_a_notebook_deleted_meanwhile_fails_saying_so(user, notebook):
    cell = code(user, notebook, "console.log(1)")
    run = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=cell.pk)
    notebook_delete(actor=user, notebook_id=notebook.pk)
    with pytest.raises(NotFound):
        cell_run_execute(run_id=run.pk)
    stored = CellRun.objects.get(pk=run.pk)
    assert stored.status == "failed" and "was deleted before the run started" in stored.message


@pytest.mark.django_db
def test_bob_cannot_read_or_cancel_alices_run_and_bad_ids_are_not_found(user, other_user, notebook):
    run = cell_run_start(actor=user, notebook_id=notebook.pk, cell_id=code(user, notebook, "1").pk)
    for attempt in (lambda: cell_run_get(actor=other_user, run_id=run.pk),
                    lambda: cell_run_cancel(actor=other_user, run_id=run.pk),
                    lambda: cell_run_start(actor=other_user, notebook_id=notebook.pk, cell_id=run.cell_id)):
        with pytest.raises(NotFound):
            attempt()
    assert CellRun.objects.get(pk=run.pk).status == "queued"
    for bad in ("nope", "00000000-0000-0000-0000-000000000000", None):
        with pytest.raises(NotFound) as caught:
            cell_run_get(actor=user, run_id=bad)
        assert caught.value.code == "run_not_found"
    with pytest.raises(InvalidInput):
        cell_run_start(actor=user, notebook_id=notebook.pk,
                       cell_id=cell_add(actor=user, notebook_id=notebook.pk, cell_type="markdown", content="x").pk)


# ---- the socket --------------------------------------------------------------------------------------------

def session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return b"cookie", f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def open_socket(*headers) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/runs/", headers=[ORIGIN, *headers])
    connected, _ = await communicator.connect(timeout=SECONDS)
    assert connected
    return communicator


async def receive(socket) -> dict:
    return await socket.receive_json_from(timeout=SECONDS)


async def until(socket, condition) -> tuple[dict, list[dict]]:
    """The first "run" message whose state meets ``condition``, and every message before it."""
    seen = []
    while True:
        message = await receive(socket)
        seen.append(message)
        if message["type"] == "run" and condition(message["run"]):
            return message["run"], seen


def in_worker_thread(run_id):
    """cell_run_execute in a thread of its own, as a worker runs it (not the consumer's database thread)."""
    def work():
        try:
            return cell_run_execute(run_id=run_id)
        finally:
            connections.close_all()

    return asyncio.get_running_loop().run_in_executor(None, work)


@pytest.mark.django_db(transaction=True)
async def test_a_socket_without_a_session_is_closed():
    socket = await open_socket()
    message = await receive(socket)
    assert message["code"] == "not_authenticated"
    assert (await socket.receive_output(timeout=SECONDS))["code"] == 4401


@pytest.mark.django_db(transaction=True)
async def test_the_owner_sees_the_run_start_stream_its_output_and_finish(user, notebook):
    cell = await database_sync_to_async(code)(user, notebook, WAITS_FOR_GO)
    run = await database_sync_to_async(cell_run_start)(actor=user, notebook_id=notebook.pk, cell_id=cell.pk,
                                                       background=False)  # this test is the worker
    socket = await open_socket(await database_sync_to_async(session_cookie)(user))
    await socket.send_json_to({"type": "watch", "run": str(run.pk)})
    first = await receive(socket)
    assert first["type"] == "run" and (first["run"]["id"], first["run"]["status"]) == (str(run.pk), "queued")
    worker = in_worker_thread(run.pk)
    streamed, _ = await until(socket, lambda state: state["stdout"] == "first\n")
    assert streamed["status"] == "running" and streamed["finished"] is False and streamed["exit_code"] is None
    (notebook_directory(notebook) / "go").write_text("")
    done, _ = await until(socket, lambda state: state["finished"])
    assert (done["status"], done["succeeded"], done["exit_code"], done["stdout"]) == ("completed", True, 0,
                                                                                     "first\nsecond\n")
    assert done["message"] == "completed, exit code 0" and done["elapsed_ms"] == (await worker).duration_ms
    await socket.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_cancel_kills_a_running_cell_and_the_socket_shows_it_cancelled(user, notebook, settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 120  # only the cancel ends it
    cell = await database_sync_to_async(code)(user, notebook, WAITS_FOR_GO)
    run = await database_sync_to_async(cell_run_start)(actor=user, notebook_id=notebook.pk, cell_id=cell.pk,
                                                       background=False)  # this test is the worker
    socket = await open_socket(await database_sync_to_async(session_cookie)(user))
    await socket.send_json_to({"type": "watch", "run": str(run.pk)})
    await receive(socket)
    worker = in_worker_thread(run.pk)
    await until(socket, lambda state: state["stdout"] == "first\n")
    await database_sync_to_async(cell_run_cancel)(actor=user, run_id=run.pk)
    flagged, _ = await until(socket, lambda state: state["cancel_requested"])
    done, _ = await until(socket, lambda state: state["finished"])
    assert (done["status"], done["succeeded"], done["exit_code"]) == ("cancelled", False, 137)
    assert done["message"] == "cancelled: the process was killed (exit code 137)"
    assert (await worker).status == "cancelled"
    assert not (notebook_directory(notebook) / "go").exists()
    await socket.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_bob_cannot_watch_alices_run_nor_hear_its_progress(user, other_user, notebook):
    cell = await database_sync_to_async(code)(user, notebook, "console.log('secret')")
    run = await database_sync_to_async(cell_run_start)(actor=user, notebook_id=notebook.pk, cell_id=cell.pk,
                                                       background=False)  # this test is the worker
    bob = await open_socket(await database_sync_to_async(session_cookie)(other_user))
    alice = await open_socket(await database_sync_to_async(session_cookie)(user))
    await bob.send_json_to({"type": "watch", "run": str(run.pk)})
    refused = await receive(bob)
    assert (refused["type"], refused["code"], refused["field"], refused["run"]) == ("error", "run_not_found", "run",
                                                                                    str(run.pk))
    await alice.send_json_to({"type": "watch", "run": str(run.pk)})
    await receive(alice)
    await in_worker_thread(run.pk)
    done, _ = await until(alice, lambda state: state["finished"])
    assert done["stdout"] == "secret\n"
    # Alice heard the whole run; bob, refused, heard nothing of it.
    assert await bob.receive_nothing(timeout=1)
    await bob.disconnect()
    await alice.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_bad_socket_messages_get_errors_naming_the_field(user):
    socket = await open_socket(await database_sync_to_async(session_cookie)(user))
    for message, field in (({"type": "watch"}, "run"), ({"type": "watch", "run": 5}, "run"),
                           ({"type": "subscribe"}, "type"), ("not an object", "type")):
        await socket.send_json_to(message)
        error = await receive(socket)
        assert error["type"] == "error" and error["field"] == field, (message, error)
    await socket.send_json_to({"type": "watch", "run": "not-a-uuid"})
    assert (await receive(socket))["code"] == "run_not_found"
    await socket.send_to(text_data="{not json")
    assert (await receive(socket))["field"] == "type"
    await socket.disconnect()

"""Running notebook cells in a real browser (Debian's chromium through Playwright) against the whole ASGI stack on
uvicorn (websockets included), with a real Celery worker on the SQL broker: while a cell runs the Run button is
disabled, a spinner counts the seconds and a Cancel button shows; the run's state comes over /ws/runs/; an endless
loop ends as a failure in the error style (the worker's time limit is 2 s here), a normal cell as a success, and a
cancelled one as cancelled. Without the page's script, the run's own page refreshes itself until the run ends."""
import shutil

import pytest
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from playwright.sync_api import expect, sync_playwright

from apps.reasoning.models import CellRun
from apps.reasoning.services.notebooks import cell_add, notebook_create, notebook_directory
from config.asgi import application
from tests.browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, log_in
from tests.mcp.support import serving
from tests.memories.test_faults_worker import _close_broker_connections, workers  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="runs a worker on the SQL broker; REDIS_URL is set"),
]

WAIT_MS = 60_000
WORKER_TIME_LIMIT = "2"


@pytest.fixture
def live_url(django_db_setup):
    with serving(ASGIStaticFilesHandler(application), lifespan="on") as url:
        yield url


@pytest.fixture
def notebook(user):
    notebook = notebook_create(actor=user, title="Long work")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="loop.js", content="while (true) {}")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="hello.js",
             content="console.log('hello from the worker');")
    yield notebook
    shutil.rmtree(notebook_directory(notebook), ignore_errors=True)


@pytest.fixture
def worker(request, monkeypatch):
    """worker(time_limit) -> a Celery worker whose notebook time limit is ``time_limit`` seconds."""
    def start(time_limit: str):
        # The workers fixture reads the environment when it is set up: after this.
        monkeypatch.setenv("ENGRAM_NOTEBOOK_TIMEOUT_SECONDS", time_limit)
        return request.getfixturevalue("workers")("cells")

    return start


@pytest.fixture
def browser_page(live_url, monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own database reads happen between steps.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.set_default_timeout(WAIT_MS)
        errors, frames = [], []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: frames.append((socket.url, frame))))
        yield page, errors, frames
        browser.close()
        connections.close_all()


def cell_item(page, filename: str):
    return page.locator("li.cell", has=page.locator(".cell-filename", has_text=filename))


def test_an_endless_loop_keeps_the_button_disabled_with_a_spinner_then_fails_and_a_normal_cell_succeeds(
        live_url, browser_page, user, notebook, worker):
    worker(WORKER_TIME_LIMIT)
    page, errors, frames = browser_page
    log_in(page, f"{live_url}/login/?next=/reasoning/notebooks/{notebook.pk}/")
    loop = cell_item(page, "loop.js")
    run_button = loop.get_by_role("button", name="Run")
    run_button.click()
    expect(run_button).to_be_disabled()
    expect(loop.locator(".run-spinner")).to_be_visible()
    expect(loop.locator(".run-progress-text")).to_contain_text(" s")
    expect(loop.get_by_role("button", name="Cancel")).to_be_visible()
    # The page answered at once: the run is the worker's, and the page is free to use meanwhile.
    expect(loop.locator(".run-progress-text")).to_contain_text("Running", timeout=WAIT_MS)
    expect(loop.locator(".cell-status")).to_have_text("Running")

    outcome = loop.locator(".run-outcome")
    expect(outcome).to_be_visible(timeout=WAIT_MS)
    expect(outcome).to_have_class("message run-outcome message-error")
    expect(outcome).to_have_text(f"loop.js: timed out after {WORKER_TIME_LIMIT} s (the notebook time limit); "
                                 "the process was killed (exit code 124).")
    expect(run_button).to_be_enabled()
    expect(loop.locator(".run-spinner")).to_be_hidden()
    expect(loop.get_by_role("button", name="Cancel")).to_be_hidden()
    expect(loop.locator(".cell-status")).to_have_text("Failed")
    expect(loop.locator(".cell-output")).to_contain_text("exit code 124")
    assert CellRun.objects.get(cell__filename="loop.js").status == "failed"

    hello = cell_item(page, "hello.js")
    hello.get_by_role("button", name="Run").click()
    success = hello.locator(".run-outcome")
    expect(success).to_have_class("message run-outcome message-success", timeout=WAIT_MS)
    expect(success).to_have_text("hello.js: completed, exit code 0.")
    expect(hello.locator(".output-stdout")).to_have_text("hello from the worker")
    expect(hello.locator(".cell-status")).to_have_text("Completed")
    expect(hello.get_by_role("button", name="Run")).to_be_enabled()

    # The states came over the run socket, not by polling.
    runs = [frame for url, frame in frames if url.endswith("/ws/runs/")]
    assert any('"status": "running"' in frame for frame in runs) and any('"status": "completed"' in frame
                                                                         for frame in runs)
    assert errors == []


def test_cancel_stops_a_running_cell_and_without_the_script_the_run_page_refreshes_to_the_end(
        live_url, browser_page, user, notebook, worker):
    worker("600")  # only the cancel ends the loop
    page, errors, _ = browser_page
    log_in(page, f"{live_url}/login/?next=/reasoning/notebooks/{notebook.pk}/")
    loop = cell_item(page, "loop.js")
    loop.get_by_role("button", name="Run").click()
    expect(loop.locator(".run-progress-text")).to_contain_text("Running", timeout=WAIT_MS)
    loop.get_by_role("button", name="Cancel").click()
    outcome = loop.locator(".run-outcome")
    expect(outcome).to_have_class("message run-outcome message-error", timeout=WAIT_MS)
    expect(outcome).to_have_text("loop.js: cancelled: the process was killed (exit code 137).")
    expect(loop.get_by_role("button", name="Run")).to_be_enabled()
    assert errors == []

    # The same page with JavaScript off: Run goes to the run's page, which refreshes itself until the run ends.
    context = page.context.browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    plain = context.new_page()
    plain.set_default_timeout(WAIT_MS)
    log_in(plain, f"{live_url}/login/?next=/reasoning/notebooks/{notebook.pk}/")
    cell_item(plain, "hello.js").get_by_role("button", name="Run").click()
    expect(plain.get_by_role("heading", name="Run of hello.js")).to_be_visible()
    expect(plain.locator(".message-success")).to_have_text("hello.js: completed, exit code 0.", timeout=WAIT_MS)
    expect(plain.locator(".output-stdout")).to_have_text("hello from the worker")
    context.close()

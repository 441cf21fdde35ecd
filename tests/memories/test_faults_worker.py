"""A Celery worker killed in the middle of a task loses nothing: the task runs again and completes once.

Real worker processes (`celery -A config worker`, prefork with one pool process, as `manage.py serve` starts it)
on the broker of the embedded default (apps/core/broker.py). The task is re-embedding a memory: it computes the
vectors, then replaces vectors and links in one transaction. The test holds a row lock on the memory's vectors,
so the task stops inside that transaction, where the test sees its backend waiting (pg_stat_activity), and is
killed there. Completing is observable: the task's one `memory.relinked` graph event, stored after its commit.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from apps.graph.models import GraphEvent
from apps.memories.models import MemoryVector
from apps.memories.tasks import reembed_memory
from tests.broker_support import close_broker_connections

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    # They read the SQL broker's table to see a message held and acked; Redis redelivers by its own visibility timeout.
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="checks the SQL broker (apps/core/broker.py); REDIS_URL is set"),
]

VISIBILITY_TIMEOUT = 3  # seconds before a taken, unacked message is visible again (production: an hour)
MESSAGES = "engram_broker_message"


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def workers(tmp_path: Path):
    """start(name) -> a real worker process in a session of its own, on this run's test database."""
    params = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "HF_HUB_OFFLINE": "1",
           "DATABASE_URL": f"postgresql://{params['USER']}@{quote(params['HOST'], safe='')}/{params['NAME']}",
           "ENGRAM_BROKER_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT), "ENGRAM_VAR_DIR": str(tmp_path / "var")}
    started: list[subprocess.Popen] = []

    def start(name: str) -> subprocess.Popen:
        log = open(tmp_path / f"{name}.log", "w")
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=prefork", "--concurrency=1",
             "--loglevel=INFO", "-n", f"{name}@%h", "--without-mingle", "--without-gossip", "--without-heartbeat"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def vectors_held():
    """hold(memory): lock the memory's vector rows from another connection until release()."""
    params = connection.settings_dict
    holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])

    class Hold:
        def __call__(self, memory):
            holder.execute(f"SELECT 1 FROM {MemoryVector._meta.db_table} WHERE memory_id = %s FOR UPDATE",
                           [memory.pk])

        def release(self):
            holder.rollback()

    yield Hold()
    holder.close()


def task_waiting_on_vectors() -> list[int]:
    """Backends of this database stopped on a lock while deleting vectors: the task, mid-transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
            "AND query LIKE %s", [f'DELETE FROM "{MemoryVector._meta.db_table}"%'])
        return [row[0] for row in cursor.fetchall()]


def relinked(memory) -> int:
    return GraphEvent.objects.filter(kind="memory.relinked", payload__id=str(memory.pk)).count()


def broker_messages() -> list[bool]:
    """The visible flag of every message left in the broker's celery queue (an ack deletes the row)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.visible FROM {MESSAGES} m JOIN engram_broker_queue q ON q.id = m.queue_id "
                       "WHERE q.name = 'celery'")
        return [row[0] for row in cursor.fetchall()]


def pool_processes(worker: subprocess.Popen) -> list[int]:
    """The pool processes (children) of a prefork worker, from /proc."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == worker.pid:
            children.append(int(stat.parent.name))
    return children


@pytest.fixture(autouse=True)
def _close_broker_connections():
    yield
    close_broker_connections()  # the test process published through kombu


def test_a_worker_killed_mid_task_loses_nothing_and_a_new_worker_completes_it_once(user, store, workers,
                                                                                  vectors_held):
    memory = store(user, "The harbour lights are switched on at dusk")
    vectors_held(memory)
    reembed_memory.delay(str(memory.pk), user.pk)
    first = workers("first")
    wait_for(task_waiting_on_vectors, "the task to reach its transaction")

    os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool process, as a lost machine or container
    first.wait(timeout=30)
    vectors_held.release()
    # The killed attempt committed nothing (its backend's transaction dies with its client); the message is
    # still in the broker, taken and not acked.
    wait_for(lambda: not task_waiting_on_vectors(), "the killed attempt's backend to go")
    assert relinked(memory) == 0
    assert broker_messages() == [False]

    workers("second")
    wait_for(lambda: relinked(memory) >= 1 and not broker_messages(), "the task to be redelivered and acked")
    assert relinked(memory) == 1  # once: the ack deleted the message, so nothing can deliver it again
    assert MemoryVector.objects.filter(memory=memory).count() == 1


def test_a_pool_process_killed_mid_task_puts_the_task_back(user, store, workers, vectors_held):
    # The OOM killer's case: the worker lives, the process running the task dies; the task goes back to
    # the broker (task_reject_on_worker_lost) instead of being acked as failed.
    memory = store(user, "The ferry leaves at seven")
    vectors_held(memory)
    reembed_memory.delay(str(memory.pk), user.pk)
    worker = workers("pool")
    wait_for(task_waiting_on_vectors, "the task to reach its transaction")
    [pool_process] = pool_processes(worker)

    os.kill(pool_process, signal.SIGKILL)
    vectors_held.release()

    wait_for(lambda: relinked(memory) >= 1 and not broker_messages(), "the task to run again in a new pool process")
    assert relinked(memory) == 1
    assert MemoryVector.objects.filter(memory=memory).count() == 1
    assert worker.poll() is None  # the worker itself went on

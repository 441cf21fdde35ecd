"""Background work through a real Celery worker and the real broker of the embedded default
(kombu's SQLAlchemy transport on PostgreSQL): the same path `make run` uses across processes."""
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.utils import timezone
from tests.broker_support import close_broker_connections

from apps.memories.models import Memory
from apps.memories.tasks import decay_memories
from config.celery import app


@pytest.fixture
def worker(transactional_db):
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        yield
    close_broker_connections()


@pytest.mark.django_db(transaction=True)
def test_the_decay_task_runs_in_a_worker_through_the_broker(worker, user, store):
    memory = store(user, "We met at the cafe", primary_sector="episodic")
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=30))
    decay_memories.delay()
    _wait_for(lambda: Memory.objects.get(pk=memory.pk).decayed_at is not None)
    memory.refresh_from_db()
    assert memory.strength < 1.0 and memory.decayed_at is not None


def test_the_task_calls_the_service(user, store):
    memory = store(user, "Paris is in France")
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=30))
    assert decay_memories() == 1
    memory.refresh_from_db()
    assert memory.strength < 1.0


def test_beat_schedules_decay():
    entry = app.conf.beat_schedule["memories-decay"]
    assert entry["task"] == decay_memories.name


def _wait_for(condition, timeout=30.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("the worker did not run the task in time")

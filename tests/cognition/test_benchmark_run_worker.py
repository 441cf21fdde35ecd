"""test_recall_accuracy's background half on real Celery workers (the SQL broker of the embedded default): a run
handed over by the call is finished by a worker, and a worker SIGKILLed in the middle of storing leaves the hidden
cube holding exactly the batches its checkpoint counts, so a new worker resumes there and the run completes once."""
import os
import signal
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from apps.cognition.models import BenchmarkRun
from apps.cognition.services.benchmark import recall_test_start
from apps.cubes.models import Cube
from apps.memories.models import Memory
from tests.memories.test_faults_worker import (  # noqa: F401 (fixtures)
    _close_broker_connections, wait_for, workers,
)

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="runs workers on the SQL broker; REDIS_URL is set"),
]


def _run(pk) -> BenchmarkRun:
    return BenchmarkRun.objects.get(pk=pk)


@override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=0)
def test_a_worker_finishes_a_run_handed_over_by_the_call(user, workers):  # noqa: F811
    run = recall_test_start(actor=user, needle_count=5, haystack_size=300)
    assert (run.status, run.background, run.stored) == ("running", True, 200)
    workers("bench")
    wait_for(lambda: _run(run.pk).status == "completed", "the worker to finish the run")
    done = _run(run.pk)
    assert (done.stored, done.queried, len(done.outcomes), done.lease) == (305, 5, 5, "")
    assert done.report["test_details"]["queries"] == 5
    assert not Cube.objects.filter(hidden=True).exists() and not Memory.objects.filter(owner=user).exists()


@override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=0)
def test_a_worker_killed_mid_run_is_resumed_from_the_checkpoint(user, workers):  # noqa: F811
    run = recall_test_start(actor=user, needle_count=5, haystack_size=3000)
    first = workers("first")
    wait_for(lambda: _run(run.pk).stored >= 600, "the worker to store a few batches")
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    killed = _run(run.pk)
    assert killed.status == "running" and killed.stored < killed.total_items
    # Each batch committed with the counter: the cube holds exactly what the checkpoint says, nothing half-stored.
    assert Memory.objects.filter(cube_id=run.cube_id).count() == killed.stored
    # The dead worker's lease would lapse after BENCHMARK_LEASE_SECONDS; the test lapses it at once.
    BenchmarkRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    workers("second")
    wait_for(lambda: _run(run.pk).status == "completed", "a new worker to resume and finish the run", timeout=300)
    done = _run(run.pk)
    assert (done.stored, done.queried, len(done.outcomes), len(done.needles)) == (3005, 5, 5, 5)
    assert not Cube.objects.filter(hidden=True).exists() and not Memory.objects.filter(owner=user).exists()

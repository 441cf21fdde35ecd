"""A dream on real Celery workers (the SQL broker of the embedded default), SIGKILLed in the middle of a run: the
batch under way never commits, the checkpoint stays where the last committed batch left it, and a new worker takes
the lapsed lease over and resumes there, so the run ends in the graph an uninterrupted run with the same seed makes.

The test synchronises on the checkpoint and on a row lock, never on time: it holds the lock of the link the third
batch replays, waits until the worker's backend is stopped on it with two batches committed, and kills the worker
there (its pool process and all)."""
import os
import signal
import uuid
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.cognition.services.scratchpad import scratchpad_store
from apps.cognition.tasks import dream_queue
from apps.memories.models import MemoryLink
from tests.cognition.curation_support import nodes
from tests.cognition.dream_support import graph_of
from tests.cognition.test_dream_runs import chain
from tests.memories.test_faults_worker import (  # noqa: F401 (fixtures)
    _close_broker_connections, wait_for, workers,
)

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="runs workers on the SQL broker; REDIS_URL is set"),
]

SEED = 20_261_126
STAGING = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
           "Staging uses Kubernetes version 1.30 with three worker nodes.",
           "Our staging Kubernetes cluster has three nodes running 1.30.")


def world(user) -> list:
    """A chain to replay (one item a batch), a cluster to summarise and a surprising thought to commit."""
    made = chain(user, 8)
    nodes(user, *STAGING)
    scratchpad_store(actor=user, session_id=uuid.uuid4(), agent_id="planner", auto_commit_threshold=0.3,
                     content="Penguins nest on the ice shelf through the winter.")
    return made


def waiting_on_links() -> list[int]:
    """Backends of this database stopped on a lock while locking links: the dream's batch, mid-transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
            "AND query LIKE %s AND query LIKE %s", [f'SELECT %"{MemoryLink._meta.db_table}"%', "%FOR UPDATE%"])
        return [row[0] for row in cursor.fetchall()]


def _run(pk) -> ConsolidationRun:
    return ConsolidationRun.objects.get(pk=pk)


@pytest.mark.timeout(300)
def test_a_worker_killed_mid_dream_is_resumed_to_the_graph_of_an_uninterrupted_run(user, other_user, workers):  # noqa: F811
    world(user)
    theirs = world(other_user)
    whole = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=1, seed=SEED).pk)
    assert whole.status == "completed", whole.notes
    assert whole.checkpoint["counters"]["summaries_created"] >= 1
    assert whole.checkpoint["counters"]["thoughts_committed"] == 1

    params = connection.settings_dict
    holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])
    try:
        third = MemoryLink.objects.get(source=theirs[2], target=theirs[3])
        holder.execute(f'SELECT 1 FROM "{MemoryLink._meta.db_table}" WHERE id = %s FOR UPDATE', [third.pk])
        run = dream_queue(dream_trigger(actor=other_user, phase="nrem", batch_size=1, seed=SEED))
        first = workers("first")
        wait_for(lambda: waiting_on_links() and _run(run.pk).progress.get("batches") == 2,
                 "the worker's third batch to wait on the held link", timeout=180)
        os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool process, as a lost machine
        first.wait(timeout=30)
    finally:
        holder.rollback()
        holder.close()
    # The killed batch's backend gets the lock, then finds its client gone: nothing of it commits.
    wait_for(lambda: not waiting_on_links(), "the killed batch's backend to go")
    killed = _run(run.pk)
    assert (killed.status, killed.progress["batches"], killed.checkpoint["counters"]["items_replayed"]) == \
        ("running", 2, 2)
    assert MemoryLink.objects.filter(source__owner=other_user, last_activated_at__isnull=False).count() == 2
    # The dead worker's lease would lapse after 60 s without a heartbeat; the test lapses it at once.
    ConsolidationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    workers("second")  # the unacked message comes back to it (visibility timeout), and it takes the lease over
    wait_for(lambda: _run(run.pk).status == "completed", "a new worker to resume and finish the dream", timeout=180)
    done = _run(run.pk)
    assert graph_of(other_user) == graph_of(user)
    assert done.checkpoint["counters"] | {"batches": 0, "items": 0} == \
        whole.checkpoint["counters"] | {"batches": 0, "items": 0}
    assert done.seed == whole.seed == SEED

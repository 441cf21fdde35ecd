"""cognition.purge_expired on a real Celery worker, SIGKILLed in the middle of a run: what it had purged is gone
completely (memory, vector, links, tombstone), what it had not is untouched, and a new worker finishes the run.

The test holds a row lock on the second tombstone, so the task stops inside that node's transaction, where the
test sees its backend waiting (pg_stat_activity), and kills the worker there (tests/memories/test_faults_worker.py
runs its workers the same way)."""
import os
import signal
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from apps.cognition.models import Tombstone
from apps.cognition.services.curation import node_forget
from apps.cognition.tasks import purge_expired
from apps.memories.models import Memory, MemoryLink, MemoryVector
from tests.cognition.curation_support import link, nodes
from tests.memories.test_faults_worker import (  # noqa: F401 (fixtures)
    _close_broker_connections, broker_messages, wait_for, workers,
)

pytestmark = [
    pytest.mark.slow, pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(settings.REDIS_URL),
                       reason="checks the SQL broker (apps/core/broker.py); REDIS_URL is set"),
]


def _rows(memory) -> tuple[int, int, int, int]:
    """The node's memory, vector, links and tombstone rows."""
    return (Memory.objects.filter(pk=memory.pk).count(), MemoryVector.objects.filter(memory_id=memory.pk).count(),
            MemoryLink.objects.filter(Q(source_id=memory.pk) | Q(target_id=memory.pk)).count(),
            Tombstone.objects.filter(memory_id=memory.pk).count())


def _purge_waiting() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND "
                       "wait_event_type = 'Lock' AND query LIKE %s", [f'SELECT %{Tombstone._meta.db_table}%'])
        return [row[0] for row in cursor.fetchall()]


def test_a_purge_killed_mid_run_leaves_nothing_half_deleted(user, workers):  # noqa: F811
    first, second, kept = nodes(user, "First expired note.", "Second expired note.", "A note that stays.")
    link(user, first, kept, 0.5)
    link(user, kept, second, 0.5)
    for node in (first, second):
        node_forget(actor=user, node_id=str(node.pk), reason="obsolete", cascade_edges=False)
    now = timezone.now()
    Tombstone.objects.filter(memory=first).update(deadline=now - timedelta(hours=2))
    Tombstone.objects.filter(memory=second).update(deadline=now - timedelta(hours=1))
    params = connection.settings_dict
    holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])
    try:
        holder.execute(f"SELECT 1 FROM {Tombstone._meta.db_table} WHERE memory_id = %s FOR UPDATE", [second.pk])
        purge_expired.delay()
        worker = workers("purger")
        wait_for(_purge_waiting, "the purge to reach the second node")
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        holder.rollback()
        wait_for(lambda: not _purge_waiting(), "the killed run's backend to go")
        assert _rows(first) == (0, 0, 0, 0)  # purged whole, committed before the kill
        assert _rows(second) == (1, 1, 1, 1)  # untouched: its transaction died with the worker
        assert broker_messages() == [False]  # taken, never acked
    finally:
        holder.close()

    workers("second")
    wait_for(lambda: _rows(second) == (0, 0, 0, 0) and not broker_messages(), "a new worker to finish the run")
    assert _rows(kept) == (1, 1, 0, 0)

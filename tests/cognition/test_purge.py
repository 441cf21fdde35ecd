"""cognition.purge_expired: expired tombstones' nodes go for good with their vectors and links, expired undo snapshots
and scratchpad items are dropped; nothing unexpired is touched, and a second run finds nothing to do."""
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.cognition.models import Event, ScratchpadItem, Tombstone, UndoEntry
from apps.cognition.selectors.tombstones import tombstones_search
from apps.cognition.services.curation import node_forget, nodes_merge
from apps.cognition.services.purge import expired_purge
from apps.cognition.tasks import purge_expired
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.services import memory_restore
from tests.cognition.curation_support import link, nodes

pytestmark = pytest.mark.django_db


def _scratch(user, expires_at):
    return ScratchpadItem.objects.create(owner=user, session_id=uuid.uuid4(), agent_id="a", content="thinking",
                                         delta_s=0.5, expires_at=expires_at)


def test_the_purge_removes_only_what_expired_and_runs_twice_as_once(user):
    old, kept, x, a, b = nodes(user, "Old VPN instructions.", "Current VPN instructions.", "The VPN is WireGuard.",
                               "Dark mode in every editor.", "Dark mode in all editors.")
    link(user, old, x, 0.5)
    link(user, x, old, 0.4)
    forgotten = node_forget(actor=user, node_id=str(old.pk), reason="obsolete", cascade_edges=False)
    later = node_forget(actor=user, node_id=str(kept.pk), reason="obsolete")
    merged = nodes_merge(actor=user, source_node_ids=[str(a.pk), str(b.pk)], target_name="dark mode")
    now = timezone.now()
    # The first forget and the merge are 31 days old; the second forget is recent.
    UndoEntry.objects.exclude(pk=later.reversal_hash).update(expires_at=now - timedelta(days=1))
    Tombstone.objects.exclude(memory=kept).update(deadline=now - timedelta(days=1))
    stale, fresh = _scratch(user, now - timedelta(minutes=1)), _scratch(user, now + timedelta(minutes=30))

    report = expired_purge(now=now)
    assert (report.nodes_purged, report.tombstones_dropped, report.snapshots_dropped, report.scratchpad_dropped) == \
        (3, 0, 2, 1)
    for gone in (old, a, b):
        assert not Memory.objects.filter(pk=gone.pk).exists()
        assert not MemoryVector.objects.filter(memory_id=gone.pk).exists()
    assert not MemoryLink.objects.filter(Q(source_id=old.pk) | Q(target_id=old.pk)).exists()
    assert list(UndoEntry.objects.values_list("pk", flat=True)) == [later.reversal_hash]
    assert list(Tombstone.objects.values_list("memory_id", flat=True)) == [kept.pk]
    assert Memory.objects.filter(pk__in=[kept.pk, merged.merged.pk, x.pk]).count() == 3
    assert list(ScratchpadItem.objects.all()) == [fresh] and stale.pk != fresh.pk
    assert Event.objects.filter(action="purged", node_ids__contains=[old.pk], actor__isnull=True).exists()
    assert forgotten.reversal_hash not in set(UndoEntry.objects.values_list("pk", flat=True))

    again = expired_purge(now=now)
    assert again == type(report)(0, 0, 0, 0)


def test_a_node_restored_by_hand_keeps_living_when_its_tombstone_expires(user):
    [node] = nodes(user, "Restored from the dashboard's trash.")
    node_forget(actor=user, node_id=str(node.pk), reason="obsolete")
    memory_restore(actor=user, memory_id=node.pk)
    assert tombstones_search(actor=user, query="dashboard trash") == []  # live again: not in the trash
    Tombstone.objects.update(deadline=timezone.now() - timedelta(seconds=1))
    report = expired_purge()
    assert (report.nodes_purged, report.tombstones_dropped) == (0, 1)
    assert Memory.objects.filter(pk=node.pk, deleted_at__isnull=True).exists()


def test_the_task_calls_the_purge_and_is_scheduled_hourly(user):
    [node] = nodes(user, "Expired already.")
    node_forget(actor=user, node_id=str(node.pk), reason="obsolete")
    Tombstone.objects.update(deadline=timezone.now() - timedelta(seconds=1))
    assert purge_expired.apply().get()["nodes_purged"] == 1
    assert not Memory.objects.filter(pk=node.pk).exists()
    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule["cognition.purge_expired"] == 3600
    assert purge_expired.acks_late is True

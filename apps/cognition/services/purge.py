"""The end of the retention: what the trash and the undo log keep for UNDO_RETENTION_DAYS, and the scratchpad for
its TTL, is removed for good once expired (the hourly cognition.purge_expired task).

Each tombstone's node and each undo snapshot goes in a transaction of its own, so a run that dies half-way has
removed some of them completely and left the others untouched; the next run picks up the rest. A node whose
tombstone expired is purged only if it is still in the trash (restored meanwhile: only the tombstone goes).
tombstone_purge is the same end brought forward by a person (the dashboard's trash: "Delete forever")."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import ScratchpadItem, Tombstone, UndoEntry
from apps.core.exceptions import NotFound
from apps.cubes.access import cube_ids_readable
from apps.memories.selectors import parse_memory_id
from apps.memories.services import memory_delete, memory_purge

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PurgeReport:
    nodes_purged: int
    tombstones_dropped: int
    snapshots_dropped: int
    scratchpad_dropped: int


def expired_purge(*, now: datetime | None = None, owner: User | None = None, limit: int | None = None) -> PurgeReport:
    """Everything expired; with ``owner`` (a gardener cycle's glymphatic clearance), only that user's: the trash of
    their nodes, their undo snapshots and their scratchpads. ``limit``: at most that many tombstones and that many
    snapshots (the oldest first; the next call takes the rest)."""
    now = now or timezone.now()
    purged = dropped = 0
    mine = {} if owner is None else {"owner": owner}
    expired = Tombstone.objects.filter(deadline__lte=now, **({} if owner is None else {"memory__owner": owner})
                                       ).order_by("deadline", "memory_id")
    for memory_id in list(expired.values_list("memory_id", flat=True)[:limit]):
        with transaction.atomic():
            tombstone = Tombstone.objects.select_for_update().filter(memory_id=memory_id, deadline__lte=now).first()
            if tombstone is None:  # restored, or purged by a concurrent run, since the list was read
                continue
            if memory_purge(memory_id=memory_id):  # the tombstone goes with the memory (cascade)
                purged += 1
            else:
                tombstone.delete()
                dropped += 1
    snapshots = 0
    snapshots_expired = UndoEntry.objects.filter(expires_at__lte=now, **mine).order_by("expires_at", "pk")
    for reversal_hash in list(snapshots_expired.values_list("pk", flat=True)[:limit]):
        with transaction.atomic():
            snapshots += UndoEntry.objects.filter(pk=reversal_hash, expires_at__lte=now).delete()[0]
    scratchpad, _ = ScratchpadItem.objects.filter(expires_at__lte=now, **mine).delete()
    report = PurgeReport(nodes_purged=purged, tombstones_dropped=dropped, snapshots_dropped=snapshots,
                         scratchpad_dropped=scratchpad)
    logger.info("Purged expired Context Graph state: %s nodes (with their vectors and links), %s stale tombstones, "
                "%s undo snapshots, %s scratchpad items", purged, dropped, snapshots, scratchpad)
    return report


@transaction.atomic
def tombstone_purge(*, actor: User, node_id) -> None:
    """Delete a forgotten node for good now rather than at its deadline: the memory with its vector, links, profile
    and notes (memory_delete's hard delete checks the actor may write it), its tombstone, and its forget's undo
    snapshot when that held this node alone, so that no undo brings it back. A merge's snapshot stays until it
    expires: undoing the merge still brings back the other nodes."""
    memory_id = parse_memory_id(node_id)
    tombstone = (Tombstone.objects.select_related("undo")
                 .filter(memory_id=memory_id, memory__deleted_at__isnull=False,
                         memory__cube_id__in=cube_ids_readable(actor=actor)).first())
    if tombstone is None:
        raise NotFound("This node is not in the trash: it is live, gone for good, or not yours.",
                       extra={"field": "node_id"})
    undo = tombstone.undo
    memory_delete(actor=actor, memory_id=memory_id, soft=False)
    forget_of_this_node_alone = (undo is not None and undo.operation == UndoEntry.Operation.FORGET
                                 and [str(pk) for pk in undo.node_ids] == [memory_id])
    if forget_of_this_node_alone:
        undo.delete()

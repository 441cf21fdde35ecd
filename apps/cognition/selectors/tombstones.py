"""The trash: forgotten and merged-away nodes the actor can read, found by meaning (their vectors are kept until the
purge), with why each went, who removed it and whether it can still come back."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, F, Q, QuerySet, Value, When
from django.db.models.fields import BooleanField
from django.utils import timezone
from pgvector import HalfVector
from pgvector.django import CosineDistance

from apps.accounts.models import User
from apps.cognition.limits import TOMBSTONE_TOP_K
from apps.cognition.models import Tombstone
from apps.core.exceptions import InvalidInput
from apps.cubes.access import cube_ids_readable
from apps.memories.embeddings import embed_query
from apps.memories.validation import MAX_QUERY_CHARS, clean_datetime, clean_text

# The seed's names for deletion reasons, where they differ from the Tombstone's.
REASON_FILTERS = {"adversarial": Tombstone.Reason.ADVERSARIAL_INJECTION}
SEARCHABLE_REASONS = ("all", "semantic_cancer", "obsolete", "adversarial", "user_requested", "glymphatic_clearance")
EXPLANATIONS = {
    Tombstone.Reason.SEMANTIC_CANCER: "it was judged semantic cancer: content that spread contradictions or noise "
                                      "through the nodes around it",
    Tombstone.Reason.ADVERSARIAL_INJECTION: "it was judged an adversarial injection: content written to steer an "
                                            "agent rather than to be remembered",
    Tombstone.Reason.USER_REQUESTED: "the user asked for it to be forgotten",
    Tombstone.Reason.OBSOLETE: "it was obsolete: newer knowledge replaced it",
    Tombstone.Reason.GLYMPHATIC_CLEARANCE: "the system cleared it as weak and unused (glymphatic clearance)",
    Tombstone.Reason.MERGED: "it was merged with near-duplicates into one node",
}
RECOVERY_INSTRUCTIONS = (
    "To bring a node back as it was (same id, vector, edges, profile and notes), call restore_concept with its "
    "node_id, or restore_from_hash with the reversal_hash its forget_concept or merge_concepts answer gave (preview "
    "first: preview true shows what the undo changes). Only whoever removed a node can restore it, before its "
    "restore_deadline; a node that is not recoverable is past it, or its undo was used."
)


@dataclass(frozen=True)
class TombstoneHit:
    tombstone: Tombstone
    similarity: float
    recoverable: bool
    # The node a merged-away node went into (the merge's undo names it last).
    merged_into: str | None = None

    @property
    def deleted_by(self) -> str:
        return self.tombstone.actor_label or ("user" if self.tombstone.actor_id else "system")

    @property
    def explanation(self) -> str:
        tombstone = self.tombstone
        why = EXPLANATIONS[tombstone.reason]
        if tombstone.reason == Tombstone.Reason.MERGED and self.merged_into:
            why += f" (node {self.merged_into})"
        state = (f"It can be restored until {tombstone.deadline.isoformat()}." if self.recoverable
                 else "It can no longer be restored by an undo.")
        return f"Removed by {self.deleted_by} on {tombstone.created_at.date().isoformat()} because {why}. {state}"


def _undo_usable(actor: User) -> Q:
    """A tombstone whose undo the actor may still run: their own, unused and not expired."""
    return Q(undo__isnull=False, undo__owner=actor, undo__used_at__isnull=True, undo__expires_at__gt=timezone.now())


def tombstone_recoverable(*, actor: User, node_id) -> bool:
    """Whether restore_concept can bring this node back exactly (its edges too): it is in the trash and its undo is
    the actor's, unused and not expired."""
    return Tombstone.objects.filter(_undo_usable(actor), memory_id=node_id, memory__deleted_at__isnull=False).exists()


def tombstone_deadline(*, actor: User, node_id) -> datetime | None:
    """When the purge deletes this forgotten node for good; None when it is not a forgotten node the actor may read."""
    return (Tombstone.objects.filter(memory_id=node_id, memory__cube_id__in=cube_ids_readable(actor=actor))
            .values_list("deadline", flat=True).first())


def tombstones_readable(*, actor: User) -> QuerySet[Tombstone]:
    """The tombstones of cubes the actor may read, with their memories, each annotated ``recoverable`` (the actor's
    own undo, unused and not expired) and ``undo_nodes`` (the undo's nodes: a merge names the merged node last)."""
    usable = _undo_usable(actor)
    # A node restored outside the undo (the dashboard's trash) is live again: its tombstone waits for the purge.
    return (Tombstone.objects.filter(memory__cube_id__in=cube_ids_readable(actor=actor),
                                     memory__deleted_at__isnull=False)
            .select_related("memory")
            .annotate(recoverable=Case(When(usable, then=Value(True)), default=Value(False),
                                       output_field=BooleanField()),
                      undo_nodes=F("undo__node_ids")))


def tombstones_search(*, actor: User, query, deletion_reason: str = "all", deleted_after=None,
                      top_k: int | None = None) -> list[TombstoneHit]:
    """The actor's readable tombstones nearest ``query`` in meaning (the nodes' kept content vectors), nearest
    first. One query, whatever the number of tombstones."""
    query = clean_text(query, field_name="query", max_chars=MAX_QUERY_CHARS)
    if not query:
        raise InvalidInput("query is empty: say what you remember of the node.", field="query")
    if deletion_reason not in SEARCHABLE_REASONS:
        raise InvalidInput(f"deletion_reason must be one of {', '.join(SEARCHABLE_REASONS)}.", field="deletion_reason")
    top_k = TOMBSTONE_TOP_K.clean(top_k, field="top_k")
    after = clean_datetime(deleted_after, field_name="deleted_after")
    tombstones = tombstones_readable(actor=actor)
    if deletion_reason != "all":
        tombstones = tombstones.filter(reason=REASON_FILTERS.get(deletion_reason, deletion_reason))
    if after is not None:
        tombstones = tombstones.filter(created_at__gt=after)
    rows = (tombstones.annotate(distance=CosineDistance(F("memory__vector__embedding"), HalfVector(embed_query(query))))
            .order_by("distance", "-created_at")[:top_k])
    return [TombstoneHit(tombstone=row, similarity=0.0 if row.distance is None else round(1.0 - float(row.distance), 4),
                         recoverable=row.recoverable,
                         merged_into=str(row.undo_nodes[-1]) if row.reason == Tombstone.Reason.MERGED and row.undo_nodes
                         else None)
            for row in rows]


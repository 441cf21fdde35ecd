"""A node's lineage and the system log, both read from the Events that apps/cognition/lineage.py records for every
memory change (and that cognition's own services write for merges, forgets, annotations and dreams).

Merges: a merge's Event lists the merged node first and its sources after it in ``node_ids``, or names them in
``detail`` (``merged_into`` or ``merged_node_id``, and ``merged_from``), which wins when present (curation writes one
such Event on each node of a merge). So a node's ``merged_from`` are the
sources of merges into it, and its ``forked_to`` the nodes it was merged into or that were derived from it: a
dream's or a summary's Event lists the node it made first and the nodes it came from after it, naming those in
``detail.derived_from``.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.accounts.models import User
from apps.cognition.limits import LINEAGE_DEPTH, LOG_DEFAULT_SINCE, LOG_LIMIT, LOG_MAX_LOOKBACK_DAYS
from apps.cognition.models import Annotation, Event, UndoEntry
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import Memory
from apps.memories.selectors import memories_readable

A = Event.Action
# Context Graph's change types (the seed family's get_node_lineage) for each of Engram's actions: edits, links and
# re-embeddings are annotations of the node in that vocabulary; every way of taking a node away is a prune.
CHANGE_TYPES = {
    A.CREATED: "created", A.MERGED: "merged", A.ANNOTATED: "annotated", A.UPDATED: "annotated",
    A.LINKED: "annotated", A.UNLINKED: "annotated", A.REEMBEDDED: "annotated", A.DREAMED: "dreamed",
    A.GARDENED: "dreamed", A.BOOSTED: "boosted", A.DELETED: "pruned", A.FORGOTTEN: "pruned", A.PRUNED: "pruned", A.PURGED: "pruned",
    A.QUARANTINED: "pruned", A.ADVERSARIAL_BLOCK: "pruned", A.RESTORED: "restored",
}
LINEAGE_CHANGE_TYPES = ("created", "merged", "annotated", "dreamed", "boosted", "pruned", "restored")

# get_system_logs' log types and the actions each covers; "all" is all of them, and the restores that undid them.
LOG_TYPES = {
    "all": None,
    "quarantine": (A.QUARANTINED,),
    "prune": (A.PRUNED, A.FORGOTTEN, A.DELETED, A.PURGED),
    "merge": (A.MERGED,),
    "dream_actions": (A.DREAMED, A.GARDENED),  # the gardener is the waking half of the graph's own curation
    "adversarial_blocks": (A.ADVERSARIAL_BLOCK,),
}
LOGGED_ACTIONS = (*(action for actions in LOG_TYPES.values() if actions for action in actions), A.RESTORED)
# Each logged action's name in the log.
LOG_ACTIONS = {A.QUARANTINED: "quarantine", A.PRUNED: "prune", A.FORGOTTEN: "prune", A.DELETED: "prune",
               A.PURGED: "prune", A.MERGED: "merge", A.DREAMED: "dream_consolidation",
               A.GARDENED: "dream_consolidation", A.ADVERSARIAL_BLOCK: "adversarial_block", A.RESTORED: "restore"}
LOG_ENTRY_ACTIONS = ("quarantine", "prune", "merge", "dream_consolidation", "adversarial_block", "restore")

_RELATIVE = re.compile(r"^-(\d{1,7})([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_node_id(node_id, *, field: str = "node_id") -> str:
    try:
        return str(uuid.UUID(str(node_id)))
    except ValueError:
        raise InvalidInput(f"{field} must be a node's UUID, as search_graph or store_memory give it.",
                           field=field) from None


def parse_since(since: str | None, *, now: datetime) -> datetime:
    """An ISO 8601 date-time (a naive one is UTC) or a span back from now: -30m, -24h, -7d, -2w."""
    text = (since or LOG_DEFAULT_SINCE).strip()
    relative = _RELATIVE.match(text)
    if relative:
        seconds = int(relative.group(1)) * _UNIT_SECONDS[relative.group(2)]
        if seconds > LOG_MAX_LOOKBACK_DAYS * 86400:
            raise InvalidInput(f"since reaches back more than {LOG_MAX_LOOKBACK_DAYS} days: give a shorter span or "
                               "a date-time.", field="since")
        return now - timedelta(seconds=seconds)
    try:
        moment = parse_datetime(text)
    except ValueError:
        moment = None
    if moment is None:
        raise InvalidInput("since must be an ISO 8601 date-time (2026-01-31T12:00:00Z) or a span back from now "
                           "(-30m, -24h, -7d, -2w).", field="since")
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, dt_timezone.utc)


@dataclass(frozen=True)
class Lineage:
    memory: Memory
    events: list[Event]
    total: int
    merged_from: list[str]
    forked_to: list[str]


def node_lineage(*, actor: User, node_id, depth: int | None = None) -> Lineage:
    """The latest ``depth`` changes of a node the actor may read (a deleted one too), newest first, with the nodes
    merged into it and those made from it. Another user's node is not found, as an unknown one is."""
    depth = LINEAGE_DEPTH.clean(depth, field="depth")
    node = parse_node_id(node_id)
    memory = memories_readable(actor=actor, include_deleted=True).filter(pk=node).first()
    if memory is None:
        raise NotFound(f"Node {node} not found: it is not in a cube you can read.", extra={"field": "node_id"})
    about = Event.objects.filter(node_ids__contains=[memory.pk])
    events = list(about.select_related("actor").order_by("-created_at", "-id")[:depth])
    total = len(events) if len(events) < depth else about.count()
    merged_from, forked_to = _merge_relatives(node, about.filter(Q(action=A.MERGED) | Q(detail__has_key="derived_from"))
                                              .order_by("created_at", "id").values_list("action", "node_ids", "detail"))
    return Lineage(memory=memory, events=events, total=total, merged_from=merged_from, forked_to=forked_to)


@dataclass(frozen=True)
class NodeRecord:
    lineage: Lineage
    annotations: list[Annotation]


def node_record(*, actor: User, node_id, depth: int | None = None) -> NodeRecord:
    """A readable node's lineage (node_lineage) and its annotations, oldest first, for the memory's page."""
    lineage = node_lineage(actor=actor, node_id=node_id, depth=depth)
    annotations = list(Annotation.objects.filter(memory=lineage.memory).select_related("reference")
                       .order_by("created_at", "id"))
    return NodeRecord(lineage=lineage, annotations=annotations)


def _merge_relatives(node: str, rows) -> tuple[list[str], list[str]]:
    merged_from: list[str] = []
    forked_to: list[str] = []
    for action, node_ids, detail in rows:
        ids = [str(value) for value in node_ids]
        if action == A.MERGED:
            into = str(detail.get("merged_into") or detail.get("merged_node_id") or ids[0])
            sources = [str(value) for value in detail.get("merged_from") or ids[1:]]
            if into == node:
                merged_from.extend(source for source in sources if source not in merged_from)
            elif node in sources and into not in forked_to:
                forked_to.append(into)
        elif node in {str(value) for value in detail.get("derived_from", [])} and ids[0] != node:
            if ids[0] not in forked_to:
                forked_to.append(ids[0])
    return merged_from, forked_to


# A curation writes its own Event beside the plain deletes it makes (memory_delete reports them too), in the same
# transaction: the log tells the curation, not the deletes under it (Event.transaction_id says which they are).
CURATIONS = (A.FORGOTTEN, A.MERGED, A.PRUNED, A.QUARANTINED)
# Events read for one page of the log: the deletes a curation explains are left out after reading.
EVENTS_PER_ENTRY = 4


@dataclass(frozen=True)
class LogEntry:
    # The newest Event of the entry (a curation of several nodes has one Event on each, sharing its reversal hash).
    event: Event
    node_ids: list
    action: str
    recoverable: bool
    recovery_tool: str | None
    details: str


@dataclass(frozen=True)
class SystemLog:
    entries: list[LogEntry]
    since: datetime
    log_type: str


def system_log(*, actor: User, log_type: str = "all", node_id=None, since: str | None = None,
               limit: int | None = None, now: datetime | None = None) -> SystemLog:
    """What was taken out of, merged in or changed by the system in the actor's own graph since ``since``, newest
    first, one entry per change (however many nodes it touched), each with whether it can still be undone and with
    which tool. Three queries."""
    if log_type not in LOG_TYPES:
        raise InvalidInput(f"log_type must be one of {', '.join(LOG_TYPES)}.", field="log_type")
    limit = LOG_LIMIT.clean(limit, field="limit")
    now = now or timezone.now()
    start = parse_since(since, now=now)
    wanted = set(LOG_TYPES[log_type] or LOGGED_ACTIONS)
    events = Event.objects.filter(owner=actor, created_at__gte=start, action__in=wanted | set(CURATIONS))
    if node_id is not None:
        events = events.filter(node_ids__contains=[parse_node_id(node_id)])
    events = list(events.select_related("actor").order_by("-created_at", "-id")[:limit * EVENTS_PER_ENTRY])
    changes = [(event, nodes) for event, nodes in _one_per_change(events) if event.action in wanted][:limit]
    hashes = {event.reversal_hash for event, _ in changes if event.reversal_hash}
    undoable = set(UndoEntry.objects.filter(
        owner=actor, reversal_hash__in=hashes, used_at__isnull=True, expires_at__gt=now,
    ).values_list("reversal_hash", flat=True)) if hashes else set()
    node_ids = {node for _, nodes in changes for node in nodes}
    states = {pk: (deleted_at, deadline) for pk, deleted_at, deadline in
              Memory.objects.filter(pk__in=node_ids, owner=actor)
              .values_list("pk", "deleted_at", "tombstone__deadline")} if node_ids else {}
    return SystemLog(entries=[_entry(event, nodes, undoable, states, now) for event, nodes in changes], since=start,
                     log_type=log_type)


def _one_per_change(events: list[Event]) -> list[tuple[Event, list]]:
    """The Events as changes, newest first: the Events of one curation (same action and reversal hash) as one with
    all their nodes (a merged node first), and the deletes a curation made beside its own Event (on its node, in its
    transaction) left out; any other delete of the node, however soon after, is a change of its own."""
    curated: set[tuple] = {(node, event.transaction_id) for event in events if event.action in CURATIONS
                           and event.transaction_id is not None for node in event.node_ids}
    changes: dict = {}
    for event in events:
        if event.action in (A.DELETED, A.PURGED) and any(
                (node, event.transaction_id) in curated for node in event.node_ids):
            continue
        key = (event.action, event.reversal_hash) if event.reversal_hash else event.pk
        _, nodes = changes.setdefault(key, (event, []))
        nodes.extend(node for node in event.node_ids if node not in nodes)
    return [(event, _merged_first(event, nodes)) for event, nodes in changes.values()]


def _merged_first(event: Event, nodes: list) -> list:
    into = (event.detail or {}).get("merged_into") or (event.detail or {}).get("merged_node_id")
    return sorted(nodes, key=lambda node: (str(node) != str(into), str(node)))


def _entry(event: Event, nodes: list, undoable: set[str], states: dict, now: datetime) -> LogEntry:
    action = LOG_ACTIONS[event.action]

    def entry(recoverable: bool, tool: str | None, details: str) -> LogEntry:
        return LogEntry(event, nodes, action, recoverable, tool, details)

    if event.reversal_hash in undoable:
        return entry(True, "restore_from_hash", "Undo with restore_from_hash until its snapshot expires.")
    if event.action == A.ADVERSARIAL_BLOCK and (event.detail or {}).get("quarantined"):
        return entry(True, None, "Stored quarantined: out of retrieval until a reviewer releases it "
                                 "(POST /api/v1/cognition/quarantine/<node_id>/release/) or forgets it (forget_concept).")
    if event.action in (A.RESTORED, A.DREAMED, A.GARDENED, A.ADVERSARIAL_BLOCK):
        return entry(False, None, _plain_details(event))
    kept = [states[node] for node in nodes if node in states and states[node][0] is not None]
    if not kept:
        gone = all(node not in states for node in nodes)
        return entry(False, None, "Deleted for good: nothing is left to restore." if gone else "Already restored.")
    deadline = next((deadline for _, deadline in kept if deadline is not None), None)
    if deadline is not None and deadline > now:
        return entry(True, "restore_concept",
                     f"Kept as a tombstone until {deadline:%Y-%m-%d %H:%M} UTC; restore_concept brings it back.")
    return entry(True, None, "Soft-deleted: restore it from the memory's page or POST /api/v1/memories/<id>/restore/.")


def _plain_details(event: Event) -> str:
    if event.action == A.RESTORED:
        return "Brought back: nothing to recover."
    if event.action == A.DREAMED:
        return ("A dream changed links, weights or summaries; its undo (restore_from_hash with the run's reversal "
                "hash) was applied already or has expired.")
    if event.action == A.GARDENED:
        return ("A gardener cycle pruned links, merged duplicates, cut a causal loop, cleared orphans or scaled "
                "importance; its undo (restore_from_hash with the cycle's reversal hash) was applied already or has "
                "expired.")
    return "The content was refused before it was stored: nothing was kept."

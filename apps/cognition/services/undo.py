"""The undo log: what a merge, a forget or a dream changed, row by row, and putting it back.

A snapshot holds each affected memory row with its id and every field, its vector (embedding and token count), its
links both ways (type, weight, traversal count, timestamps, link id), its NodeProfile and its annotations, as
Django's serializer writes rows, plus the rows the operation made (a merged node). An operation that only links (a
merge declined because the priors disagree: its relational edges) keeps just the links it overwrote and the ids of
those it made. A dream's (services/dream/) keeps the links it changed as they were before, the ids of those it made,
the snapshots of the merges it made (whose own undos it covers), the summaries it rewrote as they were, the
scratchpad items it committed and the cubes it wrote. Rows are put back with the
deserializer's raw save, which keeps every field as it was (auto_now timestamps included): the restored rows equal
the snapshot field by field. A snapshot is reached by its unguessable reversal hash, by its owner only, once, until
it expires (UNDO_RETENTION_DAYS). In curator mode (the admin's, services/curators.py) a curator applies an owner's
undo in the owner's graph; the records (the restored Events) name the curator.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core import serializers
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.limits import UNDO_RETENTION_DAYS
from apps.cognition.lineage import changes_by
from apps.cognition.models import (
    ActivityState, Annotation, BlindSpot, ConsolidationRun, DreamList, NodeProfile, ScratchpadItem, Tombstone, UndoEntry,
    UndoPart,
)
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.gardener.limits import LEASE_IDLE_SECONDS as GARDENER_LEASE_SECONDS
from apps.core.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from apps.cubes.access import cube_ids_writable
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.services import memory_delete

SNAPSHOT_VERSION = 1
# Operations whose snapshot folds in the undos of the merges and forgets they made (``covers``).
COVERING = (UndoEntry.Operation.DREAM, UndoEntry.Operation.GARDENER)
# Computed by PostgreSQL from the content: never written, so never kept.
_GENERATED = {"search_vector"}
# The row sets of a snapshot, in the order they are put back (each after the rows it refers to).
_ROWS = (("memories", Memory), ("vectors", MemoryVector), ("profiles", NodeProfile), ("links", MemoryLink),
         ("annotations", Annotation), ("scratchpad", ScratchpadItem))


def retention_deadline(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(days=UNDO_RETENTION_DAYS)


def _json_value(value):
    # Full precision: DjangoJSONEncoder would cut datetimes to milliseconds, and then no restore is exact.
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"cannot keep {type(value).__name__} in a snapshot")


def _rows(queryset) -> list[dict]:
    rows = serializers.serialize("python", queryset)
    for row in rows:
        for name in _GENERATED:
            row["fields"].pop(name, None)
    return json.loads(json.dumps(rows, default=_json_value))


def link_rows(link_ids) -> list[dict]:
    """These links as a snapshot keeps them (a dream snapshots each link before its first change)."""
    return _rows(MemoryLink.objects.filter(pk__in=list(link_ids)).order_by("pk"))


def scratchpad_rows(item_ids) -> list[dict]:
    """These scratchpad items as a snapshot keeps them (a dream commits them to the graph and removes them)."""
    return _rows(ScratchpadItem.objects.filter(pk__in=list(item_ids)).order_by("pk"))
def memory_rows(memory_ids) -> list[dict]:
    """These memory rows as a snapshot keeps them (a gardener cycle snapshots each node before scaling it)."""
    return _rows(Memory.objects.filter(pk__in=list(memory_ids)).order_by("pk"))


def snapshot_take(memory_ids: list) -> dict:
    """Every row of these memories that a merge or forget may change, as the undo puts it back."""
    ids = [str(memory_id) for memory_id in memory_ids]
    return {
        "version": SNAPSHOT_VERSION,
        "memories": _rows(Memory.objects.filter(pk__in=ids).order_by("pk")),
        "vectors": _rows(MemoryVector.objects.filter(memory_id__in=ids).order_by("pk")),
        "profiles": _rows(NodeProfile.objects.filter(memory_id__in=ids).order_by("pk")),
        "links": _rows(MemoryLink.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)).order_by("pk")),
        "annotations": _rows(Annotation.objects.filter(memory_id__in=ids).order_by("pk")),
        # Rows the operation makes (a merged node): the undo removes them. Filled in by the operation.
        "made": {"memories": []},
    }


def snapshot_links(*, pairs: list[tuple], cube_ids: list[str]) -> dict:
    """The links on these (source, target) pairs as they are now, locked, for an operation that only links: the undo
    puts each back exactly and removes the links the operation made (``made.links``, filled in by it)."""
    on_pairs = Q()
    for source_id, target_id in pairs:
        on_pairs |= Q(source_id=source_id, target_id=target_id)
    return {
        "version": SNAPSHOT_VERSION, "memories": [], "vectors": [], "profiles": [], "annotations": [],
        "links": _rows(MemoryLink.objects.select_for_update().filter(on_pairs).order_by("pk")),
        "made": {"memories": [], "links": []},
        # No memory row names the cube, which the undo's writer must still be able to write.
        "cubes": sorted({str(cube_id) for cube_id in cube_ids}),
    }


def undo_record(*, actor: User, operation: str, node_ids: list, snapshot: dict, now: datetime | None = None
                ) -> UndoEntry:
    """Keep a snapshot under a new unguessable hash, for the actor, until the retention deadline."""
    return UndoEntry.objects.create(
        reversal_hash=secrets.token_hex(32), owner=actor, operation=operation,
        node_ids=[str(node_id) for node_id in node_ids], snapshot=snapshot, expires_at=retention_deadline(now),
    )


@dataclass(frozen=True)
class UndoPlan:
    """What executing an undo would do, judged against the graph as it is now."""

    entry: UndoEntry
    # Memories that come back (all of the snapshot's), and those of them that are hidden or gone now.
    restored_nodes: list[str]
    added_nodes: list[str]
    # Links the undo brings back (removed by the operation, both ends there afterwards) and those it cannot (the
    # other end is gone for good).
    restored_edges: int
    lost_edges: int
    # Rows the operation made that the undo removes, with what hangs on them now.
    removed_nodes: list[str]
    removed_links: int
    removed_annotations: int
    # Live rows the undo changes back: {node_id: [field names]}.
    changed: dict[str, list[str]]
    digest: str

    def as_dict(self) -> dict:
        return {
            "adds": {"nodes": self.added_nodes, "edges": self.restored_edges},
            "removes": {"nodes": self.removed_nodes, "edges": self.removed_links,
                        "annotations": self.removed_annotations},
            "changes": [{"node_id": node_id, "fields": fields} for node_id, fields in self.changed.items()],
            "edges_lost": self.lost_edges,
        }


def undo_part_add(*, entry_id: str, part: dict) -> int:
    """Append a batch's part to a growing snapshot (a dream's, a gardener cycle's), in the batch's transaction: the
    rows the snapshot did not hold yet, ``made`` ids, ``covers`` and ``cubes``, as a snapshot holds them. Its number
    (seq) is the next after the parts committed: the entry's row is locked to the end of the transaction, so that two
    writers (a worker that lost its lease and the one that took it over) append one after the other, never both under
    one number."""
    UndoEntry.objects.select_for_update().filter(pk=entry_id).values_list("pk", flat=True).get()
    last = UndoPart.objects.filter(entry_id=entry_id).aggregate(last=Max("seq"))["last"]
    seq = 0 if last is None else last + 1
    UndoPart.objects.create(entry_id=entry_id, seq=seq, snapshot=part)
    return seq


def snapshot_join(snapshot: dict, part: dict) -> dict:
    """The snapshot with a part folded in (in place): its rows after the snapshot's, its ids added."""
    for name, _ in _ROWS:
        if part.get(name):
            snapshot.setdefault(name, []).extend(part[name])
    made = snapshot.setdefault("made", {"memories": []})
    for name, ids in part.get("made", {}).items():
        made.setdefault(name, []).extend(ids)
    snapshot.setdefault("covers", []).extend(part.get("covers", []))
    snapshot.setdefault("cubes", []).extend(part.get("cubes", []))
    return snapshot


def _whole(entry: UndoEntry) -> UndoEntry:
    """The entry with its parts folded into its snapshot, in the order they were written (its ids sorted)."""
    if entry.operation in COVERING:
        snapshot = entry.snapshot
        for part in UndoPart.objects.filter(entry=entry).order_by("seq").values_list("snapshot", flat=True):
            snapshot_join(snapshot, part)
        for name, ids in snapshot.get("made", {}).items():
            snapshot["made"][name] = sorted(set(ids))
        snapshot["cubes"] = sorted(set(snapshot.get("cubes", [])))
    return entry


def _clean_hash(reversal_hash) -> str:
    if not isinstance(reversal_hash, str) or not reversal_hash.strip():
        raise InvalidInput("reversal_hash must be the hash a merge_concepts or forget_concept answer gave.",
                           field="reversal_hash")
    return reversal_hash.strip()


def _entry_for(*, actor: User, reversal_hash, lock: bool = False) -> UndoEntry:
    entries = UndoEntry.objects.select_for_update() if lock else UndoEntry.objects
    entry = entries.filter(reversal_hash=_clean_hash(reversal_hash), owner=actor).first()
    if entry is None:
        raise NotFound("Unknown reversal_hash: no merge or forget of yours has it.", extra={
            "field": "reversal_hash",
            "suggestion": "Use the reversal_hash from your own merge_concepts or forget_concept answer; "
                          "search_tombstones lists what can come back."})
    if entry.used_at is not None:
        raise InvalidInput(f"This reversal_hash was used already, at {entry.used_at.isoformat()}: an undo runs once.",
                           field="reversal_hash")
    if entry.expires_at <= timezone.now():
        raise InvalidInput(f"This reversal_hash expired at {entry.expires_at.isoformat()}: undo is kept "
                           f"{UNDO_RETENTION_DAYS} days.", field="reversal_hash")
    return _whole(entry)


def _cube_ids(entry: UndoEntry) -> set[str]:
    return {row["fields"]["cube"] for row in entry.snapshot["memories"]} | set(entry.snapshot.get("cubes", []))


def _check_not_dreaming(entry: UndoEntry) -> None:
    """A dream's (or a gardener cycle's) undo waits until it has stopped: its snapshot still grows while it runs."""
    if entry.operation == UndoEntry.Operation.DREAM and ConsolidationRun.objects.filter(
            reversal_hash=entry.reversal_hash, status__in=ConsolidationRun.ACTIVE).exists():
        raise Conflict("This dream is still running, so it cannot be undone yet.", extra={
            "field": "reversal_hash", "suggestion": "Wait for it to finish (or query, which wakes it), then undo."})
    if entry.operation == UndoEntry.Operation.GARDENER and ActivityState.objects.filter(
            cycle_hash=entry.reversal_hash, cycle_heartbeat_at__gte=timezone.now() - timedelta(
                seconds=GARDENER_LEASE_SECONDS)).exists():
        raise Conflict("This gardener cycle is still running, so it cannot be undone yet.", extra={
            "field": "reversal_hash", "suggestion": "Wait for it to finish (or query, which stops it), then undo."})


def _check_writable(actor: User, entry: UndoEntry) -> None:
    writable = set(cube_ids_writable(actor=actor).filter(id__in=_cube_ids(entry)).values_list("id", flat=True))
    if not _cube_ids(entry) <= writable:
        raise PermissionDenied("You can no longer write the cube these nodes are in, so they cannot be restored.",
                               extra={"field": "reversal_hash"})


def _plan(entry: UndoEntry) -> UndoPlan:
    snapshot = entry.snapshot
    node_ids = [row["pk"] for row in snapshot["memories"]]
    made = [str(memory_id) for memory_id in snapshot["made"]["memories"]]
    current = {row["pk"]: row["fields"] for row in _rows(Memory.objects.filter(pk__in=node_ids + made))}
    live = {pk for pk, fields in current.items() if fields["deleted_at"] is None}
    added = [pk for pk in node_ids if pk not in live]
    changed = {}
    for row in snapshot["memories"]:
        now_fields = current.get(row["pk"])
        if now_fields is not None and row["pk"] in live:
            fields = sorted(name for name, value in row["fields"].items() if now_fields.get(name) != value)
            if fields:
                changed[row["pk"]] = fields
    removed = [pk for pk in made if pk in current]
    # After the undo these exist: the snapshot's memories, and every other memory still present now.
    others = {str(pk) for row in snapshot["links"] for pk in (row["fields"]["source"], row["fields"]["target"])}
    present = {str(pk) for pk in Memory.objects.filter(pk__in=others - set(made)).values_list("pk", flat=True)}
    present |= set(node_ids)
    restorable = [row for row in snapshot["links"]
                  if row["fields"]["source"] in present and row["fields"]["target"] in present]
    # A link standing as it was (a forget without cascade_edges left it) is rewritten, not brought back; one whose
    # type or weight differs now (a relational edge overwrote it) is brought back.
    standing = {pk: (link_type, weight, updated_at) for pk, link_type, weight, updated_at in MemoryLink.objects.filter(
        pk__in=[row["pk"] for row in restorable]).values_list("pk", "link_type", "weight", "updated_at")}
    brought_back = [row for row in restorable if row["pk"] not in standing
                    or standing[row["pk"]][:2] != (row["fields"]["link_type"], row["fields"]["weight"])]
    hanging = MemoryLink.objects.filter(Q(source_id__in=removed) | Q(target_id__in=removed)
                                        | Q(pk__in=snapshot["made"].get("links", [])))
    removed_links = sorted((str(link[0]), str(link[1]), link[2]) for link in hanging.values_list(
        "source_id", "target_id", "weight"))
    removed_annotations = sorted(str(pk) for pk in Annotation.objects.filter(memory_id__in=removed)
                                 .values_list("pk", flat=True))
    # The digest covers the plan and the state it was judged on: any write to these rows since changes it.
    state = {"rows": {pk: current[pk].get("updated_at") for pk in sorted(current)}, "links": removed_links,
             "annotations": removed_annotations, "added": added, "changed": changed,
             "restorable": sorted(row["pk"] for row in restorable),
             "standing": sorted((pk, str(updated_at)) for pk, (_, _, updated_at) in standing.items())}
    digest = hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()
    return UndoPlan(entry=entry, restored_nodes=node_ids, added_nodes=added,
                    restored_edges=len(brought_back),
                    lost_edges=len(snapshot["links"]) - len(restorable), removed_nodes=removed,
                    removed_links=len(removed_links), removed_annotations=len(removed_annotations), changed=changed,
                    digest=digest)


@dataclass(frozen=True)
class UndoResult:
    plan: UndoPlan
    executed: bool


def _hash_owner(actor: User, reversal_hash, curator: bool) -> User:
    return curator_scope(actor=actor, curator=curator,
                         rows=UndoEntry.objects.filter(pk=_clean_hash(reversal_hash)))


def undo_apply(*, actor: User, reversal_hash, preview: bool = True, curator: bool = False) -> UndoResult:
    """Preview (the default): what the undo would add, remove and change, changing nothing in the graph (the
    preview's digest is kept, so that an undo whose plan has changed since is refused). Execute: put every row of
    the snapshot back as it was, remove what the operation made, and use up the hash. ``curator``: any user's
    undo, applied in its owner's graph and recorded as the actor's."""
    owner = _hash_owner(actor, reversal_hash, curator)
    return _apply(owner, actor, reversal_hash, preview=preview)


def undo_plan(*, actor: User, reversal_hash, curator: bool = False) -> UndoPlan:
    """What executing the undo would do now, for a page that only shows it (the admin's): unlike a preview it keeps
    no digest, so looking at an undo never arms the check that refuses a later apply."""
    owner = _hash_owner(actor, reversal_hash, curator)
    entry = _entry_for(actor=owner, reversal_hash=reversal_hash)
    _check_writable(owner, entry)
    return _plan(entry)


def _apply(owner: User, by: User, reversal_hash, *, preview: bool) -> UndoResult:
    """undo_apply for the undo's ``owner`` (their access decides), recorded as ``by``'s."""
    if preview:
        entry = _entry_for(actor=owner, reversal_hash=reversal_hash)
        _check_writable(owner, entry)
        _check_not_dreaming(entry)
        plan = _plan(entry)
        UndoEntry.objects.filter(pk=entry.pk).update(previewed_digest=plan.digest)
        return UndoResult(plan=plan, executed=False)
    with transaction.atomic():
        entry = _entry_for(actor=owner, reversal_hash=reversal_hash, lock=True)
        _check_writable(owner, entry)
        _check_not_dreaming(entry)
        plan = _plan(entry)
        if entry.previewed_digest and entry.previewed_digest != plan.digest:
            raise Conflict("The graph changed since this undo was previewed, so it would no longer do what the "
                           "preview showed.", extra={
                               "field": "reversal_hash",
                               "suggestion": "Preview it again (preview: true), check the plan, then execute."})
        _execute(owner, by, entry, plan)
    return UndoResult(plan=plan, executed=True)


def _execute(owner: User, by: User, entry: UndoEntry, plan: UndoPlan) -> None:
    snapshot = entry.snapshot
    with changes_by(by if by != owner else None):
        removed = _remove_made(owner, entry, plan.removed_nodes)
    Tombstone.objects.filter(memory_id__in=plan.restored_nodes).delete()
    made_links = list(MemoryLink.objects.filter(pk__in=snapshot["made"].get("links", [])).select_related("source"))
    MemoryLink.objects.filter(pk__in=[link.pk for link in made_links]).delete()
    links = snapshot["links"]
    # A link made since between the same two nodes would stand in the way of the original (one per pair).
    pairs = {(row["fields"]["source"], row["fields"]["target"]) for row in links}
    kept = {row["pk"] for row in links}
    in_the_way = [link.pk for link in MemoryLink.objects.filter(
        source_id__in={source for source, _ in pairs}, target_id__in={target for _, target in pairs},
    ).exclude(pk__in=kept) if (str(link.source_id), str(link.target_id)) in pairs]
    MemoryLink.objects.filter(pk__in=in_the_way).delete()
    present = {str(pk) for pk in Memory.objects.filter(
        pk__in={pk for pair in pairs for pk in pair}).values_list("pk", flat=True)} | set(plan.restored_nodes)
    existing = set(Memory.objects.filter(pk__in={
        row["fields"]["reference"] for row in snapshot["annotations"] if row["fields"].get("reference")
    }).values_list("pk", flat=True))
    for name, model in _ROWS:
        rows = snapshot.get(name, [])  # a snapshot made before a row set existed has none of it
        if name == "links":
            rows = [row for row in rows if row["fields"]["source"] in present and row["fields"]["target"] in present]
        if name == "annotations":  # a referenced node that is gone for good leaves the note without its reference
            rows = [{**row, "fields": {**row["fields"], "reference": row["fields"]["reference"]
                                       if row["fields"].get("reference") and uuid.UUID(row["fields"]["reference"])
                                       in existing else None}} for row in rows]
        _put_back(model, rows)
    entry.used_at = timezone.now()
    entry.save(update_fields=["used_at"])
    if entry.operation in COVERING:
        # A dream's or a gardener cycle's undo covers the undos of the merges (and forgets) it made: nothing is left
        # for them to do.
        UndoEntry.objects.filter(owner=owner, reversal_hash__in=snapshot.get("covers", []), used_at__isnull=True
                                 ).update(used_at=entry.used_at)
    if entry.operation == UndoEntry.Operation.DREAM:
        # A dream's undo also takes its blind spots away and rolls the run back.
        BlindSpot.objects.filter(owner=owner, run__reversal_hash=entry.reversal_hash).delete()
        ConsolidationRun.objects.filter(owner=owner, reversal_hash=entry.reversal_hash).update(
            status=ConsolidationRun.Status.ROLLED_BACK, updated_at=entry.used_at)
        DreamList.objects.filter(run__owner=owner, run__reversal_hash=entry.reversal_hash).delete()
    # An undo of links only (or a dream's or cycle's, whose links join nodes it does not bring back) records them.
    if not plan.restored_nodes or entry.operation in COVERING:
        _report_relinked(by, made_links, [row for row in links if row["fields"]["source"] in present
                                          and row["fields"]["target"] in present])
    memories = list(Memory.objects.filter(pk__in=plan.restored_nodes))
    # Each record names its own node; the nodes the undo removed have their own (purged), so none lists them all.
    changes.report(Change(Action.RESTORED, str(memory.pk), memory.owner_id, by.pk,
                          {"reversal_hash": entry.reversal_hash, "operation": entry.operation,
                           "removed_count": len(plan.removed_nodes)})
                   for memory in memories)
    by_cube: dict[str, list[Memory]] = {}
    for memory in memories:
        by_cube.setdefault(str(memory.cube_id), []).append(memory)
    removed_by_cube: dict[str, list[str]] = {}
    for memory_id, cube_id in removed:
        removed_by_cube.setdefault(cube_id, []).append(memory_id)
    for cube_id, restored in by_cube.items():
        events.publish_after_commit(events.Kind.UNDO_APPLIED, cube_id, events.undo_applied(
            restored, removed_by_cube.get(cube_id, []), entry.operation))


def _remove_made(owner: User, entry: UndoEntry, node_ids: list[str]) -> list[tuple[str, str]]:
    """Delete for good the nodes the operation made, all at once (their vectors, links, profiles and notes go with
    them), each recorded as purged; the owner must still be able to write their cubes. Their (id, cube id)."""
    made = list(Memory.objects.filter(pk__in=node_ids).values_list("pk", "owner_id", "cube_id"))
    if not made:
        return []
    cubes = {cube_id for _, _, cube_id in made}
    if len(cube_ids_writable(actor=owner).filter(id__in=cubes)) < len(cubes):
        raise PermissionDenied("You can no longer write the cube of a node this undo would remove.",
                               extra={"field": "reversal_hash"})
    changes.report(Change(Action.PURGED, str(pk), owner_id, owner.pk,
                          {"reversal_hash": entry.reversal_hash, "operation": entry.operation, "reason": "undo"})
                   for pk, owner_id, _ in made)
    Memory.objects.filter(pk__in=[pk for pk, _, _ in made]).delete()
    for pk, _, cube_id in made:
        events.publish_after_commit(events.Kind.MEMORY_HARD_DELETED, cube_id, events.memory_removed(pk))
    return [(str(pk), str(cube_id)) for pk, _, cube_id in made]


# Rows a statement writes when putting a snapshot back.
_PUT_BACK_BATCH = 1000


def _put_back(model, rows: list[dict]) -> None:
    """Write these snapshot rows back exactly, in batches: an upsert on the primary key (a row the operation removed
    comes back, one it changed is overwritten), then its auto_now timestamps set back, which an insert stamps anew."""
    if not rows:
        return
    objects = [restored.object for restored in serializers.deserialize("python", rows)]
    stamped = [field for field in model._meta.concrete_fields
               if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)]
    stamps = [[getattr(obj, field.attname) for field in stamped] for obj in objects]
    written = [field.name for field in model._meta.concrete_fields if not field.primary_key and not field.generated]
    model.objects.bulk_create(objects, update_conflicts=True, unique_fields=["pk"], update_fields=written,
                              batch_size=_PUT_BACK_BATCH)
    if stamped:
        for obj, values in zip(objects, stamps):
            for field, value in zip(stamped, values):
                setattr(obj, field.attname, value)
        model.objects.bulk_update(objects, [field.name for field in stamped], batch_size=_PUT_BACK_BATCH)


def _node_uuid(node_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(node_id))
    except ValueError:
        raise InvalidInput("node_id must be a UUID.", field="node_id") from None


def _report_relinked(by: User, removed: list[MemoryLink], restored: list[dict]) -> None:
    """The links an undo of links removed and put back, in the lineage of the nodes they go out from, and each of
    those nodes redrawn on the live graph."""
    restored_links = [MemoryLink(source_id=uuid.UUID(row["fields"]["source"]),
                                 target_id=uuid.UUID(row["fields"]["target"]), link_type=row["fields"]["link_type"],
                                 weight=row["fields"]["weight"]) for row in restored]
    sources = {memory.pk: memory for memory in Memory.objects.filter(
        pk__in={link.source_id for link in [*removed, *restored_links]})}
    reported = [Change(action, str(link.source_id), sources[link.source_id].owner_id, by.pk,
                       {"links": changes.link_detail([link]), "reason": "undo"})
                for action, group in ((Action.UNLINKED, removed), (Action.LINKED, restored_links))
                for link in group if link.source_id in sources]
    changes.report(reported)
    for memory, payload in zip(sources.values(), events.memories_relinked(list(sources.values()))):
        events.publish_after_commit(events.Kind.MEMORY_RELINKED, memory.cube_id, payload)


def undo_for_node(*, actor: User, node_id) -> str:
    """The reversal hash of the operation that removed this node (its forget, or the merge it went into), for
    restore_concept: the node must be in the actor's trash, restorable, and the undo the actor's own."""
    memory_id = _node_uuid(node_id)
    tombstone = (Tombstone.objects.select_related("undo", "memory")
                 .filter(memory_id=memory_id, memory__cube_id__in=cube_ids_writable(actor=actor),
                         memory__deleted_at__isnull=False).first())
    if tombstone is None:
        raise NotFound(f"Node {memory_id} is not in your trash: it is live, gone for good, or not yours.",
                       extra={"field": "node_id", "suggestion": "search_tombstones lists the nodes you can restore."})
    undo = tombstone.undo
    if undo is None or undo.owner_id != actor.pk or undo.used_at is not None or undo.expires_at <= timezone.now():
        raise InvalidInput(f"Node {memory_id} cannot be restored by you: its undo has expired, or it belongs to "
                           f"whoever removed the node.", field="node_id")
    return undo.reversal_hash


def node_restore(*, actor: User, node_id, preview: bool = False, curator: bool = False) -> UndoResult:
    """restore_concept: undo the operation that removed this node of the actor's trash (see undo_for_node).
    ``curator``: of any user's trash, as the owner of the undo that removed it would, recorded as the actor's."""
    owner = curator_scope(actor=actor, curator=curator, rows=Tombstone.objects.filter(memory_id=_node_uuid(node_id)),
                          owner_field="undo__owner")
    return _apply(owner, actor, undo_for_node(actor=owner, node_id=node_id), preview=preview)

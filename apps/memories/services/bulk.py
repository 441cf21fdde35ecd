"""Changing many memories at once (the memories list's bulk actions): soft delete, restore, move to a cube, tag.

Each call is one transaction: every id is checked first (a memory of another user, or no memory, is "not found"; one
in a cube the actor may only read is refused) and then one statement writes them all. Each memory's change is
reported as a single edit's is (apps/memories/changes.py) and its live-graph event published after commit, so a node's
lineage and open graph pages see the same as after one-by-one edits. Each returns the memories it changed (those
already in the wanted state are left out), so that a caller can offer to undo exactly that.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.access import cube_get_writable, cube_ids_writable
from apps.graph import events
from apps.memories import changes
from apps.memories.changes import Action, Change
from apps.memories.models import Memory
from apps.memories.selectors import memories_readable, parse_memory_id
from apps.memories.validation import MAX_LIST_ITEMS, clean_labels

# How many memories one bulk call may name: a few pages of the list.
MAX_BULK_MEMORIES = 200
# Nodes that mirror an entity of another app (a Mind decision, a Thoughtbox thought) stay in their entity's cube.
MOVABLE_KINDS = (Memory.Kind.MEMORY, Memory.Kind.SUMMARY)


def _ids(memory_ids) -> list[str]:
    if isinstance(memory_ids, str) or not isinstance(memory_ids, (list, tuple)):
        raise InvalidInput("memory_ids must be a list of memory ids.", field="memory_ids")
    if not memory_ids:
        raise InvalidInput("memory_ids is empty: select at least one memory.", field="memory_ids")
    if len(memory_ids) > MAX_BULK_MEMORIES:
        raise InvalidInput(f"memory_ids names {len(memory_ids)} memories; one call takes at most {MAX_BULK_MEMORIES}.",
                           field="memory_ids")
    parsed = []
    for index, memory_id in enumerate(memory_ids):
        try:
            parsed.append(parse_memory_id(memory_id))
        except NotFound:
            raise InvalidInput(f"memory_ids[{index}] is not a memory id (a UUID): {memory_id!r}.",
                               field=f"memory_ids[{index}]") from None
    return list(dict.fromkeys(parsed))


def _writable_many(actor: User, memory_ids, *, include_deleted: bool) -> list[Memory]:
    """The named memories, locked, in the order named: each must be one the actor may read (else "not found", as
    for a single edit: nothing tells another user's memory from no memory) in a cube the actor may write."""
    wanted = _ids(memory_ids)
    found = {str(memory.pk): memory for memory in
             memories_readable(actor=actor, include_deleted=include_deleted).filter(pk__in=wanted)
             .select_for_update(of=("self",)).defer("search_vector")}
    for index, memory_id in enumerate(wanted):
        if memory_id not in found:
            raise NotFound(f"Memory {memory_id} not found: it is not one of your memories, or one shared with you"
                           f"{'' if include_deleted else ', that is live'}.", extra={"field": f"memory_ids[{index}]"})
    cubes = {memory.cube_id for memory in found.values()}
    writable = set(cube_ids_writable(actor=actor).filter(id__in=cubes).values_list("id", flat=True))
    for index, memory_id in enumerate(wanted):
        if found[memory_id].cube_id not in writable:
            raise PermissionDenied(f"Memory {memory_id} is in cube '{found[memory_id].cube_id}', which you may read "
                                   "but not change: nothing was changed.", extra={"field": f"memory_ids[{index}]"})
    return [found[memory_id] for memory_id in wanted]


@transaction.atomic
def memory_delete_many(*, actor: User, memory_ids) -> list[Memory]:
    """Soft delete each memory, as memory_delete does one (hidden, strength 0, everything kept for restoring).
    Returns the memories deleted now; those deleted already are left as they are."""
    memories = [memory for memory in _writable_many(actor, memory_ids, include_deleted=True)
                if memory.deleted_at is None]
    now = timezone.now()
    for memory in memories:
        memory.strength_before_delete, memory.strength = memory.strength, 0.0
        memory.deleted_at, memory.deleted_by, memory.updated_at = now, actor, now
    # One UPDATE whose right-hand sides read each row's old values: bulk_update's CASE per row cost more to build.
    Memory.objects.filter(pk__in=[memory.pk for memory in memories]).update(
        strength_before_delete=F("strength"), strength=0.0, deleted_at=now, deleted_by=actor, updated_at=now)
    changes.report(Change(Action.DELETED, str(memory.pk), memory.owner_id, actor.pk) for memory in memories)
    for memory in memories:
        events.publish_after_commit(events.Kind.MEMORY_SOFT_DELETED, memory.cube_id, events.memory_removed(memory.pk))
    return memories


@transaction.atomic
def memory_restore_many(*, actor: User, memory_ids) -> list[Memory]:
    """Restore each soft-deleted memory, as memory_restore does one. Returns the memories restored; live ones are
    left as they are."""
    memories = [memory for memory in _writable_many(actor, memory_ids, include_deleted=True)
                if memory.deleted_at is not None]
    now = timezone.now()
    for memory in memories:
        memory.strength = 1.0 if memory.strength_before_delete is None else memory.strength_before_delete
        memory.strength_before_delete = memory.deleted_at = memory.deleted_by = None
        memory.updated_at = now
    Memory.objects.filter(pk__in=[memory.pk for memory in memories]).update(
        strength=Coalesce(F("strength_before_delete"), Value(1.0)), strength_before_delete=None, deleted_at=None,
        deleted_by=None, updated_at=now)
    changes.report(Change(Action.RESTORED, str(memory.pk), memory.owner_id, actor.pk) for memory in memories)
    for memory in memories:
        events.publish_after_commit(events.Kind.MEMORY_RESTORED, memory.cube_id, events.memory_restored(memory))
    return memories


@dataclass(frozen=True)
class MoveResult:
    cube: object  # the cube moved into
    moved: list[Memory]
    # Where each moved memory was (memory id -> cube id), to move it back.
    origins: dict[str, str]
    # Memories left where they are: a node of another app's entity (MOVABLE_KINDS).
    kept: list[Memory]


@transaction.atomic
def memory_move_many(*, actor: User, memory_ids, cube_id: str) -> MoveResult:
    """Move live memories into ``cube_id``, a cube the actor may write. Their links stay (a link may join two
    cubes). Nodes of another app's entity (a Mind decision, a thought) stay in their entity's cube and come back
    in ``kept``; memories in that cube already are left out. In the live graph each moved memory leaves its old
    cube's graph and joins the new one's."""
    cube = cube_get_writable(actor=actor, cube_id=cube_id)
    memories = _writable_many(actor, memory_ids, include_deleted=False)
    kept = [memory for memory in memories if memory.kind not in MOVABLE_KINDS]
    moving = [memory for memory in memories if memory.kind in MOVABLE_KINDS and memory.cube_id != cube.pk]
    origins = {str(memory.pk): memory.cube_id for memory in moving}
    now = timezone.now()
    Memory.objects.filter(pk__in=[memory.pk for memory in moving]).update(cube=cube, updated_at=now)
    for memory in moving:
        memory.cube, memory.updated_at = cube, now
    changes.report(Change(Action.UPDATED, str(memory.pk), memory.owner_id, actor.pk,
                          {"fields": {"cube": [origins[str(memory.pk)], cube.pk]}}) for memory in moving)
    for memory in moving:
        events.publish_after_commit(events.Kind.MEMORY_HARD_DELETED, origins[str(memory.pk)],
                                    events.memory_removed(memory.pk))
    if moving:
        events.publish_after_commit(events.Kind.MEMORIES_CREATED, cube.pk, events.memories_created(moving))
    return MoveResult(cube=cube, moved=moving, origins=origins, kept=kept)


@transaction.atomic
def memory_tag_many(*, actor: User, memory_ids, add=None, remove=None) -> list[Memory]:
    """Add the tags ``add`` to each live memory and take the tags ``remove`` off it (a tag in both is added).
    Returns the memories whose tags changed."""
    add = clean_labels(add, field_name="add")
    remove = clean_labels(remove, field_name="remove")
    if not add and not remove:
        raise InvalidInput("Name a tag to add or to remove.", field="add")
    memories = _writable_many(actor, memory_ids, include_deleted=False)
    changed, before = [], {}
    for memory in memories:
        tags = [tag for tag in memory.tags if tag not in remove or tag in add]
        tags += [tag for tag in add if tag not in tags]
        if tags == memory.tags:
            continue
        if len(tags) > MAX_LIST_ITEMS:
            raise InvalidInput(f"Memory {memory.pk} would have {len(tags)} tags; a memory has at most "
                               f"{MAX_LIST_ITEMS}.", field="add")
        before[memory.pk], memory.tags = memory.tags, tags
        changed.append(memory)
    now = timezone.now()
    for memory in changed:
        memory.updated_at = now
    Memory.objects.bulk_update(changed, ["tags", "updated_at"])
    changes.report(Change(Action.UPDATED, str(memory.pk), memory.owner_id, actor.pk,
                          {"fields": {"tags": [before[memory.pk], memory.tags]}}) for memory in changed)
    for memory in changed:
        events.publish_after_commit(events.Kind.MEMORY_UPDATED, memory.cube_id, events.memory_changed(memory))
    return changed

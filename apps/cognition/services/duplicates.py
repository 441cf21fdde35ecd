"""Storing a memory that repeats one already kept, merged with it: the store page's "merge" answer to its duplicate
warning (apps/memories/selectors.py memory_duplicates). The new memory is stored as any other, then merged with the
one it repeats by nodes_merge (services/curation.py), which keeps the merge undoable from the undo history."""
from __future__ import annotations

from dataclasses import dataclass

from apps.accounts.models import User
from apps.cognition.services.curation import MERGEABLE_KINDS, MergeResult, nodes_merge
from apps.core.exceptions import InvalidInput, PermissionDenied
from apps.cubes.access import cube_get_writable, cube_ids_writable
from apps.cubes.services import cube_ensure_personal
from apps.memories.selectors import memory_get
from apps.memories.services import StoreResult, memory_store

# The merged node's name (Context Graph's target_name): the start of the new content.
MERGED_NAME_CHARS = 80


@dataclass(frozen=True)
class StoreMergeResult:
    stored: StoreResult
    merge: MergeResult


def memory_store_merging(*, actor: User, duplicate_id, content, cube_id: str | None = None,
                         primary_sector="semantic", importance=None, tags=None, keywords=None, category=None,
                         context=None) -> StoreMergeResult:
    """Store ``content`` (memory_store's arguments) and merge it with ``duplicate_id``, a live memory of the same
    cube the actor may change, keeping the new wording and both memories' tags (merge strategy keep_newest).
    Everything the merge needs is checked before anything is stored."""
    duplicate = memory_get(actor=actor, memory_id=duplicate_id, include_deleted=False)
    if duplicate.kind not in MERGEABLE_KINDS:
        raise InvalidInput(f"The memory it repeats is a {duplicate.get_kind_display().lower()}, kept by the app that "
                           "made it: store anyway instead, or change that one.", field="duplicate_id")
    cube = cube_get_writable(actor=actor, cube_id=cube_id) if cube_id else cube_ensure_personal(actor=actor)
    if duplicate.cube_id != cube.pk:
        raise InvalidInput("The memory it repeats is in another cube: a merge stays in one cube.", field="duplicate_id")
    if not cube_ids_writable(actor=actor).filter(id=duplicate.cube_id).exists():
        raise PermissionDenied("You may read the memory it repeats but not change it.", extra={"field": "duplicate_id"})
    stored = memory_store(actor=actor, content=content, cube_id=cube.pk, primary_sector=primary_sector,
                          importance=importance, tags=tags, keywords=keywords, category=category, context=context)
    name = " ".join(stored.memory.content.split())[:MERGED_NAME_CHARS]
    merge = nodes_merge(actor=actor, source_node_ids=[str(duplicate.pk), str(stored.memory.pk)], target_name=name,
                        merge_strategy="keep_newest")
    return StoreMergeResult(stored=stored, merge=merge)

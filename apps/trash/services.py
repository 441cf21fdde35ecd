"""Restoring from the trash and deleting for good, for every kind, through each kind's own services (which check
access, record the change and publish its live-graph events as they always do).

Both act only on what trash_get finds in the actor's trash, so "Delete forever" can never reach something live.
"""
from __future__ import annotations

from django.db import transaction

from apps.accounts.models import User
from apps.cognition.selectors.tombstones import tombstone_recoverable
from apps.cognition.services.purge import tombstone_purge
from apps.cognition.services.undo import node_restore
from apps.core.exceptions import NotFound
from apps.cubes.models import Cube
from apps.cubes.services import cube_delete, cube_restore
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_restore
from apps.projects.services import entity_purge, entity_restore, project_purge, project_restore
from apps.reasoning.services.notebooks import notebook_purge, notebook_restore
from apps.reasoning.services.thoughts import session_purge, session_restore
from apps.trash.selectors import ENTITY_MODELS, Kind, TrashItem, trash_get


def _restore_forgotten(actor: User, node_id: str) -> None:
    # The forget's undo brings the node back exactly, edges too; without it (someone else's, or spent) the memory
    # comes back as memory_restore does, without the edges the forget removed.
    if tombstone_recoverable(actor=actor, node_id=node_id):
        node_restore(actor=actor, node_id=node_id)
    else:
        memory_restore(actor=actor, memory_id=node_id)


def _restore_entity(kind: str):
    return lambda actor, item_id: entity_restore(actor=actor, kind=kind, entity_id=item_id)


def _purge_entity(kind: str):
    return lambda actor, item_id: entity_purge(actor=actor, kind=kind, entity_id=item_id)


RESTORE = {
    Kind.MEMORY: lambda actor, item_id: memory_restore(actor=actor, memory_id=item_id),
    Kind.FORGOTTEN: _restore_forgotten,
    Kind.CUBE: lambda actor, item_id: cube_restore(actor=actor, cube_id=item_id),
    Kind.PROJECT: lambda actor, item_id: project_restore(actor=actor, project_id=item_id),
    **{kind: _restore_entity(kind) for kind in ENTITY_MODELS},
    Kind.THOUGHT_SESSION: lambda actor, item_id: session_restore(actor=actor, session_id=item_id),
    Kind.NOTEBOOK: lambda actor, item_id: notebook_restore(actor=actor, notebook_id=item_id),
}
def _still_deleted(model, pk) -> None:
    """Hold the row until the purge commits, and make sure it is still deleted: restored since trash_get read it,
    it is live again and no purge may touch it (these kinds' own hard deletes take live rows too)."""
    if not model.objects.select_for_update().filter(pk=pk, deleted_at__isnull=False).exists():
        raise NotFound("It is not in your trash any more: it was restored or deleted meanwhile.",
                       extra={"field": "item_id"})


def _purge_memory(actor: User, memory_id: str) -> None:
    _still_deleted(Memory, memory_id)
    memory_delete(actor=actor, memory_id=memory_id, soft=False)


def _purge_forgotten(actor: User, node_id: str) -> None:
    _still_deleted(Memory, node_id)
    tombstone_purge(actor=actor, node_id=node_id)


def _purge_cube(actor: User, cube_id: str) -> None:
    _still_deleted(Cube, cube_id)
    cube_delete(actor=actor, cube_id=cube_id)


PURGE = {
    Kind.MEMORY: _purge_memory,
    Kind.FORGOTTEN: _purge_forgotten,
    Kind.CUBE: _purge_cube,
    Kind.PROJECT: lambda actor, item_id: project_purge(actor=actor, project_id=item_id),
    **{kind: _purge_entity(kind) for kind in ENTITY_MODELS},
    Kind.THOUGHT_SESSION: lambda actor, item_id: session_purge(actor=actor, session_id=item_id),
    Kind.NOTEBOOK: lambda actor, item_id: notebook_purge(actor=actor, notebook_id=item_id),
}


def trash_restore(*, actor: User, kind: str, item_id) -> TrashItem:
    """Bring an item of the actor's trash back with its kind's restore service; the item as the trash listed it."""
    item = trash_get(actor=actor, kind=kind, item_id=item_id)
    RESTORE[item.kind](actor, item.item_id)
    return item


def trash_purge(*, actor: User, kind: str, item_id) -> TrashItem:
    """Delete an item of the actor's trash for good with its kind's service (a cube goes with its memories, a
    project with its decisions, issues, sharp edges, episodes and sessions, a session with its thoughts); the item
    as the trash listed it."""
    with transaction.atomic():
        item = trash_get(actor=actor, kind=kind, item_id=item_id)
        PURGE[item.kind](actor, item.item_id)
    return item

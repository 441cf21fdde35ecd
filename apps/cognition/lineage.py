"""The recorder of memory changes (apps/memories/changes.py) as Events: a node's lineage and the system log.
Registered at start-up (apps.py); runs inside the transaction of the change it records."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from apps.accounts.models import User
from apps.cognition.models import Event
from apps.memories.changes import Change

# A curator acting for a row's owner (the services' curator mode, apps/cognition/services/curators.py): the memory
# services under a cognition service know only the owner they act for, so their changes are recorded as the curator's.
_curator: ContextVar[User | None] = ContextVar("cognition_curator", default=None)


@contextmanager
def changes_by(curator: User | None) -> Iterator[None]:
    """Record the changes reported in this block as ``curator``'s (none: as reported)."""
    token = _curator.set(curator)
    try:
        yield
    finally:
        _curator.reset(token)


# A benchmark's throwaway nodes (a hidden cube deleted when the run ends): their changes leave no record, since no
# lineage or log may ever show them.
_unrecorded: ContextVar[bool] = ContextVar("cognition_unrecorded", default=False)


@contextmanager
def changes_unrecorded() -> Iterator[None]:
    """Record none of the changes reported in this block."""
    token = _unrecorded.set(True)
    try:
        yield
    finally:
        _unrecorded.reset(token)


# Events an INSERT writes: a large undo's thousands of records go in statements of bounded size.
RECORD_BATCH = 1000


def record_changes(changes: list[Change]) -> None:
    if _unrecorded.get():
        return
    curator = _curator.get()
    Event.objects.bulk_create([
        Event(owner_id=change.owner_id, **_actor(change, curator), action=change.action.value,
              node_ids=[change.memory_id], detail=change.detail, reason=change.detail.get("reason", ""))
        for change in changes
    ], batch_size=RECORD_BATCH)


def _actor(change: Change, curator: User | None) -> dict:
    if curator is not None and change.actor_id is not None:
        return {"actor_id": curator.pk, "actor_label": curator.get_username()}
    return {"actor_id": change.actor_id, "actor_label": change.detail.get("agent_id", "")}

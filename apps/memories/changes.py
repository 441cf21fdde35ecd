"""Every change to memories and their links, told to whoever keeps a record of it.

Memory services call ``report`` inside the transaction that makes the change, so a record commits or
rolls back with it. Apps above memories (cognition's lineage and system log) ``register`` a recorder
at start-up: memories never import them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum


class Action(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    REEMBEDDED = "reembedded"
    LINKED = "linked"
    UNLINKED = "unlinked"
    BOOSTED = "boosted"
    DELETED = "deleted"
    RESTORED = "restored"
    PURGED = "purged"


@dataclass(frozen=True)
class Change:
    action: Action
    # The memory the change is about, and whose memory it is.
    memory_id: str
    owner_id: int
    # Who made it: None for the system (decay, a background task).
    actor_id: int | None
    # What changed: fields before and after, links made or removed ({target, link_type, weight}).
    detail: dict = field(default_factory=dict)


Recorder = Callable[[list[Change]], None]
_recorders: list[Recorder] = []


def register(recorder: Recorder) -> None:
    if recorder not in _recorders:
        _recorders.append(recorder)


def report(changes: Iterable[Change]) -> None:
    changes = list(changes)
    if changes:
        for recorder in _recorders:
            recorder(changes)


def link_detail(links) -> list[dict]:
    """Links (MemoryLink rows or link candidates) as a change's detail names them: by the other end; `incoming` when
    a candidate's link runs from it to the memory (a causal claim's cause)."""
    return [{"target": str(getattr(link, "target_id")), "link_type": link.link_type, "weight": link.weight,
             **({"incoming": True} if getattr(link, "incoming", False) else {})}
            for link in links]

"""The part of a user's graph a gardener cycle tends: a window of at most MAX_NODES of their live nodes, the next
ones by id after the last window's, so that successive cycles go round the whole graph (a round). The round's state
is the user's ActivityState.garden_cursor (where the next window starts) and garden_round (docs/context_graph.md,
"Gardener")."""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from datetime import datetime

from apps.cognition.models import ActivityState
from apps.cognition.services.gardener import limits


def between(memories, after: str | None, upto: str | None):
    """These memories with ids after ``after`` and up to ``upto`` (None: no bound)."""
    if after:
        memories = memories.filter(pk__gt=after)
    if upto:
        memories = memories.filter(pk__lte=upto)
    return memories


@dataclass(frozen=True)
class Window:
    """The nodes a cycle tends: the owner's live nodes with ids after ``after`` and up to ``upto`` (None: no bound), at
    most MAX_NODES when the window was begun; ``index`` is its number in round ``round`` (from 1)."""

    after: str | None
    upto: str | None
    nodes: int
    round: int
    index: int
    # The owner's live nodes when the cycle started: the round takes about graph / MAX_NODES windows.
    graph: int

    @property
    def last(self) -> bool:
        return self.upto is None

    def of(self, memories):
        return between(memories, self.after, self.upto)

    def as_dict(self) -> dict:
        return {"round": self.round, "index": self.index, "of": max(self.index, math.ceil(
            self.graph / limits.MAX_NODES)), "nodes": self.nodes, "graph": self.graph, "after": self.after,
            "upto": self.upto, "last": self.last}


def next_round(previous: dict, wall: datetime) -> dict:
    """A new round: its dedupe compares the nodes changed since the previous round began (every node on the first),
    which covers every change since each node was last compared."""
    return {"number": previous.get("number", 0) + 1, "started_at": wall.isoformat(),
            "dedupe_since": previous.get("started_at"), "windows": 0}


def window_bounds(owned, after: str | None) -> tuple[str | None, int] | None:
    """The upper bound of the window after ``after`` (None: the rest of the graph fits) and its node count; None when
    no node comes after ``after``."""
    following = between(owned, after, None).order_by("pk").values_list("pk", flat=True)
    ids = [str(pk) for pk in following[:limits.MAX_NODES + 1]]
    if not ids and after:
        return None
    if len(ids) > limits.MAX_NODES:
        return ids[limits.MAX_NODES - 1], limits.MAX_NODES
    return None, len(ids)


def window_begin(state: ActivityState, owned, wall: datetime) -> tuple[Window, dict]:
    """The window the next cycle tends and the round it belongs to. A window, once begun, keeps its bounds until a
    cycle completes it (an interrupted cycle's successor tends the same nodes and scales none twice); then the next
    one starts after it, and after the last the next round starts at the first node."""
    round_ = copy.deepcopy(state.garden_round or {})
    after = str(state.garden_cursor) if state.garden_cursor else None
    if not round_ or round_.get("finished_at"):
        round_, after = next_round(round_, wall), None
    begun = round_.get("window")
    if begun and begun.get("after") == after:
        upto = begun.get("upto")
        nodes = between(owned, after, upto).count()
    else:
        bounds = window_bounds(owned, after)
        if bounds is None:  # the nodes after the cursor are gone: that round is over
            round_, after = next_round(round_, wall), None
            bounds = window_bounds(owned, None)
        upto, nodes = bounds
        round_["window"] = {"after": after, "upto": upto}
    window = Window(after=after, upto=upto, nodes=nodes, round=round_["number"], index=round_.get("windows", 0) + 1,
                    graph=owned.count())
    return window, round_

"""What one batch of a dream's phase hands back to the run (runs.py), and what it is given: the phases (nrem.py, rem.py)
read and write the graph; the run keeps the undo snapshot, the Events, the checkpoint and the counters."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import User
from apps.cognition.models import ConsolidationRun, DreamList


@dataclass
class Work:
    """A batch's outcome. ``link_rows`` are the links it changed or removed for the first time in the run, as they
    were before (undo.link_rows, read before the write); ``made_links`` the links it added; ``merges`` the reversal
    hashes of the merges it made (their snapshots join the run's)."""

    items: int = 0
    cursor: Any = None
    done: bool = False
    link_rows: list[dict] = field(default_factory=list)
    made_links: list[int] = field(default_factory=list)
    # Memories it made (summaries, committed thoughts), and snapshots (undo.snapshot_take) of rows it changed.
    made_memories: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)
    counters: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    # Nodes whose links changed (the batch's Event names them), and those whose outgoing links did (live graph).
    touched: set[str] = field(default_factory=set)
    relinked: set[str] = field(default_factory=set)
    # Nodes made or rewritten (the live graph redraws them).
    redrawn: set[str] = field(default_factory=set)
    # What changed, for the batch's Event: {"reweighted": [[source, target, before, after]], ...}.
    detail: dict = field(default_factory=dict)
    # The phase's own state for its next batch (None: unchanged): small; long lists go in ``appended``.
    state: dict | None = None
    # Items appended to the run's lists by name (DreamList rows, in the batch's transaction), for the step's next
    # batches to read back by position (Context.listed).
    appended: dict[str, list] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.touched or self.merges or self.made_memories or self.detail.get("tasks")
                    or self.detail.get("blind_spots"))


@dataclass
class Context:
    """What a phase's batch works from: the run, the owner and the cubes it may change, the learning rate, the
    replay windows fixed when the run was made, the phase's saved state, and what the run changed so far."""

    run: ConsolidationRun
    owner: User
    cube_ids: list[str]
    eta: float
    windows: dict
    state: dict
    # Links snapshotted already (changed or removed earlier in the run) and links the run made.
    seen_links: set[int]
    made_links: set[int]
    # Unordered node pairs whose links the run changed or removed.
    changed_pairs: set[tuple[str, str]]
    # Memories whose rows the run's snapshot holds already (as they were) or that the run made.
    seen_memories: set[str] = field(default_factory=set)
    # How many items each of the step's lists holds (the batches before this one appended them).
    lengths: dict[str, int] = field(default_factory=dict)

    def listed(self, key: str, start: int = 0, stop: int | None = None) -> list:
        """The items of the step's list ``key`` from position ``start`` up to ``stop`` (the end), in order."""
        rows = DreamList.objects.filter(run=self.run, key=key, seq__gte=start)
        if stop is not None:
            rows = rows.filter(seq__lt=stop)
        return list(rows.order_by("seq").values_list("item", flat=True))


def pair(a, b) -> tuple[str, str]:
    a, b = str(a), str(b)
    return (a, b) if a < b else (b, a)


@dataclass
class Pace:
    """Each step's next batch size, from the time per item of its last batch: one item first, then as many as that
    time per item fits in ``seconds``, at most twice the last batch's, never above the ceiling asked for. A dream's
    phases and a gardener cycle's steps are paced so: a query stops them within about one short batch."""

    seconds: float
    sizes: dict[str, int] = field(default_factory=dict)

    def size(self, step: str, ceiling: int) -> int:
        return max(1, min(ceiling, self.sizes.get(step, 1)))

    def measured(self, step: str, items: int, seconds: float) -> None:
        if items <= 0:
            return
        # (The 1e-9: items of exactly a fifth of ``seconds`` fit five times, whatever the float rounding.)
        fits = int(self.seconds * items / seconds + 1e-9) if seconds > 0 else 2 * items
        self.sizes[step] = max(1, min(2 * items, fits))

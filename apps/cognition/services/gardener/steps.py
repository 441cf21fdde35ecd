"""The steps of a gardener cycle (cycle.py runs them), each a batch function (tending, cursor, state, size) ->
Garden: what the batch changed, for the cycle's undo, Event and live graph. Each reads and changes only the window's
nodes (tending.tended()) and what it needs around them: dedupe compares them with their nearest in the whole graph,
causal cycles are followed from them along causal links, scaling judges by the whole graph's variance once a
round."""
from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta

from django.db.models import Avg, Count, Exists, F, OuterRef, Q, Variance
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import CurationTask, Tombstone
from apps.cognition.services.curation import MERGEABLE_KINDS, node_forget
from apps.cognition.services.dream import nrem
from apps.cognition.services.dream.parts import UndoHeld
from apps.cognition.services.dream.work import Context, Pace, Work
from apps.cognition.services.gardener import limits
from apps.cognition.services.gardener.limits import (
    BATCH_SECONDS, CANCER_IMPORTANCE, CAUSAL_HOPS, CAUSAL_SCOPE_NODES, ORPHAN_DAYS, ORPHAN_IMPORTANCE, PRUNE_IDLE_HOURS,
    PRUNE_WEIGHT, SCALING_CENTRE, SCALING_TARGET_VARIANCE, SCALING_VARIANCE,
)
from apps.cognition.services.gardener.window import Window
from apps.cognition.services.inbox import Proposal, tasks_open
from apps.cognition.services.purge import expired_purge
from apps.cognition.services.undo import link_rows, memory_rows
from apps.memories.models import Memory, MemoryLink


@dataclass
class Garden(Work):
    """A gardener batch's outcome: a dream batch's (work.py), plus node rows as they were before the batch changed
    them (scaling) and the undos of the forgets it made (their snapshots join the cycle's, as merges' do)."""

    memory_rows: list[dict] = field(default_factory=list)
    forgets: list[str] = field(default_factory=list)
    operation: str = ""
    # Nodes whose own fields changed (their new state goes to the live graph).
    changed_nodes: list[str] = field(default_factory=list)

    @property
    def undoable(self) -> bool:
        return bool(self.link_rows or self.memory_rows or self.merges or self.forgets)


@dataclass
class Tending:
    """A cycle under way: whose graph, its window and round, and what it did so far."""

    owner: User
    cube_ids: list[str]
    now: datetime  # the clock's: idle edges and old orphans are judged by it
    started: datetime  # wall-clock: a query after it stops the cycle
    token: str
    trigger: str
    window: Window
    # The round under way (ActivityState.garden_round), written back with each batch's progress.
    round: dict
    own_cube_ids: list[str] = field(default_factory=list)
    # What the cycle's undo holds so far (its parts' row ids).
    held: UndoHeld = field(default_factory=UndoHeld)
    reversal_hash: str = ""
    node_ids: set[str] = field(default_factory=set)
    counters: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    steps_done: list[str] = field(default_factory=list)
    # The importance variance the scaling step judged by (None: it did not run).
    variance: float | None = None
    step: str | None = None
    # Times each step's batches (injectable: tests run a fake clock), and sizes the next one from it.
    clock: Callable[[], float] = time.monotonic
    pace: Pace = field(default_factory=lambda: Pace(BATCH_SECONDS))
    # When the cycle last told the owner's cubes where it stands (time.monotonic).
    progress_at: float = 0.0

    @property
    def dedupe_since(self) -> str | None:
        return self.round.get("dedupe_since")

    def owned(self):
        return Memory.objects.filter(owner=self.owner, cube_id__in=self.cube_ids, deleted_at__isnull=True)

    def tended(self):
        """The window's live nodes."""
        return self.window.of(self.owned())


def prune(tending: Tending, cursor, state: dict, size: int) -> Garden:
    idle_before = tending.now - timedelta(hours=PRUNE_IDLE_HOURS)
    links = (MemoryLink.objects.select_for_update(of=("self",))
             .filter(weight__lt=PRUNE_WEIGHT, source__in=tending.tended(), target__in=tending.owned())
             .alias(idle_since=Coalesce("last_activated_at", "created_at")).filter(idle_since__lt=idle_before))
    if cursor is not None:
        links = links.filter(pk__gt=cursor)
    batch = list(links.order_by("pk")[:size])
    work = Garden(items=len(batch), cursor=batch[-1].pk if batch else cursor, done=len(batch) < size,
                  operation="prune")
    if not batch:
        return work
    work.link_rows = link_rows([link.pk for link in batch])  # read before the write: the links as they were
    MemoryLink.objects.filter(pk__in=[link.pk for link in batch]).delete()
    work.counters["edges_pruned"] += len(batch)
    work.detail = {"pruned": [[str(link.source_id), str(link.target_id), link.weight,
                               (link.last_activated_at or link.created_at).isoformat()] for link in batch]}
    for link in batch:
        work.touched |= {str(link.source_id), str(link.target_id)}
        work.relinked.add(str(link.source_id))
    return work


def dedupe(tending: Tending, cursor, state: dict, size: int) -> Garden:
    """NREM's dedupe (merges and potential_merge tasks) on the window's nodes made before the cycle and changed since
    the last round began (every node on the first), each against its nearest in the whole graph."""
    context = Context(run=None, owner=tending.owner, cube_ids=tending.cube_ids, eta=0.0,
                      windows={"started": tending.started.isoformat(), "dedupe_since": tending.dedupe_since,
                               "after": tending.window.after, "upto": tending.window.upto},
                      state={}, seen_links=set(), made_links=set(), changed_pairs=set())
    work = nrem.dedupe(context, cursor, size)
    garden = Garden(**{name.name: getattr(work, name.name) for name in fields(Work)}, operation="dedupe")
    # Its notes name the dream; the cycle writes its own summary, keeping only why a merge was refused.
    garden.notes = [note.replace("NREM dedupe", "Dedupe") for note in work.notes if "were not merged" in note]
    return garden


def _find_cycle(adjacent: dict[str, list[tuple[str, int, float]]]) -> list[tuple[int, str, str, float]] | None:
    """One directed cycle (its links as (pk, source, target, weight)), by depth-first search in id order; None."""
    colour: dict[str, int] = {}  # 1: on the path, 2: done
    for root in sorted(adjacent):
        if root in colour:
            continue
        colour[root] = 1
        stack = [(root, iter(adjacent[root]))]
        position = {root: 0}
        path: list[tuple[int, str, str, float]] = []  # path[i]: the link from stack[i] to stack[i + 1]
        while stack:
            node, outgoing = stack[-1]
            step = next(outgoing, None)
            if step is None:
                colour[node] = 2
                stack.pop()
                position.pop(node)
                if path:
                    path.pop()
                continue
            target, pk, weight = step
            if colour.get(target) == 1:
                return path[position[target]:] + [(pk, node, target, weight)]
            if target not in colour:
                colour[target] = 1
                position[target] = len(stack)
                stack.append((target, iter(adjacent.get(target, ()))))
                path.append((pk, node, target, weight))
    return None


def causal_around(tending: Tending) -> tuple[dict[str, list[tuple[str, int, float]]], bool]:
    """The causal links (weight > 0, between two of the owner's live nodes) reachable from the window's nodes within
    CAUSAL_HOPS links, as source -> [(target, link id, weight)] in id order; and whether CAUSAL_SCOPE_NODES cut the
    reach short. One statement a hop."""
    causal = MemoryLink.objects.filter(link_type=MemoryLink.LinkType.CAUSAL, weight__gt=0, target__in=tending.owned())
    frontier = {str(pk) for pk in tending.tended().values_list("pk", flat=True)}
    reached = set(frontier)
    adjacent: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    truncated = False
    for _ in range(CAUSAL_HOPS):
        if not frontier:
            break
        found: set[str] = set()
        for pk, source, target, weight in (causal.filter(source_id__in=frontier).order_by("source_id", "target_id")
                                           .values_list("pk", "source_id", "target_id", "weight")):
            adjacent[str(source)].append((str(target), pk, weight))
            if str(target) not in reached:
                found.add(str(target))
        room = CAUSAL_SCOPE_NODES - len(reached)
        if len(found) > room:
            found, truncated = set(sorted(found)[:max(0, room)]), True
        reached |= found
        frontier = found
    return adjacent, truncated


def break_cycles(tending: Tending, cursor, state: dict, size: int) -> Garden:
    """Up to ``size`` directed causal cycles around the window broken, each at its weakest link (the lower id on a
    tie)."""
    adjacent, truncated = causal_around(tending)
    broken = []
    while len(broken) < size:
        found = _find_cycle(adjacent)
        if found is None:
            break
        weakest = min(found, key=lambda link: (link[3], link[0]))
        adjacent[weakest[1]] = [step for step in adjacent[weakest[1]] if step[1] != weakest[0]]
        broken.append((found, weakest))
    # The cursor counts the step's batches: each looks again around the window, without the links cut before.
    work = Garden(items=len(broken), cursor=(cursor or 0) + 1, done=len(broken) < size,
                  operation="break_causal_cycles")
    if truncated and cursor is None:
        work.notes.append(f"Causal cycles: more than {CAUSAL_SCOPE_NODES} nodes are within {CAUSAL_HOPS} causal links "
                          "of this window; cycles were looked for among the first of them (by id).")
    if not broken:
        return work
    cut = [weakest[0] for _, weakest in broken]
    locked = list(MemoryLink.objects.select_for_update().filter(pk__in=cut).values_list("pk", flat=True))
    work.link_rows = link_rows(locked)
    MemoryLink.objects.filter(pk__in=locked).delete()
    importance = {str(pk): value for pk, value in Memory.objects.filter(
        pk__in={link[1] for found, _ in broken for link in found}).values_list("pk", "importance")}
    proposals, described = [], []
    for found, (pk, source, target, weight) in broken:
        nodes = [link[1] for link in found]
        important = [node for node in nodes if importance.get(node, 0.0) >= CANCER_IMPORTANCE]
        described.append({"nodes": nodes, "cut": [source, target, weight], "important": important})
        if important:
            proposals.append(Proposal(nodes, f"These {len(nodes)} nodes made a directed causal cycle (each a cause of "
                                             f"the next, back to the first), through {len(important)} node(s) of "
                                             f"importance >= {CANCER_IMPORTANCE}. The gardener cut its weakest link "
                                             f"(weight {weight:.3f}); check whether these claims only prop each "
                                             "other up, and correct them.",
                                      CurationTask.SuggestedTool.ANNOTATE_NODE, CurationTask.Priority.HIGH))
        work.touched |= set(nodes)
        work.relinked.add(source)
    opened_since = timezone.now()
    tasks = [task for task in tasks_open(owner=tending.owner, task_type=CurationTask.TaskType.SEMANTIC_CANCER,
                                         proposals=proposals) if task is not None]
    new_tasks = [str(task.pk) for task in tasks if task.created_at >= opened_since]
    work.counters["cycles_broken"] += len(broken)
    work.counters["edges_cut"] += len(locked)
    work.counters["tasks_opened"] += len(new_tasks)
    work.detail = {"cycles": described, "tasks": new_tasks}
    return work


def glymphatic(tending: Tending, cursor, state: dict, size: int) -> Garden:
    """First Context Graph I's purge of what expired (this user's, at most MAX_NODES of each kind), then the window's
    orphans forgotten, a batch at a time."""
    work = Garden(operation="glymphatic_clearance")
    if cursor is None:
        purged = expired_purge(now=tending.now, owner=tending.owner, limit=limits.MAX_NODES)
        work.counters["nodes_purged"] += purged.nodes_purged
        work.counters["snapshots_purged"] += purged.snapshots_dropped
        work.detail["purged"] = {"nodes": purged.nodes_purged, "tombstones": purged.tombstones_dropped,
                                 "snapshots": purged.snapshots_dropped, "scratchpad": purged.scratchpad_dropped}
    linked = MemoryLink.objects.filter(Q(source=OuterRef("pk")) | Q(target=OuterRef("pk")))
    old = tending.now - timedelta(days=ORPHAN_DAYS)
    orphans = (tending.tended().filter(kind__in=MERGEABLE_KINDS, created_at__lt=old, access_count=0,
                                       last_accessed_at__isnull=True, importance__lt=ORPHAN_IMPORTANCE)
               .exclude(Exists(linked)))
    if cursor:
        orphans = orphans.filter(pk__gt=cursor)
    batch = [str(pk) for pk in orphans.order_by("pk").values_list("pk", flat=True)[:size]]
    work.items, work.cursor, work.done = len(batch), batch[-1] if batch else cursor, len(batch) < size
    forgotten = []
    for node_id in batch:
        result = node_forget(actor=tending.owner, node_id=node_id, reason=Tombstone.Reason.GLYMPHATIC_CLEARANCE)
        work.forgets.append(result.reversal_hash)
        forgotten.append(node_id)
    if forgotten:
        Tombstone.objects.filter(memory_id__in=forgotten).update(actor=None, actor_label="gardener")
        work.detail["forgotten"] = forgotten
        work.touched |= set(forgotten)
    work.counters["nodes_forgotten"] += len(forgotten)
    return work


def scaling(tending: Tending, cursor, state: dict, size: int) -> Garden:
    """The window's importance pulled toward SCALING_CENTRE when the graph's variance is too high. The variance is one
    aggregate over the whole graph, read when the round first reaches this step; its factor stays for every window
    of the round, so that the round scales the whole graph alike (a variance read again each window would fall as
    windows are scaled, and leave the later ones untouched)."""
    work = Garden(operation="importance_scaling")
    round_ = tending.round
    if "variance" not in round_:
        figures = tending.owned().aggregate(variance=Variance("importance"), mean=Avg("importance"), nodes=Count("pk"))
        variance = float(figures["variance"] or 0.0)
        round_["variance"] = variance
        round_["factor"] = math.sqrt(SCALING_TARGET_VARIANCE / variance) if variance > SCALING_VARIANCE else None
    tending.variance = round_["variance"]
    factor = round_["factor"]
    if factor is None:
        work.done = True
        return work
    nodes = tending.tended()
    for after in (cursor, round_.get("scaled_through")):  # a window scaled in part before (an interrupted cycle)
        if after:
            nodes = nodes.filter(pk__gt=after)
    batch = [str(pk) for pk in nodes.order_by("pk").values_list("pk", flat=True)[:size]]
    work.items, work.cursor, work.done = len(batch), batch[-1] if batch else cursor, len(batch) < size
    if not batch:
        return work
    work.memory_rows = memory_rows(batch)
    Memory.objects.filter(pk__in=batch).update(
        importance=SCALING_CENTRE + (F("importance") - SCALING_CENTRE) * factor, updated_at=timezone.now())
    round_["scaled_through"] = batch[-1]  # written with the batch: a node is scaled once a round
    work.counters["nodes_scaled"] += len(batch)
    work.detail = {"factor": factor, "variance_before": round_["variance"],
                   "target_variance": SCALING_TARGET_VARIANCE, "centre": SCALING_CENTRE,
                   "importance": [[row["pk"], row["fields"]["importance"]] for row in work.memory_rows]}
    work.touched |= set(batch)
    work.changed_nodes = batch
    return work


BATCHES: dict[str, Callable[[Tending, object, dict, int], Garden]] = {
    "prune": prune, "dedupe": dedupe, "cycles": break_cycles, "glymphatic": glymphatic, "scaling": scaling}

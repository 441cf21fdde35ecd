"""A gardener cycle on one user's graph: the live nodes they own in cubes they may write, and the links between two of
them; nothing else is read for change.

Steps (limits.STEPS), each in batches of at most BATCH_ITEMS, each batch one transaction with its writes, its Event
(``gardened``, the step's ``operation`` in detail), the cycle's undo snapshot and the progress:
- ``prune``: links weaker than PRUNE_WEIGHT idle (last activated, else made) PRUNE_IDLE_HOURS are removed.
- ``dedupe``: NREM's own dedupe (services/dream/nrem.py) on the nodes changed since the last cycle's dedupe:
  near-duplicates merged through merge_concepts, the less similar proposed as potential_merge tasks.
- ``cycles``: each directed causal cycle loses its weakest link; a cycle through a node of importance
  CANCER_IMPORTANCE or more opens a semantic_cancer task.
- ``glymphatic``: Context Graph I's purge of what expired, for this user (not undoable: its retention is over), then
  orphans (no link either way) older than ORPHAN_DAYS, never accessed, less important than ORPHAN_IMPORTANCE are
  forgotten through forget_concept's service (tombstoned, restorable).
- ``scaling``: when the importance variance exceeds SCALING_VARIANCE, importance' = 0.5 + k (importance - 0.5) with
  k = sqrt(SCALING_TARGET_VARIANCE / variance), so the variance becomes the target.

One UndoEntry (operation gardener) a cycle, made with its first change: each link and node row as it was before the
cycle first changed it, and the snapshots of its merges and forgets (whose own undos it covers). A query of the owner,
or a dream of theirs starting, stops the cycle before its next batch; what it did stays, undoable. One cycle per user
at a time: a lease on the user's ActivityState, renewed before each batch.
"""
from __future__ import annotations

import copy
import logging
import math
import secrets
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Avg, Count, Exists, F, OuterRef, Q, Variance
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import ActivityState, ConsolidationRun, CurationTask, Event, Tombstone, UndoEntry
from apps.cognition.services.curation import MERGEABLE_KINDS, node_forget
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.dream import nrem
from apps.cognition.services.dream.parts import ROW_SETS, empty_snapshot
from apps.cognition.services.dream.work import Context, Work
from apps.cognition.services.gardener.activity import queried_since
from apps.cognition.services.gardener.limits import (
    BATCH_ITEMS, CANCER_IMPORTANCE, IDLE_ACTIVITY, LEASE_IDLE_SECONDS, MAX_NODES, ORPHAN_DAYS, ORPHAN_IMPORTANCE,
    PRUNE_IDLE_HOURS, PRUNE_WEIGHT, SCALING_CENTRE, SCALING_TARGET_VARIANCE, SCALING_VARIANCE, STEPS,
)
from apps.cognition.services.inbox import Proposal, tasks_open
from apps.cognition.services.purge import expired_purge
from apps.cognition.services.undo import link_rows, memory_rows, undo_record
from apps.core.exceptions import Conflict
from apps.cubes.access import cube_ids_writable
from apps.graph import events
from apps.memories.models import Memory, MemoryLink

logger = logging.getLogger(__name__)

TRIGGERS = ("auto", "manual", "admin")
# Counters that count changes to the graph (the others count work); the purge's are not undoable.
CHANGES = ("edges_pruned", "merges", "tasks_opened", "cycles_broken", "nodes_forgotten", "nodes_purged",
           "nodes_scaled")
REPORTED = (*CHANGES, "edges_cut", "nodes_compared", "snapshots_purged", "batches")


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
class _Cycle:
    owner: User
    cube_ids: list[str]
    now: datetime  # the clock's: idle edges and old orphans are judged by it
    started: datetime  # wall-clock: a query after it stops the cycle
    token: str
    trigger: str
    dedupe_since: str | None
    snapshot: dict | None = None
    reversal_hash: str = ""
    node_ids: set[str] = field(default_factory=set)
    counters: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    steps_done: list[str] = field(default_factory=list)
    # The importance variance the scaling step found (None: it did not run).
    variance: float | None = None

    def owned(self):
        return Memory.objects.filter(owner=self.owner, cube_id__in=self.cube_ids, deleted_at__isnull=True)


@dataclass(frozen=True)
class CycleReport:
    status: str  # completed, interrupted
    trigger: str
    started_at: str
    finished_at: str
    stop_reason: str  # done, query, dream, lease
    counters: dict
    steps_done: list[str]
    reversal_hash: str | None
    notes: list[str]
    dedupe_since: str | None

    def as_dict(self) -> dict:
        return {name.name: getattr(self, name.name) for name in fields(self)}


# --- steps --------------------------------------------------------------------------------------------------------

def prune(cycle: _Cycle, cursor, state: dict, size: int) -> Garden:
    owned = cycle.owned()
    idle_before = cycle.now - timedelta(hours=PRUNE_IDLE_HOURS)
    links = (MemoryLink.objects.select_for_update(of=("self",))
             .filter(weight__lt=PRUNE_WEIGHT, source__in=owned, target__in=owned)
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


def dedupe(cycle: _Cycle, cursor, state: dict, size: int) -> Garden:
    """NREM's dedupe (merges and potential_merge tasks) on the nodes made before the cycle and changed since the last
    cycle's dedupe (every node on the first)."""
    context = Context(run=None, owner=cycle.owner, cube_ids=cycle.cube_ids, eta=0.0,
                      windows={"started": cycle.started.isoformat(), "dedupe_since": cycle.dedupe_since},
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


def break_cycles(cycle: _Cycle, cursor, state: dict, size: int) -> Garden:
    """Up to ``size`` directed causal cycles broken, each at its weakest link (the lower id on a tie)."""
    owned = cycle.owned()
    importance = {str(pk): value for pk, value in owned.values_list("pk", "importance")}
    adjacent: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    for pk, source, target, weight in (MemoryLink.objects.filter(
            link_type=MemoryLink.LinkType.CAUSAL, weight__gt=0, source__in=owned, target__in=owned)
            .order_by("source_id", "target_id").values_list("pk", "source_id", "target_id", "weight")):
        adjacent[str(source)].append((str(target), pk, weight))
    broken = []
    while len(broken) < size:
        found = _find_cycle(adjacent)
        if found is None:
            break
        weakest = min(found, key=lambda link: (link[3], link[0]))
        adjacent[weakest[1]] = [step for step in adjacent[weakest[1]] if step[1] != weakest[0]]
        broken.append((found, weakest))
    work = Garden(items=len(broken), done=len(broken) < size, operation="break_causal_cycles")
    if not broken:
        return work
    cut = [weakest[0] for _, weakest in broken]
    locked = list(MemoryLink.objects.select_for_update().filter(pk__in=cut).values_list("pk", flat=True))
    work.link_rows = link_rows(locked)
    MemoryLink.objects.filter(pk__in=locked).delete()
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
    tasks = [task for task in tasks_open(owner=cycle.owner, task_type=CurationTask.TaskType.SEMANTIC_CANCER,
                                         proposals=proposals) if task is not None]
    new_tasks = [str(task.pk) for task in tasks if task.created_at >= opened_since]
    work.counters["cycles_broken"] += len(broken)
    work.counters["edges_cut"] += len(locked)
    work.counters["tasks_opened"] += len(new_tasks)
    work.detail = {"cycles": described, "tasks": new_tasks}
    return work


def glymphatic(cycle: _Cycle, cursor, state: dict, size: int) -> Garden:
    """First Context Graph I's purge of what expired (this user's), then orphans forgotten, a batch at a time."""
    work = Garden(operation="glymphatic_clearance")
    if cursor is None:
        purged = expired_purge(now=cycle.now, owner=cycle.owner)
        work.counters["nodes_purged"] += purged.nodes_purged
        work.counters["snapshots_purged"] += purged.snapshots_dropped
        work.detail["purged"] = {"nodes": purged.nodes_purged, "tombstones": purged.tombstones_dropped,
                                 "snapshots": purged.snapshots_dropped, "scratchpad": purged.scratchpad_dropped}
    linked = MemoryLink.objects.filter(Q(source=OuterRef("pk")) | Q(target=OuterRef("pk")))
    orphans = (cycle.owned().filter(kind__in=MERGEABLE_KINDS, created_at__lt=cycle.now - timedelta(days=ORPHAN_DAYS),
                                    access_count=0, last_accessed_at__isnull=True, importance__lt=ORPHAN_IMPORTANCE)
               .exclude(Exists(linked)))
    if cursor:
        orphans = orphans.filter(pk__gt=cursor)
    batch = [str(pk) for pk in orphans.order_by("pk").values_list("pk", flat=True)[:size]]
    work.items, work.cursor, work.done = len(batch), batch[-1] if batch else cursor, len(batch) < size
    forgotten = []
    for node_id in batch:
        result = node_forget(actor=cycle.owner, node_id=node_id, reason=Tombstone.Reason.GLYMPHATIC_CLEARANCE)
        work.forgets.append(result.reversal_hash)
        forgotten.append(node_id)
    if forgotten:
        Tombstone.objects.filter(memory_id__in=forgotten).update(actor=None, actor_label="gardener")
        work.detail["forgotten"] = forgotten
        work.touched |= set(forgotten)
    work.counters["nodes_forgotten"] += len(forgotten)
    return work


def scaling(cycle: _Cycle, cursor, state: dict, size: int) -> Garden:
    """Importance pulled toward SCALING_CENTRE when its variance is too high: the factor is fixed by the first batch."""
    work = Garden(operation="importance_scaling")
    if cursor is None:
        figures = cycle.owned().aggregate(variance=Variance("importance"), mean=Avg("importance"), nodes=Count("pk"))
        variance = float(figures["variance"] or 0.0)
        cycle.variance = variance
        if variance <= SCALING_VARIANCE:
            work.done = True
            return work
        state = {"factor": math.sqrt(SCALING_TARGET_VARIANCE / variance), "variance": variance,
                 "mean": float(figures["mean"]), "nodes": figures["nodes"]}
        work.state = state
    nodes = cycle.owned()
    if cursor:
        nodes = nodes.filter(pk__gt=cursor)
    batch = [str(pk) for pk in nodes.order_by("pk").values_list("pk", flat=True)[:size]]
    work.items, work.cursor, work.done = len(batch), batch[-1] if batch else cursor, len(batch) < size
    if not batch:
        return work
    work.memory_rows = memory_rows(batch)
    factor = state["factor"]
    Memory.objects.filter(pk__in=batch).update(
        importance=SCALING_CENTRE + (F("importance") - SCALING_CENTRE) * factor, updated_at=timezone.now())
    work.counters["nodes_scaled"] += len(batch)
    work.detail = {"factor": factor, "variance_before": state["variance"], "target_variance": SCALING_TARGET_VARIANCE,
                   "centre": SCALING_CENTRE,
                   "importance": [[row["pk"], row["fields"]["importance"]] for row in work.memory_rows]}
    work.touched |= set(batch)
    work.changed_nodes = batch
    return work


BATCHES: dict[str, Callable[[_Cycle, object, dict, int], Garden]] = {
    "prune": prune, "dedupe": dedupe, "cycles": break_cycles, "glymphatic": glymphatic, "scaling": scaling}


# --- the cycle ----------------------------------------------------------------------------------------------------

def gardener_run(*, actor: User, owner_id=None, curator: bool = False, trigger: str = "manual",
                 now: datetime | None = None, batch_size: int = BATCH_ITEMS) -> CycleReport:
    """One gardener cycle on the actor's graph (``curator``: on the graph of the user ``owner_id``, the admin's). An
    automatic one (the tick's) runs only while the owner is still idle. Refused (Conflict) while a cycle or a dream of
    the owner is under way, or when their graph is over MAX_NODES live nodes."""
    owner = curator_scope(actor=actor, curator=curator, rows=ActivityState.objects.filter(pk=owner_id)) \
        if curator else actor
    now = now or timezone.now()
    state, _ = ActivityState.objects.get_or_create(owner=owner)
    if trigger == "auto" and (state.low_since is None or state.activity >= IDLE_ACTIVITY):
        raise Conflict("You became active again before the cycle started: it waits for the next idle spell.",
                       extra={"field": "trigger"})
    cube_ids = [str(pk) for pk in cube_ids_writable(actor=owner).values_list("id", flat=True)]
    nodes = Memory.objects.filter(owner=owner, cube_id__in=cube_ids, deleted_at__isnull=True).count()
    if nodes > MAX_NODES:
        raise Conflict(f"Your graph has {nodes} live nodes: the gardener tends graphs of at most {MAX_NODES}, since a "
                       "cycle reads the whole graph.", extra={"field": "nodes", "nodes": nodes})
    _check_no_dream(owner)
    token = secrets.token_hex(16)
    wall = timezone.now()
    free = Q(cycle_token="") | Q(cycle_heartbeat_at__isnull=True) | Q(
        cycle_heartbeat_at__lt=wall - timedelta(seconds=LEASE_IDLE_SECONDS))
    previous = state.last_cycle or {}
    running = {"status": "running", "trigger": trigger, "started_at": wall.isoformat(), "batches": 0,
               "step": STEPS[0], "dedupe_since": previous.get("dedupe_since")}
    if not ActivityState.objects.filter(free, owner=owner).update(cycle_token=token, cycle_heartbeat_at=wall,
                                                                  cycle_hash="", last_cycle=running):
        raise Conflict("A gardener cycle of yours is under way: one runs at a time.", extra={
            "field": "trigger", "suggestion": "Wait for it to finish; the gardener page shows its progress."})
    cycle = _Cycle(owner=owner, cube_ids=cube_ids, now=now, started=wall, token=token, trigger=trigger,
                   dedupe_since=previous.get("dedupe_since"))
    stop = "error"
    try:
        stop = _work(cycle, batch_size)
    finally:
        report = _finish(cycle, stop)
    return report


def _check_no_dream(owner: User) -> None:
    running = ConsolidationRun.objects.filter(owner=owner, status__in=ConsolidationRun.ACTIVE).first()
    if running is not None:
        raise Conflict(f"A dream of yours is under way (dream_run_id {running.pk}): the gardener waits for it.",
                       extra={"field": "trigger", "dream_run_id": str(running.pk)})


def _work(cycle: _Cycle, batch_size: int) -> str:
    batches = 0
    for step in STEPS:
        cursor, state = None, {}
        while True:
            stop = _stop_reason(cycle)
            if stop:
                return stop
            with transaction.atomic():
                work = BATCHES[step](cycle, cursor, state, batch_size)
                batches += 1
                cycle.counters.update(work.counters)
                cycle.counters["batches"] += 1
                cycle.notes.extend(work.notes)
                if work.changed or work.undoable or work.detail.get("purged", {}).get("nodes"):
                    _record(cycle, step, batches, work)
                if step == "dedupe" and work.done:
                    cycle.dedupe_since = cycle.started.isoformat()
                ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(last_cycle={
                    "status": "running", "trigger": cycle.trigger, "started_at": cycle.started.isoformat(),
                    "batches": batches, "step": step, "counters": dict(cycle.counters),
                    "reversal_hash": cycle.reversal_hash or None, "dedupe_since": cycle.dedupe_since})
            cursor = work.cursor
            if work.state is not None:
                state = work.state
            if work.done:
                cycle.steps_done.append(step)
                break
    return "done"


def _stop_reason(cycle: _Cycle) -> str:
    """Why the cycle stops before its next batch ("" to go on): a query of the owner since it started (this
    process's, or another's flushed), a dream of theirs started, or its lease taken over. Renews the lease."""
    if not ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(
            cycle_heartbeat_at=timezone.now()):
        return "lease"
    if queried_since(cycle.owner.pk, cycle.started):
        return "query"
    last_query = ActivityState.objects.filter(owner=cycle.owner).values_list("last_query_at", flat=True).first()
    if last_query is not None and last_query > cycle.started:
        return "query"
    if ConsolidationRun.objects.filter(owner=cycle.owner, status__in=ConsolidationRun.ACTIVE).exists():
        return "dream"
    return ""


def _fold(cycle: _Cycle, work: Garden) -> dict:
    """The cycle's snapshot with the batch's first changes in it: each row as it was before the cycle first changed
    it, never a row the cycle made itself (a merged node, its links)."""
    snapshot = copy.deepcopy(cycle.snapshot) if cycle.snapshot is not None else empty_snapshot()
    covered = [UndoEntry.objects.get(pk=reversal_hash).snapshot for reversal_hash in [*work.merges, *work.forgets]]
    made = snapshot["made"]
    made["memories"] = sorted(set(made["memories"]) | {str(pk) for one in covered for pk in one["made"]["memories"]})
    made_memories = set(made["memories"])
    kept = {name: {row["pk"] for row in snapshot[name]} for name in ROW_SETS}

    def add(name: str, rows: list[dict]) -> None:
        for row in rows:
            fields_ = row["fields"]
            ends = {str(fields_.get(key, "")) for key in ("memory", "source", "target")}
            if row["pk"] in kept[name] or str(row["pk"]) in made_memories or ends & made_memories:
                continue
            snapshot[name].append(row)
            kept[name].add(row["pk"])

    add("links", work.link_rows)
    add("memories", work.memory_rows)
    for one in covered:
        for name in ROW_SETS:
            add(name, one[name])
    snapshot["covers"] = [*snapshot["covers"], *work.merges, *work.forgets]
    cubes = Memory.objects.filter(pk__in=work.touched).values_list("cube_id", flat=True)
    snapshot["cubes"] = sorted(set(snapshot["cubes"]) | {str(cube) for cube in cubes})
    return snapshot


def _record(cycle: _Cycle, step: str, batch: int, work: Garden) -> None:
    """The batch into the cycle's one undo (made with the first change), one Event on the nodes it touched, and a
    gardener.changed event for each cube it changed."""
    if work.undoable:
        snapshot = _fold(cycle, work)
        if work.operation != "importance_scaling":  # the undo lists the nodes whose links or life changed
            cycle.node_ids |= work.touched
        if not cycle.reversal_hash:
            entry = undo_record(actor=cycle.owner, operation=UndoEntry.Operation.GARDENER,
                                node_ids=sorted(cycle.node_ids), snapshot=snapshot)
            cycle.reversal_hash = entry.reversal_hash
            ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(cycle_hash=entry.pk)
        else:
            UndoEntry.objects.filter(pk=cycle.reversal_hash).update(snapshot=snapshot,
                                                                     node_ids=sorted(cycle.node_ids))
        cycle.snapshot = snapshot
    Event.objects.create(owner=cycle.owner, actor=None, actor_label="gardener", action=Event.Action.GARDENED,
                         node_ids=sorted(work.touched), reversal_hash=cycle.reversal_hash,
                         detail={"operation": work.operation, "step": step, "batch": batch,
                                 "started_at": cycle.started.isoformat(), **work.detail,
                                 "counters": dict(work.counters)})
    changed = set(work.changed_nodes)
    by_cube: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for memory in Memory.objects.filter(pk__in=changed | work.relinked, deleted_at__isnull=True):
        nodes, relinked = by_cube[memory.cube_id]
        if str(memory.pk) in changed:
            nodes.append(memory)
        if str(memory.pk) in work.relinked:
            relinked.append(memory)
    for cube_id, (nodes, relinked) in by_cube.items():
        events.publish_after_commit(events.Kind.GARDENER_CHANGED, cube_id, events.gardener_changed(
            step=step, reversal_hash=cycle.reversal_hash, nodes=nodes, relinked=relinked))


def _summary(cycle: _Cycle) -> list[str]:
    """Why a finished cycle changed little, step by step."""
    counters, done, notes = cycle.counters, set(cycle.steps_done), []
    if "prune" in done and not counters["edges_pruned"]:
        notes.append(f"Prune: no link weaker than {PRUNE_WEIGHT} was idle {PRUNE_IDLE_HOURS} hours.")
    if "dedupe" in done and not (counters["merges"] or counters["tasks_opened"]):
        compared = counters["nodes_compared"]
        notes.append(f"Dedupe: none of the {compared} nodes compared had a near-duplicate (cosine >= 0.90)."
                     if compared else "Dedupe: no memory or summary node changed since the last cycle.")
    if "cycles" in done and not counters["cycles_broken"]:
        notes.append("Causal cycles: none (no chain of causal links leads back to where it started).")
    if "glymphatic" in done and not (counters["nodes_forgotten"] or counters["nodes_purged"]):
        notes.append(f"Glymphatic clearance: nothing expired, and no unlinked node older than {ORPHAN_DAYS} days, "
                     f"never accessed and below importance {ORPHAN_IMPORTANCE}.")
    if "scaling" in done and not counters["nodes_scaled"] and cycle.variance is not None:
        notes.append(f"Scaling: importance variance {cycle.variance:.3f} is within {SCALING_VARIANCE}, so no "
                     "importance was changed.")
    return notes


def _finish(cycle: _Cycle, stop: str) -> CycleReport:
    notes = [*cycle.notes, *(_summary(cycle) if stop == "done" else [])]
    if stop == "query":
        notes.append("A query of yours stopped the cycle before its next batch; what it did stays (and is undoable).")
    elif stop == "dream":
        notes.append("A dream of yours started, so the cycle stopped before its next batch.")
    elif stop == "error":
        notes.append("The cycle failed; what its finished batches did stays (and is undoable).")
    report = CycleReport(
        status="completed" if stop == "done" else "interrupted", trigger=cycle.trigger,
        started_at=cycle.started.isoformat(), finished_at=timezone.now().isoformat(), stop_reason=stop,
        counters={name: cycle.counters.get(name, 0) for name in REPORTED},
        steps_done=list(cycle.steps_done), reversal_hash=cycle.reversal_hash or None,
        notes=notes, dedupe_since=cycle.dedupe_since)
    ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(
        cycle_token="", cycle_heartbeat_at=None, cycle_hash="", last_cycle=report.as_dict(), last_cycle_at=cycle.now)
    logger.info("Gardener cycle of user %s %s (%s): %s", cycle.owner.pk, report.status, stop, report.counters)
    return report

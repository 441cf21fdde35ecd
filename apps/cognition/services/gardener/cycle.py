"""A gardener cycle on a window of one user's graph: at most MAX_NODES of the live nodes they own in cubes they may
write, the next ones by id after the last window's, so that successive cycles go round the whole graph (a round), and
the links from them to their other nodes; nothing else is read for change.

Steps (limits.STEPS), each in batches sized by time (BATCH_SECONDS, at most BATCH_ITEMS items), each batch one
transaction with its writes, its Event (``gardened``, the step's ``operation`` in detail), the cycle's undo part and
the progress:
- ``prune``: links from a window node weaker than PRUNE_WEIGHT idle (last activated, else made) PRUNE_IDLE_HOURS are
  removed.
- ``dedupe``: NREM's own dedupe (services/dream/nrem.py) on the window's nodes changed since the last round began
  (every node on the first round), each against its nearest nodes in the whole graph (HNSW on a large one):
  near-duplicates merged through merge_concepts, the less similar proposed as potential_merge tasks.
- ``cycles``: each directed causal cycle within CAUSAL_HOPS causal links of a window node loses its weakest link; a
  cycle through a node of importance CANCER_IMPORTANCE or more opens a semantic_cancer task.
- ``glymphatic``: Context Graph I's purge of what expired, for this user (not undoable: its retention is over), then
  the window's orphans (no link either way) older than ORPHAN_DAYS, never accessed, less important than
  ORPHAN_IMPORTANCE are forgotten through forget_concept's service (tombstoned, restorable).
- ``scaling``: when the importance variance of the whole graph, read once when a round reaches this step first,
  exceeds SCALING_VARIANCE, each window's nodes get importance' = 0.5 + k (importance - 0.5) with
  k = sqrt(SCALING_TARGET_VARIANCE / variance): after the round the graph's variance is the target.

One UndoEntry (operation gardener) a cycle, made with its first change: each link and node row as it was before the
cycle first changed it, and the snapshots of its merges and forgets (whose own undos it covers). A query of the owner,
or a dream of theirs starting, stops the cycle before its next batch; what it did stays, undoable, and the next cycle
tends the same window again. One cycle per user at a time: a lease on the user's ActivityState, renewed before each
batch; the page's "Run a cycle now" takes it as a queued cycle (``gardener_request``) that the worker then runs.
"""
from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import ActivityState, ConsolidationRun, Event, UndoEntry
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.dream.parts import empty_snapshot, undo_part
from apps.cognition.services.dream.runs import own_cubes
from apps.cognition.services.dream.work import Work
from apps.cognition.services.gardener.activity import queried_since
from apps.cognition.services.gardener.limits import (
    BATCH_ITEMS, CAUSAL_HOPS, IDLE_ACTIVITY, LEASE_IDLE_SECONDS, ORPHAN_DAYS, ORPHAN_IMPORTANCE, PRUNE_IDLE_HOURS,
    PRUNE_WEIGHT, SCALING_VARIANCE, STEPS,
)
from apps.cognition.services.gardener.steps import BATCHES, Garden, Tending
from apps.cognition.services.gardener.window import window_begin
from apps.cognition.services.undo import undo_part_add, undo_record
from apps.core.exceptions import Conflict, DomainError
from apps.cubes.access import cube_ids_writable
from apps.graph import events
from apps.memories.models import Memory

logger = logging.getLogger(__name__)

# A running cycle tells the owner's cubes where it stands at most this often (a batch that changed a cube always
# publishes there).
PROGRESS_SECONDS = 1.0

TRIGGERS = ("auto", "manual", "admin")
# Counters that count changes to the graph (the others count work); the purge's are not undoable.
CHANGES = ("edges_pruned", "merges", "tasks_opened", "cycles_broken", "nodes_forgotten", "nodes_purged",
           "nodes_scaled")
REPORTED = (*CHANGES, "edges_cut", "nodes_compared", "snapshots_purged", "batches")


@dataclass(frozen=True)
class CycleReport:
    status: str  # completed, interrupted, failed
    trigger: str
    started_at: str
    finished_at: str
    stop_reason: str  # done, query, dream, lease, error
    counters: dict
    steps_done: list[str]
    reversal_hash: str | None
    notes: list[str]
    dedupe_since: str | None
    window: dict

    def as_dict(self) -> dict:
        return {name.name: getattr(self, name.name) for name in fields(self)}


# --- the cycle ----------------------------------------------------------------------------------------------------

def _lease_free(state: ActivityState, wall: datetime) -> bool:
    return not state.cycle_token or state.cycle_heartbeat_at is None or (
        state.cycle_heartbeat_at < wall - timedelta(seconds=LEASE_IDLE_SECONDS))


def gardener_request(*, actor: User, owner_id=None, curator: bool = False, trigger: str = "manual") -> str:
    """Ask for a cycle of the actor's graph in the background (the page's "Run a cycle now", REST's run, the admin's
    action; ``curator``: of the user ``owner_id``'s graph): its lease is taken now, as a queued cycle, so that the page
    shows it and no other cycle starts, and the worker runs it (``gardener_run`` with the token returned). Refused
    (Conflict) while a cycle or a dream of the owner is under way."""
    owner = curator_scope(actor=actor, curator=curator, rows=ActivityState.objects.filter(pk=owner_id)) \
        if curator else actor
    _check_no_dream(owner)
    ActivityState.objects.get_or_create(owner=owner)
    token = secrets.token_hex(16)
    wall = timezone.now()
    with transaction.atomic():
        state = ActivityState.objects.select_for_update().get(owner=owner)
        if not _lease_free(state, wall):
            raise _under_way()
        ActivityState.objects.filter(owner=owner).update(
            cycle_token=token, cycle_heartbeat_at=wall, cycle_hash="",
            last_cycle={"status": "queued", "trigger": trigger, "queued_at": wall.isoformat(), "counters": {}})
    return token


def _under_way() -> Conflict:
    return Conflict("A gardener cycle of yours is under way: one runs at a time.", extra={
        "field": "trigger", "suggestion": "Wait for it to finish; the gardener page shows its progress."})


def gardener_run(*, actor: User, owner_id=None, curator: bool = False, trigger: str = "manual",
                 now: datetime | None = None, batch_size: int = BATCH_ITEMS, token: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> CycleReport:
    """One gardener cycle on the next window of the actor's graph (``curator``: of the user ``owner_id``'s graph, the
    admin's). An automatic one (the tick's) runs only while the owner is still idle. Refused (Conflict) while a cycle
    or a dream of the owner is under way. ``token``: run the cycle ``gardener_request`` queued (its lease and trigger);
    refused when another cycle has taken the lease since, and recorded as failed when a dream of the owner started.
    Batches are sized by ``clock`` (limits.BATCH_SECONDS), ``batch_size`` items at most."""
    owner = curator_scope(actor=actor, curator=curator, rows=ActivityState.objects.filter(pk=owner_id)) \
        if curator else actor
    now = now or timezone.now()
    state, _ = ActivityState.objects.get_or_create(owner=owner)
    if trigger == "auto" and (state.low_since is None or state.activity >= IDLE_ACTIVITY):
        raise Conflict("You became active again before the cycle started: it waits for the next idle spell.",
                       extra={"field": "trigger"})
    cube_ids = [str(pk) for pk in cube_ids_writable(actor=owner).values_list("id", flat=True)]
    owned = Memory.objects.filter(owner=owner, cube_id__in=cube_ids, deleted_at__isnull=True)
    try:
        _check_no_dream(owner)
    except Conflict as refused:
        if token is not None:
            _refuse_queued(owner, token, cube_ids, refused)
        raise
    wall = timezone.now()
    with transaction.atomic():
        state = ActivityState.objects.select_for_update().get(owner=owner)
        if token is not None:
            if state.cycle_token != token:
                raise Conflict("The cycle you asked for did not run: another cycle of yours took its place.",
                               extra={"field": "trigger"})
            trigger = (state.last_cycle or {}).get("trigger", trigger)
        else:
            token = secrets.token_hex(16)
            if not _lease_free(state, wall):
                raise _under_way()
        window, round_ = window_begin(state, owned, wall)
        running = {"status": "running", "trigger": trigger, "started_at": wall.isoformat(), "batches": 0,
                   "step": STEPS[0], "window": window.as_dict()}
        ActivityState.objects.filter(owner=owner).update(
            cycle_token=token, cycle_heartbeat_at=wall, cycle_hash="", last_cycle=running, garden_round=round_,
            garden_cursor=window.after)
    cycle = Tending(owner=owner, cube_ids=cube_ids, now=now, started=wall, token=token, trigger=trigger,
                   window=window, round=round_, own_cube_ids=own_cubes(owner, cube_ids), clock=clock)
    _publish(cycle, None, 0, None, status="running")
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


def _refuse_queued(owner: User, token: str, cube_ids: list[str], refused: DomainError) -> None:
    """A queued cycle that cannot start: recorded as failed, with why, and its lease given back."""
    finished = timezone.now().isoformat()
    queued = ActivityState.objects.filter(owner=owner, cycle_token=token).values_list("last_cycle", flat=True).first()
    if queued is None:
        return
    report = {"status": "failed", "trigger": queued.get("trigger", "manual"), "started_at": finished,
              "finished_at": finished, "stop_reason": "refused", "counters": {}, "steps_done": [],
              "reversal_hash": None, "notes": [f"The cycle did not start: {refused.message}"]}
    if ActivityState.objects.filter(owner=owner, cycle_token=token).update(cycle_token="", cycle_heartbeat_at=None,
                                                                           last_cycle=report):
        _progress(owner, own_cubes(owner, cube_ids), status="failed", batch=0, counters={})


def _work(cycle: Tending, batch_size: int) -> str:
    batches = 0
    for step in STEPS:
        cursor, state = None, {}
        while True:
            stop = _stop_reason(cycle)
            if stop:
                return stop
            cycle.step = step
            with transaction.atomic():
                started = cycle.clock()
                work = BATCHES[step](cycle, cursor, state, cycle.pace.size(step, batch_size))
                spent = cycle.clock() - started
                batches += 1
                cycle.counters.update(work.counters)
                cycle.counters["batches"] += 1
                cycle.notes.extend(work.notes)
                if work.changed or work.undoable or work.detail.get("purged", {}).get("nodes"):
                    _record(cycle, step, batches, work)
                ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(
                    garden_round=cycle.round, last_cycle={
                        "status": "running", "trigger": cycle.trigger, "started_at": cycle.started.isoformat(),
                        "batches": batches, "step": step, "counters": dict(cycle.counters),
                        "reversal_hash": cycle.reversal_hash or None, "window": cycle.window.as_dict()})
                _publish(cycle, step, batches, work, status="running")
            cycle.pace.measured(step, work.items, spent)
            cursor = work.cursor
            if work.state is not None:
                state = work.state
            if work.done:
                cycle.steps_done.append(step)
                break
    return "done"


def _stop_reason(cycle: Tending) -> str:
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


def _record(cycle: Tending, step: str, batch: int, work: Garden) -> None:
    """The batch into the cycle's one undo (made with the first change; each batch appends its part, never rewriting
    what earlier ones kept), and one Event on the nodes it touched."""
    if work.undoable:
        if work.operation != "importance_scaling":  # the undo lists the nodes whose links or life changed
            cycle.node_ids |= work.touched
        if not cycle.reversal_hash:
            entry = undo_record(actor=cycle.owner, operation=UndoEntry.Operation.GARDENER,
                                node_ids=sorted(cycle.node_ids), snapshot=empty_snapshot())
            cycle.reversal_hash = entry.reversal_hash
            ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(cycle_hash=entry.pk)
        else:
            UndoEntry.objects.filter(pk=cycle.reversal_hash).update(node_ids=sorted(cycle.node_ids))
        # The forgets' undos join and are covered as the merges' are; scaled nodes' rows as they were before.
        part = undo_part(cycle.held, Work(link_rows=work.link_rows, merges=[*work.merges, *work.forgets],
                                          rows=[{"memories": work.memory_rows}], touched=work.touched))
        if part is not None:
            undo_part_add(entry_id=cycle.reversal_hash, part=part)
            cycle.held.absorb_snapshot(part)
    Event.objects.create(owner=cycle.owner, actor=None, actor_label="gardener", action=Event.Action.GARDENED,
                         node_ids=sorted(work.touched), reversal_hash=cycle.reversal_hash,
                         detail={"operation": work.operation, "step": step, "batch": batch,
                                 "started_at": cycle.started.isoformat(), **work.detail,
                                 "counters": dict(work.counters)})


def _publish(cycle: Tending, step: str | None, batch: int, work: Garden | None, *, status: str) -> None:
    """One gardener.changed after commit in each cube the batch changed (what changed there: nodes whose fields
    changed, nodes whose outgoing links did), and where the cycle stands in each of the owner's own cubes: at its start
    and end, and while it runs at most every PROGRESS_SECONDS (its batches are ~50 ms)."""
    changed = set(work.changed_nodes) if work else set()
    relinked_ids = work.relinked if work else set()
    moment = time.monotonic()
    progress = status != "running" or batch == 0 or moment - cycle.progress_at >= PROGRESS_SECONDS
    by_cube: dict[str, tuple[list, list]] = {cube_id: ([], []) for cube_id in cycle.own_cube_ids} if progress else {}
    for memory in Memory.objects.filter(pk__in=changed | relinked_ids, deleted_at__isnull=True):
        nodes, relinked = by_cube.setdefault(str(memory.cube_id), ([], []))
        if str(memory.pk) in changed:
            nodes.append(memory)
        if str(memory.pk) in relinked_ids:
            relinked.append(memory)
    if progress:
        cycle.progress_at = moment
    for cube_id, (nodes, relinked) in sorted(by_cube.items()):
        events.publish_after_commit(events.Kind.GARDENER_CHANGED, cube_id, events.gardener_changed(
            step=step, reversal_hash=cycle.reversal_hash or None, nodes=nodes, relinked=relinked, status=status,
            batch=batch, counters=dict(cycle.counters)))


def _progress(owner: User, cube_ids: list[str], *, status: str, batch: int, counters: dict) -> None:
    """Where a cycle that changed nothing stands, in the owner's own cubes (a queued cycle that could not start)."""
    for cube_id in cube_ids:
        events.publish_after_commit(events.Kind.GARDENER_CHANGED, cube_id, events.gardener_changed(
            step=None, reversal_hash=None, nodes=[], relinked=[], status=status, batch=batch, counters=counters))


def _summary(cycle: Tending) -> list[str]:
    """Why a finished cycle changed little, step by step."""
    counters, done, notes = cycle.counters, set(cycle.steps_done), []
    if "prune" in done and not counters["edges_pruned"]:
        notes.append(f"Prune: no link from this window weaker than {PRUNE_WEIGHT} was idle {PRUNE_IDLE_HOURS} hours.")
    if "dedupe" in done and not (counters["merges"] or counters["tasks_opened"]):
        compared = counters["nodes_compared"]
        notes.append(f"Dedupe: none of the {compared} nodes compared had a near-duplicate (cosine >= 0.90)."
                     if compared else "Dedupe: no memory or summary node of this window changed since the last "
                                      "round.")
    if "cycles" in done and not counters["cycles_broken"]:
        notes.append(f"Causal cycles: none within {CAUSAL_HOPS} causal links of this window (no chain of causal "
                     "links leads back to where it started).")
    if "glymphatic" in done and not (counters["nodes_forgotten"] or counters["nodes_purged"]):
        notes.append(f"Glymphatic clearance: nothing expired, and no unlinked node of this window older than "
                     f"{ORPHAN_DAYS} days, never accessed and below importance {ORPHAN_IMPORTANCE}.")
    if "scaling" in done and not counters["nodes_scaled"] and cycle.variance is not None:
        notes.append(f"Scaling: importance variance {cycle.variance:.3f} (the graph's, read once a round) is within "
                     f"{SCALING_VARIANCE}, so no importance was changed.")
    return notes


STATUSES = {"done": "completed", "error": "failed"}


def _finish(cycle: Tending, stop: str) -> CycleReport:
    notes = [*cycle.notes, *(_summary(cycle) if stop == "done" else [])]
    if stop == "query":
        notes.append("A query of yours stopped the cycle before its next batch; what it did stays (and is undoable), "
                     "and the next cycle tends the same window.")
    elif stop == "dream":
        notes.append("A dream of yours started, so the cycle stopped before its next batch.")
    elif stop == "error":
        notes.append("The cycle failed; what its finished batches did stays (and is undoable).")
    finished = timezone.now()
    report = CycleReport(
        status=STATUSES.get(stop, "interrupted"), trigger=cycle.trigger,
        started_at=cycle.started.isoformat(), finished_at=finished.isoformat(), stop_reason=stop,
        counters={name: cycle.counters.get(name, 0) for name in REPORTED},
        steps_done=list(cycle.steps_done), reversal_hash=cycle.reversal_hash or None,
        notes=notes, dedupe_since=cycle.dedupe_since, window=cycle.window.as_dict())
    garden = {}
    if stop == "done":  # the window is tended: the next cycle takes the next one (or the next round)
        round_ = {key: value for key, value in cycle.round.items() if key not in ("window", "scaled_through")}
        round_["windows"] = round_.get("windows", 0) + 1
        if cycle.window.last:
            round_["finished_at"] = finished.isoformat()
        garden = {"garden_round": round_, "garden_cursor": cycle.window.upto}
    if ActivityState.objects.filter(owner=cycle.owner, cycle_token=cycle.token).update(
            cycle_token="", cycle_heartbeat_at=None, cycle_hash="", last_cycle=report.as_dict(),
            last_cycle_at=cycle.now, **garden):
        _publish(cycle, cycle.step, cycle.counters["batches"], None, status=report.status)
    logger.info("Gardener cycle of user %s %s (%s): %s", cycle.owner.pk, report.status, stop, report.counters)
    return report

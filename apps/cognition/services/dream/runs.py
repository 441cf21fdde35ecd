"""A dream's run (ConsolidationRun): one per user at a time, worked in batches, stopped by its budget or a query,
resumable, and undoable as a whole by one reversal hash.

- ``dream_trigger`` makes a run (queued) for the owner, or resumes their interrupted one (or a running one whose
  worker went silent): a user has one dream at a time, which a partial unique index on the table enforces.
- ``dream_execute`` takes the run's lease (queued, or running with a heartbeat older than LEASE_IDLE_SECONDS) and
  works its phases (limits.PHASES) batch by batch. Before each batch it renews the heartbeat and reads whether a
  query of the owner asked it to stop (wake.py); it stops when the phases are done, when the batch budget
  (max_items) or the minutes run out, or on that query. A batch is sized by time (limits.BATCH_SECONDS, measured
  with the injectable clock): one item first, then as many as the phase's last batch's time per item fits, so a
  query stops the run within about one short batch. Each batch is one transaction: the phase's writes, the batch's
  Event, its part of the run's undo, then the checkpoint (last, so the run's row is locked only while the batch
  commits). A worker that dies mid-batch leaves the batch undone and the checkpoint where it was; the next one
  resumes there, so a resumed run ends in the graph an uninterrupted one makes.
- The run's undo is an UndoEntry of operation dream under the run's reversal hash: each link as it was before the
  run first changed or removed it, the links the run made, and the snapshots of the merges it made (which stay
  undoable one by one). Each batch appends what it adds as an UndoPart (never rewriting what earlier batches kept),
  and restore_from_hash reads the entry with its parts in order, like any other (services/undo.py).
"""
from __future__ import annotations

import copy
import logging
import secrets
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import ConsolidationRun, DreamList, Event, SessionItem, UndoEntry
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.dream import clusters, commit, nrem, rem
from apps.cognition.services.dream.limits import (
    BATCH_ITEMS, BATCH_SECONDS, DREAM_MINUTES, LEASE_IDLE_SECONDS, MAX_ITEMS, PHASES, PROGRESS_SECONDS,
    SYNTHETIC_QUERIES,
)
from apps.cognition.services.dream.parts import UndoHeld, empty_snapshot, undo_held, undo_part
from apps.cognition.services.dream.work import Context, Pace, Work
from apps.cognition.services.neuromod import levels_of
from apps.cognition.services.sessions import session_get
from apps.cognition.services.undo import undo_apply, undo_part_add, undo_record
from apps.core.exceptions import Conflict, DomainError, InvalidInput, NotFound, Unavailable
from apps.cubes.access import cube_ids_writable
from apps.cubes.models import Cube
from apps.graph import events
from apps.memories.models import Memory

logger = logging.getLogger(__name__)

Status = ConsolidationRun.Status
# Each phase's batch: (context, cursor, size) -> Work.
BATCHES = {"nrem_replay": nrem.replay, "nrem_link": nrem.link, "nrem_dedupe": nrem.dedupe,
           "nrem_summarise": clusters.summarise, "nrem_commit": commit.commit_thoughts, "rem": rem.dream_walks}
COUNTERS = ("items", "batches", "items_replayed", "edges_strengthened", "edges_weakened", "edges_reactivated",
            "edges_pruned", "pairs_examined", "new_edges_created", "nodes_compared", "merges", "nodes_merged",
            "tasks_opened", "nodes_clustered", "clusters_examined", "summaries_created", "summaries_updated",
            "summaries_unchanged", "summary_edges_created", "summary_edges_removed", "summary_edges_reweighted",
            "thoughts_examined", "thoughts_committed", "walks", "blind_spots_discovered", "leaps_linked",
            "shortcuts_created")


def learning_rate(owner: User) -> tuple[float, float]:
    """(acetylcholine, eta = 10 x acetylcholine) of the owner's latest session (services/neuromod.py: 0.001 (1 + L),
    so eta is 0.01 at rest and 0.02 at the highest learning score), read when the run is made."""
    levels = levels_of(session_get(actor=owner))
    return levels.acetylcholine, levels.learning_rate


# --- trigger ------------------------------------------------------------------------------------------------------

def _stale(run: ConsolidationRun, now) -> bool:
    """A run whose worker went silent: running without a heartbeat for LEASE_IDLE_SECONDS, or queued that long."""
    moment = run.heartbeat_at if run.status == Status.RUNNING else run.updated_at
    return moment is None or moment < now - timedelta(seconds=LEASE_IDLE_SECONDS)


def _windows(owner: User, now) -> dict:
    """What the run replays: the owner's session items after the last completed NREM's window, up to the newest
    now; and, for dedupe, the nodes changed since that dream started."""
    last = (ConsolidationRun.objects.filter(owner=owner, status=Status.COMPLETED,
                                            phase__in=[ConsolidationRun.Phase.NREM, ConsolidationRun.Phase.FULL_CYCLE])
            .order_by("-started_at").first())
    after = (last.checkpoint.get("windows", {}).get("replay") or [0, 0])[1] if last else 0
    upto = (SessionItem.objects.filter(session__owner=owner).order_by("-pk").values_list("pk", flat=True).first()
            or 0)
    return {"replay": [after, max(after, upto)], "started": now.isoformat(),
            "dedupe_since": last.started_at.isoformat() if last and last.started_at else None}


def dream_trigger(*, actor: User, phase: str = ConsolidationRun.Phase.FULL_CYCLE, duration_minutes=None,
                  synthetic_query_count=None, abort_on_query: bool = True, max_items=None, batch_size=None,
                  seed: int | None = None) -> ConsolidationRun:
    """The actor's dream, ready to execute: a new run (queued), or their interrupted one resumed with this budget
    (its phase, seed and windows stay), or a running one whose worker went silent. A dream under way is a Conflict."""
    if phase not in ConsolidationRun.Phase.values:
        raise InvalidInput(f"phase must be one of {', '.join(ConsolidationRun.Phase.values)}.", field="phase")
    budget = {"minutes": DREAM_MINUTES.clean(duration_minutes, field="duration_minutes"),
              "synthetic_query_count": SYNTHETIC_QUERIES.clean(synthetic_query_count, field="synthetic_query_count"),
              "max_items": MAX_ITEMS.clean(max_items, field="max_items"),
              "batch_size": BATCH_ITEMS.clean(batch_size, field="batch_size")}
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63):
        raise InvalidInput("seed must be a whole number from 0 to 2^63 - 1.", field="seed")
    now = timezone.now()
    with transaction.atomic():
        waiting = list(ConsolidationRun.objects.select_for_update().filter(
            owner=actor, status__in=[*ConsolidationRun.ACTIVE, Status.INTERRUPTED]).order_by("-created_at"))
        active = next((run for run in waiting if run.status in ConsolidationRun.ACTIVE), None)
        if active is not None and not _stale(active, now):
            raise Conflict(f"A dream of yours is under way already (dream_run_id {active.pk}, {active.status}).",
                           extra={"field": "phase", "dream_run_id": str(active.pk),
                                  "suggestion": "Wait for it to finish, or query the graph to wake it; one dream "
                                                "runs per user at a time."})
        resumed = active or next((run for run in waiting if run.status == Status.INTERRUPTED), None)
        if resumed is not None:
            note = (f"Resumed the {resumed.phase} dream {resumed.pk} that stopped at phase "
                    f"{resumed.checkpoint.get('phase')} ({resumed.progress.get('stop_reason', 'worker lost')}).")
            ConsolidationRun.objects.filter(pk=resumed.pk).update(
                budget={**budget, "synthetic_query_count": resumed.budget.get("synthetic_query_count",
                                                                              budget["synthetic_query_count"])},
                abort_on_query=abort_on_query, abort_requested_at=None, interrupt_requested_at=None,
                notes=[*resumed.notes, note],
                status=resumed.status if resumed.status == Status.RUNNING else Status.QUEUED, updated_at=now)
            resumed.refresh_from_db()
            return resumed
        acetylcholine, eta = learning_rate(actor)
        try:
            with transaction.atomic():
                run = ConsolidationRun.objects.create(
                    owner=actor, phase=phase, budget=budget, seed=secrets.randbits(63) if seed is None else seed,
                    abort_on_query=abort_on_query, checkpoint={
                        "phase": PHASES[phase][0], "cursor": None, "phases_done": [], "state": {},
                        "counters": dict.fromkeys(COUNTERS, 0), "windows": _windows(actor, now), "eta": eta,
                        "acetylcholine": acetylcholine},
                    progress={"batches": 0, "items": 0, "duration_ms": 0})
                entry = undo_record(actor=actor, operation=UndoEntry.Operation.DREAM, node_ids=[],
                                    snapshot=empty_snapshot())
                run.reversal_hash = entry.reversal_hash
                run.save(update_fields=["reversal_hash"])
        except IntegrityError:  # another trigger of the same user won the race
            raise Conflict("A dream of yours was started at the same moment.", extra={
                "field": "phase", "suggestion": "Call trigger_dream again in a moment to see it."}) from None
    return run


def dream_get(*, actor: User, run_id) -> ConsolidationRun:
    run = ConsolidationRun.objects.filter(owner=actor, pk=_run_uuid(run_id)).first()
    if run is None:
        raise NotFound(f"Dream run {run_id} not found: it is not one of yours.", extra={"field": "dream_run_id"})
    return run


def dream_interrupt(*, actor: User, run_id, curator: bool = False) -> ConsolidationRun:
    """Stop the actor's dream: a queued one at once (interrupted, resumable), a running one at its next batch (the
    batch under way finishes), whatever its abort_on_query. A run that is not under way is a Conflict.
    ``curator``: any user's dream (the admin's)."""
    owner = curator_scope(actor=actor, curator=curator, rows=ConsolidationRun.objects.filter(pk=_run_uuid(run_id)))
    run = dream_get(actor=owner, run_id=run_id)
    now = timezone.now()
    if ConsolidationRun.objects.filter(pk=run.pk, status=Status.QUEUED).update(
            status=Status.INTERRUPTED, interrupt_requested_at=now, updated_at=now,
            progress={**run.progress, "stop_reason": "interrupt"},
            notes=[*run.notes, "You interrupted the dream before it started; trigger_dream resumes it."]):
        return ConsolidationRun.objects.get(pk=run.pk)
    if not ConsolidationRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(interrupt_requested_at=now):
        raise Conflict(f"Dream run {run.pk} is {run.status}: only a queued or running dream can be interrupted.",
                       extra={"field": "dream_run_id", "status": run.status})
    return ConsolidationRun.objects.get(pk=run.pk)


def _run_uuid(run_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(run_id))
    except ValueError:
        raise InvalidInput("dream_run_id must be a UUID that trigger_dream returned.", field="dream_run_id") from None


# --- execute ------------------------------------------------------------------------------------------------------

class LeaseLost(Exception):
    """Another worker took the run over (this one was silent too long): this one stops, its batch rolled back."""


def _take(run_id, token: str) -> bool:
    now = timezone.now()
    idle = now - timedelta(seconds=LEASE_IDLE_SECONDS)
    return bool(ConsolidationRun.objects.filter(
        Q(status=Status.QUEUED) | Q(status=Status.RUNNING, heartbeat_at__lt=idle) |
        Q(status=Status.RUNNING, heartbeat_at__isnull=True), pk=run_id,
    ).update(status=Status.RUNNING, lease_owner=token, heartbeat_at=now, updated_at=now))


def _beat(run_id, token: str) -> str | None:
    """Renew the lease; what asked the run to stop ("interrupt": its owner, "query": a query of theirs, "": nothing;
    None: the lease is someone else's now)."""
    mine = ConsolidationRun.objects.filter(pk=run_id, lease_owner=token, status=Status.RUNNING)
    if not mine.update(heartbeat_at=timezone.now()):
        return None
    interrupt, abort_on_query, woken = mine.values_list("interrupt_requested_at", "abort_on_query",
                                                        "abort_requested_at").get()
    return "interrupt" if interrupt else "query" if abort_on_query and woken else ""


@dataclass
class _Running:
    run: ConsolidationRun
    token: str
    undo: UndoHeld
    cube_ids: list[str]
    # The owner's own cubes among them: each batch's dream.progress goes to these.
    own_cube_ids: list[str]
    clock: Callable[[], float] = time.monotonic
    pace: Pace = field(default_factory=lambda: Pace(BATCH_SECONDS))
    # The phase and the moment of the last dream.progress sent.
    told: tuple[str | None, float] = (None, float("-inf"))


def dream_execute(*, run_id, clock=time.monotonic) -> ConsolidationRun:
    """Work the run until its phases are done, its budget is spent or a query of its owner wakes it. A run that is
    finished, or that a live worker holds, is left alone (so the task may run twice)."""
    token = secrets.token_hex(16)
    if not _take(run_id, token):
        return ConsolidationRun.objects.get(pk=run_id)
    run = ConsolidationRun.objects.select_related("owner").get(pk=run_id)
    if run.started_at is None:
        run.started_at = timezone.now()
        ConsolidationRun.objects.filter(pk=run.pk).update(started_at=run.started_at)
    entry = UndoEntry.objects.filter(pk=run.reversal_hash).first()
    if entry is None or entry.used_at is not None:  # its undo is gone: nothing undoable left to build on
        if entry is not None:
            return _stop(run, token, Status.ROLLED_BACK, "undone", ["The dream was undone: it stops."])
        return _stop(run, token, Status.COMPLETED, "expired",
                     ["The dream's undo expired before it finished: it stops where it was, and is no longer undoable."])
    cube_ids = [str(pk) for pk in cube_ids_writable(actor=run.owner).values_list("id", flat=True)]
    state = _Running(run=run, token=token, undo=undo_held(entry), cube_ids=cube_ids,
                     own_cube_ids=own_cubes(run.owner, cube_ids), clock=clock)
    begun = clock()
    done_here = 0
    try:
        while True:
            wake = _beat(run.pk, token)
            if wake is None:
                return ConsolidationRun.objects.get(pk=run.pk)
            if wake:
                why = ("You interrupted the dream" if wake == "interrupt" else "A query of yours woke the dream")
                return _stop(run, token, Status.INTERRUPTED, wake,
                             [f"{why}; trigger_dream resumes it from its checkpoint."], elapsed=clock() - begun)
            if run.checkpoint.get("phase") is None:
                return _stop(run, token, Status.COMPLETED, "done", _summary(run.checkpoint), elapsed=clock() - begun)
            if clock() - begun >= run.budget["minutes"] * 60:
                return _stop(run, token, Status.INTERRUPTED, "minutes",
                             [f"The dream used its {run.budget['minutes']} minutes; trigger_dream resumes it."],
                             elapsed=clock() - begun)
            room = run.budget["max_items"] - done_here
            if room <= 0:
                return _stop(run, token, Status.INTERRUPTED, "budget",
                             [f"The dream did its {run.budget['max_items']} items; trigger_dream resumes it."],
                             elapsed=clock() - begun)
            work = _batch(state, state.pace.size(run.checkpoint["phase"], min(run.budget["batch_size"], room)))
            done_here += work.items
    except LeaseLost:
        logger.warning("Dream %s was taken over by another worker", run.pk)
        return ConsolidationRun.objects.get(pk=run.pk)
    except Unavailable as exc:  # the model or the database is away for now: resumable as it stands
        logger.warning("Dream %s paused: %s", run.pk, exc)
        return _stop(run, token, Status.INTERRUPTED, "unavailable",
                     [f"The dream paused: {exc.message} trigger_dream resumes it."], elapsed=clock() - begun)
    except DomainError as exc:  # it cannot go on (a cube no longer writable): what it did is undone
        logger.warning("Dream %s cannot go on: %s", run.pk, exc)
        stopped = _stop(run, token, Status.INTERRUPTED, "refused", [f"The dream could not go on: {exc.message}"],
                        elapsed=clock() - begun)
        return dream_rollback(run=stopped)
    except Exception:
        logger.exception("Dream %s failed", run.pk)
        _stop(run, token, Status.INTERRUPTED, "error", ["The dream failed; trigger_dream resumes it."],
              elapsed=clock() - begun)
        raise


def _context(state: _Running, checkpoint: dict) -> Context:
    undo = state.undo  # the phases only read these sets
    return Context(run=state.run, owner=state.run.owner, cube_ids=state.cube_ids, eta=checkpoint["eta"],
                   windows=checkpoint["windows"], state=checkpoint.get("state") or {},
                   seen_links=undo.kept["links"], made_links=undo.made_links, seen_memories=undo.memories,
                   changed_pairs=undo.pairs, lengths=dict(checkpoint.get("lists") or {}))


def _batch(state: _Running, size: int) -> Work:
    run = state.run
    # The phase's state is not copied: a batch that fails ends the execution, and the next one reads the checkpoint
    # back from the row.
    checkpoint = {**run.checkpoint, "counters": dict(run.checkpoint["counters"]),
                  "phases_done": list(run.checkpoint["phases_done"]), "lists": dict(run.checkpoint.get("lists") or {})}
    phase = checkpoint["phase"]
    with transaction.atomic():
        started = state.clock()
        work = BATCHES[phase](_context(state, checkpoint), checkpoint["cursor"], size)
        spent = state.clock() - started
        part = undo_part(state.undo, work)
        if part is not None:  # appended, never a rewrite of what earlier batches kept
            undo_part_add(entry_id=run.reversal_hash, part=part)
        _append(run, checkpoint["lists"], work.appended)
        counters = Counter(checkpoint["counters"])
        counters.update(work.counters)
        counters["items"] += work.items
        counters["batches"] += 1
        checkpoint["counters"] = dict(counters)
        if work.done:
            order = PHASES[run.phase]
            checkpoint["phases_done"].append(phase)
            following = order.index(phase) + 1
            if checkpoint["lists"]:  # the step kept lists: they go with it
                DreamList.objects.filter(run=run).delete()
            checkpoint.update(phase=order[following] if following < len(order) else None, cursor=None, state={},
                              lists={})
        else:
            checkpoint["cursor"] = work.cursor
            if work.state is not None:
                checkpoint["state"] = work.state
        if work.changed:
            _record(run, phase, counters["batches"], work)
        moment = state.clock()
        if work.done or state.told[0] != phase or moment - state.told[1] >= PROGRESS_SECONDS:
            _progress(run.pk, state.own_cube_ids, status=Status.RUNNING, phase=phase, batch=counters["batches"],
                      counters=dict(counters))
            state.told = (phase, moment)
        steps = copy.deepcopy(run.progress.get("steps", {}))
        step = steps.setdefault(phase, {"batches": 0, "items": 0})
        step["batches"] += 1
        step["items"] += work.items
        progress = {**run.progress, "batches": counters["batches"], "items": counters["items"], "phase": phase,
                    "steps": steps}
        notes = [*run.notes, *work.notes]
        # Last: the run's row is locked only while the batch commits, so a query waking it never waits long.
        if not ConsolidationRun.objects.filter(pk=run.pk, lease_owner=state.token, status=Status.RUNNING).update(
                checkpoint=checkpoint, progress=progress, notes=notes, heartbeat_at=timezone.now(),
                updated_at=timezone.now()):
            raise LeaseLost()
    run.checkpoint, run.progress, run.notes = checkpoint, progress, notes
    state.pace.measured(phase, work.items, spent)
    if part is not None:
        state.undo.absorb_snapshot(part)
    return work


def _append(run: ConsolidationRun, lengths: dict[str, int], appended: dict[str, list]) -> None:
    """Append a batch's items to the run's lists (one INSERT), numbering each list on from its length."""
    rows = []
    for key, items in appended.items():
        start = lengths.get(key, 0)
        rows += [DreamList(run=run, key=key, seq=start + offset, item=item) for offset, item in enumerate(items)]
        lengths[key] = start + len(items)
    DreamList.objects.bulk_create(rows, batch_size=5000)


def _record(run: ConsolidationRun, phase: str, batch: int, work: Work) -> None:
    """The batch as one Event on the nodes it touched (the run's reversal hash undoes it), and as a dream.changed on
    the live graph of each cube it touched: the nodes it made or rewrote, and the outgoing links of those whose
    outgoing links changed (merges publish their own)."""
    Event.objects.create(owner=run.owner, actor=None, actor_label="dream", action=Event.Action.DREAMED,
                         node_ids=sorted(work.touched), reversal_hash=run.reversal_hash,
                         detail={"dream_run_id": str(run.pk), "phase": phase, "batch": batch, **work.detail,
                                 "counters": dict(work.counters)})
    shown = {str(memory.pk): memory for memory in Memory.objects.filter(
        pk__in=work.relinked | work.redrawn, deleted_at__isnull=True)}
    by_cube: dict[str, list[Memory]] = defaultdict(list)
    for memory in shown.values():
        by_cube[str(memory.cube_id)].append(memory)
    for cube_id, memories in sorted(by_cube.items()):
        memories.sort(key=lambda memory: str(memory.pk))
        events.publish_after_commit(events.Kind.DREAM_CHANGED, cube_id, events.dream_changed(
            run_id=run.pk, phase=phase, batch=batch,
            nodes=[memory for memory in memories if str(memory.pk) in work.redrawn],
            relinked=[memory for memory in memories if str(memory.pk) in work.relinked | work.redrawn]))


def own_cubes(owner: User, cube_ids: list[str]) -> list[str]:
    return sorted(str(pk) for pk in Cube.objects.filter(pk__in=cube_ids, owner=owner).values_list("pk", flat=True))


def _progress(run_id, cube_ids: list[str], **progress) -> None:
    for cube_id in cube_ids:
        events.publish_after_commit(events.Kind.DREAM_PROGRESS, cube_id,
                                    events.dream_progress(run_id=run_id, **progress))


def _summary(checkpoint: dict) -> list[str]:
    """Why a finished run changed little, phase by phase (what did not qualify)."""
    counters, notes = checkpoint["counters"], []
    done = checkpoint.get("phases_done", [])
    reweighted = sum(counters.get(name, 0) for name in
                     ("edges_strengthened", "edges_weakened", "edges_reactivated", "edges_pruned"))
    if "nrem_replay" in done and counters.get("items_replayed") and not reweighted:
        notes.append("NREM replay: no two nodes an item activated together were joined by an edge, so no weight "
                     "changed.")
    if "nrem_dedupe" in done and counters.get("nodes_compared") and not (counters.get("merges")
                                                                          or counters.get("tasks_opened")):
        notes.append("NREM dedupe: no two nodes were near-duplicates (cosine >= 0.90).")
    if "rem" in done and counters.get("walks") and not any(counters.get(name) for name in (
            "blind_spots_discovered", "leaps_linked", "shortcuts_created")):
        notes.append(f"REM: {counters['walks']} walks found no blind spot, no leap (cosine >= 0.7 with no path of 3 "
                     "links) and no path walked 5 times.")
    return notes


def _stop(run: ConsolidationRun, token: str, status: str, reason: str, notes: list[str], *,
          elapsed: float = 0.0) -> ConsolidationRun:
    now = timezone.now()
    fresh = ConsolidationRun.objects.get(pk=run.pk)
    progress = {**fresh.progress, "stop_reason": reason,
                "duration_ms": int(fresh.progress.get("duration_ms", 0) + elapsed * 1000),
                "last_duration_ms": int(elapsed * 1000)}
    if ConsolidationRun.objects.filter(pk=run.pk, lease_owner=token).update(
            status=status, lease_owner="", progress=progress, notes=[*fresh.notes, *notes], updated_at=now,
            finished_at=now if status in (Status.COMPLETED, Status.ROLLED_BACK) else None):
        checkpoint = fresh.checkpoint
        _progress(run.pk, own_cubes(run.owner, [str(pk) for pk in cube_ids_writable(actor=run.owner).values_list(
            "id", flat=True)]), status=status, phase=checkpoint.get("phase"),
            batch=checkpoint.get("counters", {}).get("batches", 0), counters=checkpoint.get("counters", {}))
    return ConsolidationRun.objects.get(pk=run.pk)


def dream_rollback(*, run: ConsolidationRun) -> ConsolidationRun:
    """Undo everything a stopped run did (its reversal hash); a run that cannot be undone stays interrupted."""
    try:
        undo_apply(actor=run.owner, reversal_hash=run.reversal_hash, preview=False)
    except DomainError as exc:
        logger.warning("Dream %s could not be rolled back: %s", run.pk, exc)
        ConsolidationRun.objects.filter(pk=run.pk).update(notes=[*run.notes, f"Not rolled back: {exc.message}"])
    return ConsolidationRun.objects.get(pk=run.pk)

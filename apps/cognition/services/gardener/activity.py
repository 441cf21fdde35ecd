"""How active each user is: their queries counted without a statement on the query's path, folded into an EWMA by
the 30 s beat tick (``activity_tick``), which also says whose gardener cycle and whose dream are due.

``count_query`` is registered at start-up (apps.py) as a listener of apps/memories/queries.py, beside the dream's
wake. It only adds one to the user's count in this process and nudges one background thread, which writes the
counts gathered over FLUSH_SECONDS in one statement on its own connection (``activity_flush``); the tick flushes its
own process's counts too before it reads. A count whose user the flush cannot see yet (a transaction not committed)
is kept for the next flush, for at most KEEP_UNWRITTEN_SECONDS.

Time is injectable: the tick and the decisions take ``now`` (the beat's moment), so tests run on a fake clock. The
in-process ``latest`` query time is wall-clock: a cycle compares it with its own wall-clock start to stop."""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import ActivityState, ConsolidationRun
from apps.cognition.services.dream import dream_trigger
from apps.cognition.services.gardener.limits import (
    ALPHA, IDLE_ACTIVITY, IDLE_SECONDS_FOR_CYCLE, IDLE_SECONDS_FOR_DREAM, LEASE_IDLE_SECONDS, MAX_CATCH_UP_TICKS,
    MIN_TICK_SECONDS, QUERIES_FOR_FULL, SECONDS_BETWEEN_CYCLES, TICK_SECONDS,
)
from apps.core.exceptions import DomainError

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
KEEP_UNWRITTEN_SECONDS = 600

_lock = threading.Lock()
# Serialises flushes: the tick's flush waits for the thread's write under way, so it reads every counted query.
_flush_lock = threading.Lock()
_counts: Counter[int] = Counter()
_last: dict[int, datetime] = {}
# The latest query of each user seen by this process (never cleared): a cycle running here stops on it at once.
_latest: dict[int, datetime] = {}
_nudge = threading.Event()
_thread: threading.Thread | None = None


def count_query(user_id: int) -> None:
    global _thread
    moment = timezone.now()
    with _lock:
        _counts[user_id] += 1
        _last[user_id] = moment
        _latest[user_id] = moment
        if _thread is None or not _thread.is_alive():  # first query of the process (or of a forked child)
            _thread = threading.Thread(target=_loop, name="gardener-activity", daemon=True)
            _thread.start()
    _nudge.set()


def queried_since(user_id: int, moment: datetime) -> bool:
    """Whether this process saw a query of the user after ``moment`` (wall-clock)."""
    latest = _latest.get(user_id)
    return latest is not None and latest > moment


def _loop() -> None:
    while True:
        _nudge.wait()
        _nudge.clear()
        time.sleep(FLUSH_SECONDS)  # the queries of the next second go into the same statement
        try:
            activity_flush()
        except Exception as exc:  # the database is away: the counts were kept for the next flush
            logger.warning("Could not write query counts: %s", exc)
        finally:
            connection.close()


def activity_flush() -> int:
    """Write this process's counted queries to ActivityState (one statement); how many users were written."""
    with _flush_lock:
        with _lock:
            counts, last = dict(_counts), dict(_last)
            _counts.clear()
            _last.clear()
        if not counts:
            return 0
        try:
            written = _write(counts, last)
        except Exception:
            _keep(counts, last)
            raise
        cutoff = timezone.now() - timedelta(seconds=KEEP_UNWRITTEN_SECONDS)
        _keep({user: n for user, n in counts.items() if user not in written and last[user] > cutoff}, last)
        return len(written)


def _keep(counts: dict[int, int], last: dict[int, datetime]) -> None:
    with _lock:
        for user, n in counts.items():
            _counts[user] += n
            _last[user] = max(last[user], _last.get(user, last[user]))


def _write(counts: dict[int, int], last: dict[int, datetime]) -> set[int]:
    table, users = ActivityState._meta.db_table, User._meta.db_table
    ids = sorted(counts)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} AS s (owner_id, activity, pending_queries, queries_total, last_tick_queries, "
            f"  last_query_at, last_cycle, cycle_token, cycle_hash, garden_round) "
            f"SELECT u.id, 0, c.n, c.n, 0, c.at, '{{}}'::jsonb, '', '', '{{}}'::jsonb "
            f"FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS c(id, n, at) JOIN {users} u ON u.id = c.id "
            f"ON CONFLICT (owner_id) DO UPDATE SET pending_queries = s.pending_queries + excluded.pending_queries, "
            f"  queries_total = s.queries_total + excluded.queries_total, "
            f"  last_query_at = greatest(s.last_query_at, excluded.last_query_at) "
            f"RETURNING s.owner_id",
            [ids, [counts[user] for user in ids], [last[user] for user in ids]])
        return {row[0] for row in cursor.fetchall()}


# --- the tick -----------------------------------------------------------------------------------------------------

def ewma_step(activity: float, queries: int, ticks: int = 1) -> float:
    """The EWMA after ``ticks`` ticks in which ``queries`` were counted (spread evenly over them)."""
    share = min(1.0, queries / ticks / QUERIES_FOR_FULL)
    for _ in range(ticks):
        activity = ALPHA * share + (1 - ALPHA) * activity
    return activity


def _fold(state: ActivityState, now: datetime) -> bool:
    """Fold the state's counted queries into its EWMA at ``now``; False when the last tick was too recent."""
    if state.last_tick_at is not None:
        elapsed = (now - state.last_tick_at).total_seconds()
        if elapsed < MIN_TICK_SECONDS:
            return False
        ticks = max(1, min(MAX_CATCH_UP_TICKS, round(elapsed / TICK_SECONDS)))
    else:
        ticks = 1
    state.activity = ewma_step(state.activity, state.pending_queries, ticks)
    state.last_tick_queries, state.pending_queries, state.last_tick_at = state.pending_queries, 0, now
    if state.activity < IDLE_ACTIVITY:
        state.low_since = state.low_since or now
    else:
        state.low_since = None
    return True


def _write_folded(states: list[ActivityState]) -> None:
    """The folded states in one UPDATE joined to their new values as arrays: linear in the users, where
    bulk_update's CASE per field per row took 2.4 s to build and run for 1,000 users."""
    if not states:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {ActivityState._meta.db_table} AS s SET activity = v.activity, pending_queries = v.pending, "
            "last_tick_queries = v.counted, last_tick_at = v.ticked, low_since = v.low_since "
            "FROM unnest(%s::bigint[], %s::float8[], %s::int[], %s::int[], %s::timestamptz[], %s::timestamptz[]) "
            "AS v (owner_id, activity, pending, counted, ticked, low_since) WHERE s.owner_id = v.owner_id",
            [[state.owner_id for state in states], [state.activity for state in states],
             [state.pending_queries for state in states], [state.last_tick_queries for state in states],
             [state.last_tick_at for state in states], [state.low_since for state in states]])


@dataclass(frozen=True)
class Readiness:
    """Whether a user's gardener cycle and dream are due at a moment, and why not (sentences for the page)."""

    cycle_due: bool
    dream_due: bool
    waiting: list[str] = field(default_factory=list)


def readiness(state: ActivityState, *, now: datetime, dream_active: bool, dream_since_idle: bool) -> Readiness:
    """The gardener's rules for one user (docs/context_graph.md, "Gardener"): both need the user idle (activity below
    IDLE_ACTIVITY); a cycle after IDLE_SECONDS_FOR_CYCLE of it, SECONDS_BETWEEN_CYCLES after the last, with no dream
    and no other cycle running (whatever the graph's size: a cycle tends a window of it); a dream after
    IDLE_SECONDS_FOR_DREAM of it, unless one ran or was triggered since the user went idle, or one is under way."""
    waiting = []
    if state.low_since is None and state.last_tick_at is None:
        waiting.append("Your activity has not been measured yet: the beat measures it every "
                       f"{TICK_SECONDS} s, and the gardener waits until you have been idle a while.")
        return Readiness(False, False, waiting)
    if state.low_since is None or state.activity >= IDLE_ACTIVITY:
        waiting.append(f"You are active (activity {state.activity:.2f}, idle below {IDLE_ACTIVITY}): the gardener "
                       "and the dream wait until you pause.")
        return Readiness(False, False, waiting)
    idle = (now - state.low_since).total_seconds()
    cycle_due = True
    if idle < IDLE_SECONDS_FOR_CYCLE:
        cycle_due = False
        waiting.append(f"Idle for {int(idle)} s: a cycle starts after {IDLE_SECONDS_FOR_CYCLE // 60} idle minutes.")
    if state.last_cycle_at is not None:
        since = (now - state.last_cycle_at).total_seconds()
        if since < SECONDS_BETWEEN_CYCLES:
            cycle_due = False
            waiting.append(f"The last cycle was {int(since)} s ago: cycles are at least "
                           f"{SECONDS_BETWEEN_CYCLES // 60} minutes apart.")
    if dream_active:
        cycle_due = False
        waiting.append("A dream of yours is under way: the gardener waits for it.")
    if cycle_running(state):
        cycle_due = False
        waiting.append("A gardener cycle of yours is under way.")
    dream_due = (idle >= IDLE_SECONDS_FOR_DREAM and not dream_active and not dream_since_idle
                 and not cycle_running(state))
    return Readiness(cycle_due, dream_due, waiting)


def cycle_running(state: ActivityState) -> bool:
    """A cycle holds the user's lease (its heartbeat is recent, wall-clock)."""
    return bool(state.cycle_token) and state.cycle_heartbeat_at is not None and (
        state.cycle_heartbeat_at >= timezone.now() - timedelta(seconds=LEASE_IDLE_SECONDS))


def dreams_of(owner_ids) -> dict[int, tuple[bool, datetime | None]]:
    """Each user's (a dream under way, the latest change of any of their dreams): one query."""
    rows = (ConsolidationRun.objects.filter(owner_id__in=list(owner_ids)).values("owner_id")
            .annotate(latest=Max("updated_at"), active=Count("pk", filter=Q(status__in=ConsolidationRun.ACTIVE))))
    return {row["owner_id"]: (row["active"] > 0, row["latest"]) for row in rows}


def dream_since(state: ActivityState, latest: datetime | None) -> bool:
    """A dream ran or was triggered since the user went idle (by the tick, or any of theirs that changed since)."""
    since = state.low_since
    return since is not None and ((state.last_dream_at is not None and state.last_dream_at >= since)
                                  or (latest is not None and latest >= since))


@dataclass(frozen=True)
class TickReport:
    updated: int
    # Users whose cycle is due (the task starts each), and the dreams triggered (the task queues each run).
    cycles: list[int]
    dreams: list[str]
    waiting: dict[int, list[str]]


def activity_tick(*, now: datetime | None = None) -> TickReport:
    """One beat: flush this process's counts, fold every active user's counted queries into their EWMA, trigger the
    dreams that are due (auto-dream) and say whose cycles are due (the task starts the runs and the cycles). A fixed
    number of queries whatever the number of users, plus a few for each dream triggered."""
    now = now or timezone.now()
    activity_flush()
    missing = User.objects.filter(is_active=True, activity_state__isnull=True).values_list("pk", flat=True)
    ActivityState.objects.bulk_create([ActivityState(owner_id=pk) for pk in missing], ignore_conflicts=True)
    with transaction.atomic():
        states = list(ActivityState.objects.select_for_update().filter(owner__is_active=True).order_by("pk"))
        folded = [state for state in states if _fold(state, now)]
        _write_folded(folded)
    idle = [state for state in states if state.low_since is not None and state.activity < IDLE_ACTIVITY]
    dreams = dreams_of(state.owner_id for state in idle)
    cycles, due_dreams, waiting = [], [], {}
    for state in idle:
        active, latest = dreams.get(state.owner_id, (False, None))
        ready = readiness(state, now=now, dream_active=active, dream_since_idle=dream_since(state, latest))
        if ready.dream_due:
            due_dreams.append(state.owner_id)
        elif ready.cycle_due:
            cycles.append(state.owner_id)
        else:
            waiting[state.owner_id] = ready.waiting
    runs, dreamers = [], []
    for user in User.objects.filter(pk__in=due_dreams).order_by("pk"):
        try:
            runs.append(str(dream_trigger(actor=user).pk))
            dreamers.append(user.pk)
        except DomainError as exc:  # one started meanwhile (a Conflict): it is their dream since they went idle
            waiting[user.pk] = [exc.message]
    if dreamers:
        ActivityState.objects.filter(owner_id__in=dreamers).update(last_dream_at=now)
    return TickReport(updated=len(folded), cycles=cycles, dreams=runs, waiting=waiting)

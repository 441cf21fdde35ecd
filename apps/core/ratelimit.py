"""Platform-wide rate limits per user: REST and MCP spend one budget.

Two windows apply at once: ``ENGRAM_RATE_LIMIT_PER_MINUTE`` calls a minute (100) and a burst of
``ENGRAM_RATE_LIMIT_BURST`` calls in ``ENGRAM_RATE_LIMIT_BURST_SECONDS`` seconds (20 in 10). A call is
allowed only when both have room, and then counts in both; a refused call counts in neither, so a
client that keeps retrying during a burst refusal does not also burn its minute. A decision reports the
*binding* window, the one with the least room left (on a tie, the one that frees room later): its limit,
``remaining`` and ``reset_seconds``, the seconds until it starts afresh.

Fixed windows, not sliding ones: a window is a multiple of its length in Unix time, so a counter is one
number per user and window, changed by one atomic statement, and it needs no list of timestamps. The cost
is the known edge effect: a client may spend a full window's budget just before a boundary and again just
after it. The burst window bounds that for the minute (at most twice the burst across a burst boundary).

Counters live where every process sees them:
- with ``REDIS_URL``, in Redis: one Lua script reads both windows' keys (``<prefix>:<user>:<window>:<start>``)
  and increments them only when both have room, atomically; keys expire with their window. If Redis does
  not answer, the call is allowed and a warning logged: a rate limiter must not take the platform down.
- otherwise in PostgreSQL (``RateLimitCounter``): one ``INSERT ... ON CONFLICT DO UPDATE`` upserts both
  windows' rows, which also locks them, so concurrent calls of one user queue up; a refusal rolls it back.
  Each row holds the start of its current window and is overwritten when a new one begins, so the table
  has two rows per user at most and never needs pruning. A process whose clock lags keeps counting in the
  newer window another process started (``GREATEST``).
``ENGRAM_RATE_LIMIT_ENABLED`` switches the limits off (the test settings do; the suite makes many calls).
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import redis
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction

from apps.core.exceptions import RateLimited
from apps.core.models import RateLimitCounter
from apps.core.threads import run_sync

logger = logging.getLogger(__name__)

# Decisions taken while serving one request, for an edge that reports them in headers after the fact
# (the MCP HTTP app: tools run in tasks that inherit a copy of the request's context, and so the list).
_recorded_decisions: ContextVar[list[RateDecision] | None] = ContextVar("engram_rate_decisions", default=None)


@dataclass(frozen=True)
class Window:
    name: str
    limit: int
    seconds: int

    def start(self, now: float) -> int:
        return int(now // self.seconds) * self.seconds


@dataclass(frozen=True)
class WindowCount:
    """Calls counted in a window that began at ``start`` (this call included when it was allowed)."""

    window: Window
    start: int
    count: int

    def remaining(self) -> int:
        return max(0, self.window.limit - self.count)

    def reset_seconds(self, now: float) -> int:
        return max(1, math.ceil(self.start + self.window.seconds - now))


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    retry_after: int
    window_seconds: int
    # False when limits are off: the call is allowed and nothing is reported.
    enforced: bool = True

    def headers(self) -> dict[str, str]:
        """X-RateLimit-* for an HTTP response (the binding window's figures)."""
        if not self.enforced:
            return {}
        return {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(self.remaining),
                "X-RateLimit-Reset": str(self.reset_seconds)}

    def error(self) -> RateLimited:
        return RateLimited(
            f"Rate limit exceeded: at most {_calls(self.limit)} in {_duration(self.window_seconds)} per user "
            f"(REST and MCP together). Retry in {_duration(self.retry_after)}.",
            extra={"retry_after": self.retry_after, "limit": self.limit, "window_seconds": self.window_seconds,
                   "reset_seconds": self.reset_seconds,
                   "suggestion": f"Wait {_duration(self.retry_after)} before the next call."},
        )


UNLIMITED = RateDecision(allowed=True, limit=0, remaining=0, reset_seconds=0, retry_after=0, window_seconds=0,
                         enforced=False)


def _duration(seconds: int) -> str:
    return "1 second" if seconds == 1 else f"{seconds} seconds"


def _calls(count: int) -> str:
    return "1 call" if count == 1 else f"{count} calls"


def rate_limit_windows() -> tuple[Window, ...]:
    windows = (Window("minute", settings.ENGRAM_RATE_LIMIT_PER_MINUTE, 60),
               Window("burst", settings.ENGRAM_RATE_LIMIT_BURST, settings.ENGRAM_RATE_LIMIT_BURST_SECONDS))
    for setting, value in (("ENGRAM_RATE_LIMIT_PER_MINUTE", windows[0].limit),
                           ("ENGRAM_RATE_LIMIT_BURST", windows[1].limit),
                           ("ENGRAM_RATE_LIMIT_BURST_SECONDS", windows[1].seconds)):
        if value < 1:
            raise ImproperlyConfigured(f"{setting}={value} must be at least 1 (or set ENGRAM_RATE_LIMIT_ENABLED=false)")
    return windows


def rate_limit_take(*, user_id: int, now: float | None = None) -> RateDecision:
    """Count one call of the user if both windows have room; never raises for a refusal. ``now`` (Unix
    time) is for tests that step through windows; every caller else uses the clock. Edges call it outside
    any transaction: the database counter's row locks last until the enclosing commit."""
    if not settings.ENGRAM_RATE_LIMIT_ENABLED:
        return UNLIMITED
    now = time.time() if now is None else now
    windows = rate_limit_windows()
    if settings.REDIS_URL:
        taken = _take_in_redis(settings.REDIS_URL, user_id, windows, now)
    else:
        taken = _take_in_database(user_id, windows, now)
    if taken is None:
        return UNLIMITED
    decision = _decide(*taken, now=now)
    recorded = _recorded_decisions.get()
    if recorded is not None:
        recorded.append(decision)
    return decision


def rate_limit_check(*, user_id: int, now: float | None = None) -> RateDecision:
    """``rate_limit_take``, raising ``RateLimited`` (with retry_after, limit, reset_seconds) on refusal."""
    decision = rate_limit_take(user_id=user_id, now=now)
    if not decision.allowed:
        raise decision.error()
    return decision


arate_limit_check = run_sync(rate_limit_check)


@contextmanager
def recording_rate_decisions() -> Iterator[list[RateDecision]]:
    """Collect the decisions taken inside (also in tasks started inside), oldest first."""
    decisions: list[RateDecision] = []
    reset = _recorded_decisions.set(decisions)
    try:
        yield decisions
    finally:
        _recorded_decisions.reset(reset)


def _decide(allowed: bool, counts: list[WindowCount], *, now: float) -> RateDecision:
    binding = min(counts, key=lambda count: (count.remaining(), -count.reset_seconds(now)))
    reset = binding.reset_seconds(now)
    return RateDecision(allowed=allowed, limit=binding.window.limit, remaining=binding.remaining(),
                        reset_seconds=reset, retry_after=0 if allowed else reset,
                        window_seconds=binding.window.seconds)


def _take_in_database(user_id: int, windows: tuple[Window, ...], now: float) -> tuple[bool, list[WindowCount]]:
    table = connection.ops.quote_name(RateLimitCounter._meta.db_table)
    values = ", ".join(["(%s, %s, %s, 1)"] * len(windows))
    sql = (
        f"INSERT INTO {table} (user_id, window_name, window_start, count) VALUES {values} "
        f"ON CONFLICT (user_id, window_name) DO UPDATE SET "
        f"count = CASE WHEN EXCLUDED.window_start > {table}.window_start THEN 1 ELSE {table}.count + 1 END, "
        f"window_start = GREATEST({table}.window_start, EXCLUDED.window_start) "
        f"RETURNING window_name, window_start, count"
    )
    params = [value for window in windows for value in (user_id, window.name, window.start(now))]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = {name: (start, count) for name, start, count in cursor.fetchall()}
        allowed = all(rows[window.name][1] <= window.limit for window in windows)
        if not allowed:
            transaction.set_rollback(True)
    taken = 0 if allowed else 1
    return allowed, [WindowCount(window, rows[window.name][0], rows[window.name][1] - taken) for window in windows]


# KEYS: one counter per window; ARGV: each window's limit and time to live. Increments every counter only
# when each has room; returns {allowed, count...}.
_REDIS_TAKE = """
local allowed = 1
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = tonumber(redis.call('GET', key) or '0')
  if counts[i] >= tonumber(ARGV[2 * i - 1]) then allowed = 0 end
end
if allowed == 1 then
  for i, key in ipairs(KEYS) do
    counts[i] = redis.call('INCR', key)
    if counts[i] == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
  end
end
table.insert(counts, 1, allowed)
return counts
"""


@lru_cache(maxsize=4)
def _redis_script(url: str) -> redis.commands.core.Script:
    # Short timeouts: every API call waits on this, and a dead Redis is answered by allowing the call.
    client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    return client.register_script(_REDIS_TAKE)


def _take_in_redis(url: str, user_id: int, windows: tuple[Window, ...],
                   now: float) -> tuple[bool, list[WindowCount]] | None:
    prefix = settings.ENGRAM_RATE_LIMIT_REDIS_PREFIX
    starts = [window.start(now) for window in windows]
    keys = [f"{prefix}:{user_id}:{window.name}:{start}" for window, start in zip(windows, starts)]
    # A key lives its window plus a second, so that it outlasts the window even with a little clock skew.
    args = [value for window in windows for value in (window.limit, window.seconds + 1)]
    try:
        allowed, *counts = _redis_script(url)(keys=keys, args=args)
    except redis.RedisError as exc:
        logger.warning("Rate limits not applied: Redis at REDIS_URL did not answer (%s)", exc)
        return None
    return bool(allowed), [WindowCount(window, start, int(count))
                           for window, start, count in zip(windows, starts, counts)]

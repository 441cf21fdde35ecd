"""Instant wake: a query of a dream's owner, through any edge, asks the dream to stop at its next batch.

``wake_on_query`` is registered at start-up (apps.py) as a listener of apps/memories/queries.py, which memory_retrieve
and memory_search announce before they run. It only notes the user and nudges one background thread of the process,
which marks the users' running dreams (one UPDATE through the index that keeps one dream per user, on its own
connection): the query itself pays no statement and no wait, and the dream, which may run in another process, reads
the mark before each batch and stops, interrupted and resumable."""
from __future__ import annotations

import logging
import threading

from django.db import connection
from django.utils import timezone

from apps.cognition.models import ConsolidationRun

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_pending: set[int] = set()
_nudge = threading.Event()
_thread: threading.Thread | None = None


def wake(user_ids) -> int:
    """Mark the running dreams of these users that stop for a query; how many were marked."""
    return ConsolidationRun.objects.filter(owner_id__in=list(user_ids), status=ConsolidationRun.Status.RUNNING,
                                           abort_on_query=True, abort_requested_at__isnull=True,
                                           ).update(abort_requested_at=timezone.now())


def wake_on_query(user_id: int) -> None:
    global _thread
    with _lock:
        _pending.add(user_id)
        if _thread is None or not _thread.is_alive():  # first query of the process (or of a forked child)
            _thread = threading.Thread(target=_loop, name="dream-wake", daemon=True)
            _thread.start()
    _nudge.set()


def _loop() -> None:
    while True:
        _nudge.wait()
        _nudge.clear()
        with _lock:
            users = set(_pending)
            _pending.clear()
        try:
            wake(users)
        except Exception as exc:  # the database is away: the dream runs on, as it would without the query
            logger.warning("Could not wake the dreams of users %s: %s", sorted(users), exc)
        finally:
            connection.close()

"""The threads that run a process's sync work under ASGI: Django's views (apps/core/handlers.py) and the
service calls of the MCP edge and the rate limiter share one pool of ENGRAM_WEB_THREADS threads, as many
as the database pool has connections.

Why not asgiref's default: a thread-sensitive sync_to_async call made outside a request context that
Django set up (every MCP tool call, under the MCP SDK's Starlette apps) runs on asgiref's one process-wide
thread, so all MCP calls of a process ran one at a time: 50 concurrent writers stored what one writer did
(docs/benchmarks.md, "The speed table (issue 18)"). Requests of the HTTP edge run their calls on the pool
(`calls_on_pool`); elsewhere (stdio, an in-process client driven by async_to_sync) calls stay
thread-sensitive, on the thread that waits for them, as before.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from channels.db import DatabaseSyncToAsync
from django.conf import settings

THREAD_NAME_PREFIX = "engram-web"

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()
# Set for the code of one HTTP request, and inherited by the tasks it starts (an MCP session's too).
_on_pool: ContextVar[bool] = ContextVar("engram_sync_calls_on_pool", default=False)

P = ParamSpec("P")
R = TypeVar("R")


def sync_executor() -> ThreadPoolExecutor:
    """The process's pool, made on first use (after settings load and any fork)."""
    global _executor
    if _executor is None:
        with _lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(max_workers=settings.ENGRAM_WEB_THREADS,
                                               thread_name_prefix=THREAD_NAME_PREFIX)
    return _executor


@contextmanager
def calls_on_pool() -> Iterator[None]:
    """run_sync calls made by the enclosed code, and by the tasks it starts, run on the shared pool."""
    token = _on_pool.set(True)
    try:
        yield
    finally:
        _on_pool.reset(token)


def run_sync(function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """`function` as a coroutine function, closing stale database connections around it as channels'
    database_sync_to_async does: on the shared pool under calls_on_pool (each call is one service call and
    needs no thread of its own), else thread-sensitive."""
    @functools.wraps(function)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if _on_pool.get():
            return await DatabaseSyncToAsync(function, thread_sensitive=False, executor=sync_executor())(*args, **kwargs)
        return await DatabaseSyncToAsync(function)(*args, **kwargs)
    return call

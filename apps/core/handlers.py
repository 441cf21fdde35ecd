"""Django's ASGI handler with each request's sync work run on one thread of a fixed pool.

Every Django view of Engram is sync (DRF, the dashboard, the admin; MCP and websockets do not go
through this handler). Django's own ASGIHandler runs a request's sync code through asgiref's
ThreadSensitiveContext: a new thread for every request, hops between the event loop and that thread
at each sync-only middleware (WhiteNoise's) and for each signal, and a fresh database-connection
wrapper per request (docs/benchmarks.md, "Django's views run on a fixed pool of threads").

This subclass keeps ASGIHandler's entry point, body reading, request building and response sending,
and overrides two of its methods: `load_middleware` builds the sync middleware chain, and `handle`
hands the request to a pool thread in one hop, which runs the signals, the whole chain and the view as
Django's WSGI handler does; the response goes out from the event loop. The threads, and with them
their database-connection wrappers, live as long as the process; ENGRAM_WEB_THREADS sizes the pool,
which the MCP edge's service calls share (apps/core/threads.py; requests beyond it wait their turn on
the event loop, holding no thread).

The one private name used is HttpResponse's `_handler_class` (see `_as_sent_by`).
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.db import close_old_connections
from django.http import FileResponse, HttpResponseBase
from django.urls import set_script_prefix

from apps.core.threads import THREAD_NAME_PREFIX, sync_executor


class PooledASGIHandler(ASGIHandler):
    def __init__(self, *, threads: int | None = None):
        """threads=None shares the process's pool with the MCP edge (apps/core/threads.py)."""
        super().__init__()
        self.executor = (sync_executor() if threads is None
                         else ThreadPoolExecutor(max_workers=threads, thread_name_prefix=THREAD_NAME_PREFIX))

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)  # the chain runs whole on a pool thread

    async def handle(self, scope, receive, send):
        try:
            body_file = await self.read_body(receive)  # on the event loop: a slow client holds no thread
        except RequestAborted:  # the client left before its body arrived
            return
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(self.executor, self.respond, scope, body_file)
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:
                    await loop.run_in_executor(self.executor, response.close)
        finally:
            body_file.close()

    def respond(self, scope, body_file):
        """The request's sync part, on a pool thread, as WSGIHandler does it."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)  # (None, a 400 or 413) when it is malformed
        if request is not None:
            response = self.get_response(request)  # exceptions become error responses in here
            _as_sent_by(response, self.__class__)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if response.streaming:
            # Its content is read later, off this thread: give this thread's connection back now.
            close_old_connections()
        else:
            # The content is in memory. Closing here sends request_finished on the thread whose database
            # connection the request used, so the connection goes back to the pool before the bytes go out.
            response.close()
        return response


def _as_sent_by(response: HttpResponseBase, handler_class: type) -> None:
    """Make the response's close() send request_finished with the handler class as sender, as Django's
    signal documentation promises. Django has no public way to set it (its own handlers set this private
    attribute); tests/core/test_asgi_handler.py fails when Django stops reading it."""
    response._handler_class = handler_class

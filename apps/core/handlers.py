"""Django's ASGI handler with each request's sync work run on one thread of a fixed pool.

Every Django view of Engram is sync (DRF, the dashboard, the admin; MCP and websockets do not go
through this handler). Django's own ASGIHandler runs a request's sync code through asgiref's
ThreadSensitiveContext: a new thread for every request, hops between the event loop and that thread
at each sync-only middleware (WhiteNoise's) and for each signal, and a fresh database-connection
wrapper per request. That cost 2.5-4 ms of a REST search at 100k memories (docs/benchmarks.md).

Here the body is still read on the event loop (a slow client holds no thread), then one hop hands the
request to a pool thread, which runs the signals, the whole sync middleware chain and the view as
Django's WSGI handler does; the response goes out from the event loop. The threads, and with them their
database-connection wrappers, live as long as the process; ENGRAM_WEB_THREADS sizes the pool (requests
beyond it wait their turn on the event loop, holding no thread).
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers import base
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.db import close_old_connections
from django.http import FileResponse
from django.urls import set_script_prefix

THREAD_NAME_PREFIX = "engram-web"


class PooledASGIHandler(ASGIHandler):
    def __init__(self, *, threads: int):
        base.BaseHandler.__init__(self)  # not ASGIHandler's: it would build the async middleware chain
        self.load_middleware(is_async=False)
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=THREAD_NAME_PREFIX)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
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
            response._handler_class = self.__class__
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

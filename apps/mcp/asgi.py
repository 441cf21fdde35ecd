"""The MCP part of Engram's ASGI application: `/mcp/` and every `/mcp/<profile>/`.

``config/asgi.py`` sends every HTTP request under `/mcp` here (``McpEdge.handles``) and the ASGI
lifespan to ``McpEdge.lifespan``. Each profile is the SDK's streamable HTTP app behind the SDK's
bearer-token middleware. The SDK's session managers must be running to serve requests: the
lifespan starts them, and the first request does when the server sends no lifespan events.
"""
from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from django.conf import settings
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import MutableHeaders
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from apps.core.ratelimit import recording_rate_decisions
from apps.core.threads import calls_on_pool
from apps.mcp.auth import EngramTokenVerifier, TokenCheckUnavailable
from apps.mcp.profile import Profile
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server

logger = logging.getLogger(__name__)

PREFIX = "/mcp"
TRANSPORT = "streamable-http"


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection for the hosts Django serves (ALLOWED_HOSTS), on any port."""
    if "*" in settings.ALLOWED_HOSTS:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # The SDK matches exact names (or name:port); Django's ".example.com" covers only example.com here.
    names = [host.lstrip(".") for host in settings.ALLOWED_HOSTS]
    hosts = [variant for name in names for variant in (name, f"{name}:*")]
    origins = [f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts,
        allowed_origins=[*origins, *settings.CSRF_TRUSTED_ORIGINS],
    )


def profile_app(profile: Profile) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
    """The profile's streamable HTTP app at `/` (behind bearer auth) and the session manager it needs."""
    server = build_server(profile)
    app = server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=settings.ENGRAM_MCP_STATELESS and not profile.keeps_client_sessions,
        # One JSON answer per POST: no tool streams, and plain HTTP clients (curl) can read it.
        json_response=True, transport_security=transport_security(),
    )
    protected = AuthenticationMiddleware(
        AuthContextMiddleware(RequireAuthMiddleware(app, required_scopes=[])),
        backend=BearerAuthBackend(EngramTokenVerifier()), on_error=authentication_failed,
    )
    return RateLimitHeaders(protected), server.session_manager


def authentication_failed(request, exc) -> JSONResponse:
    """A token that could not be checked (the database is down) is a 503 saying when to retry, as REST answers."""
    if isinstance(exc, TokenCheckUnavailable):
        retry = exc.error.extra["retry_after"]
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": exc.error.message,
                                                                     "data": {"code": exc.error.code}}},
                            status_code=503, headers={"Retry-After": str(retry)})
    return AuthenticationMiddleware.default_on_error(request, exc)


class RateLimitHeaders:
    """Adds X-RateLimit-Limit, -Remaining and -Reset to an MCP HTTP answer that ran a tool call, from the
    decision ``run_tool`` took (the last, if one request made several). A refusal is the tool's error in
    the profile's envelope, inside a 200 answer, so no Retry-After: the error says when to retry."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with recording_rate_decisions() as decisions:
            async def send_with_headers(message: dict) -> None:
                if message["type"] == "http.response.start" and decisions:
                    message.setdefault("headers", [])
                    headers = MutableHeaders(scope=message)
                    for name, value in decisions[-1].headers().items():
                        headers[name] = value
                await send(message)

            await self.app(scope, receive, send_with_headers)


@dataclass
class _Running:
    """One start of the profile apps: their session managers run in a task of their own until stopped."""

    apps: dict[str, ASGIApp]
    managers: list[StreamableHTTPSessionManager]
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.get_running_loop)
    ready: asyncio.Future = field(init=False)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task = field(init=False)

    def __post_init__(self) -> None:
        self.ready = self.loop.create_future()
        self.task = self.loop.create_task(self._run())

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                for manager in self.managers:
                    await stack.enter_async_context(manager.run())
                self.ready.set_result(None)
                await self.stopping.wait()
        except Exception as exc:
            if self.ready.done():
                raise
            self.ready.set_exception(exc)

    async def stop(self) -> None:
        self.stopping.set()
        await self.task


class McpEdge:
    def __init__(self, profiles: dict[str, Profile] = PROFILES):
        self.profiles = profiles
        self._running: _Running | None = None

    @staticmethod
    def handles(path: str) -> bool:
        return path == PREFIX or path.startswith(PREFIX + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path"][len(PREFIX):].strip("/")
        if not name:
            await self._listing(scope, receive, send)
            return
        if name not in self.profiles:
            await JSONResponse(
                {"error": f"Unknown MCP profile {name!r}.", "profiles": self._profile_list(Request(scope))},
                status_code=404,
            )(scope, receive, send)
            return
        running = await self.start()
        # Both /mcp/<name> and /mcp/<name>/ reach the profile app, which serves its root.
        mount = f"{PREFIX}/{name}"
        with calls_on_pool():  # tool calls run side by side on the process's threads (apps/core/threads.py)
            await running.apps[name](dict(scope, path=mount + "/", root_path=scope.get("root_path", "") + mount),
                                     receive, send)

    async def start(self) -> _Running:
        # A started set belongs to one event loop; a server that ran without lifespan events (so
        # never stopped them) leaves a set behind that a later server on a new loop cannot use.
        running = self._running
        if running is None or running.loop is not asyncio.get_running_loop() or running.task.done():
            # Session managers run only once, so every start builds the apps afresh.
            built = {name: profile_app(profile) for name, profile in self.profiles.items()}
            running = self._running = _Running(apps={name: app for name, (app, _) in built.items()},
                                               managers=[manager for _, manager in built.values()])
        await asyncio.shield(running.ready)
        return running

    async def stop(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            await running.stop()

    async def lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:
                    logger.exception("The MCP session managers did not start")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _listing(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        if request.method not in ("GET", "HEAD"):
            response = JSONResponse({"error": "Use GET to list the MCP profiles."}, status_code=405,
                                    headers={"Allow": "GET, HEAD"})
        else:
            response = JSONResponse({"profiles": self._profile_list(request)})
        await response(scope, receive, send)

    def _profile_list(self, request: Request) -> list[dict]:
        base = str(request.base_url).rstrip("/")
        return [
            {"name": profile.name, "title": profile.title, "description": profile.description,
             "url": f"{base}{PREFIX}/{profile.name}/", "transport": TRANSPORT, "tools": len(profile.tools)}
            for profile in self.profiles.values()
        ]

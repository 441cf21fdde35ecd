"""Builds one SDK ``MCPServer`` per profile, and runs every tool call the same way.

The SDK derives a tool's input schema and validation from a function signature; a profile instead
states its seed's schema as a model. So each tool is registered with the model's advertised schema
and receives the raw arguments, which ``run_tool`` validates itself: bad arguments then come back
in the profile's own envelope (with ``isError``), like every other failure, not as SDK text.
"""
from __future__ import annotations

import logging
import time
import uuid
import weakref
from contextvars import ContextVar
from typing import Any

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ConfigDict, ValidationError

from apps.core.exceptions import DomainError, PermissionDenied
from apps.core.ratelimit import arate_limit_check
from apps.cubes.validation import is_cube_id
from apps.mcp.auth import acting_user, current_caller
from apps.mcp.errors import tool_failure
from apps.mcp.models import McpClientSession
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import advertised_schema

logger = logging.getLogger(__name__)

SERVER_VERSION = "1.0.0"

# The MCP session a tool call arrived in, as a key that adapters may store (see ``client_key``).
_client_session: ContextVar[str] = ContextVar("engram_mcp_client_session", default="")
# The SDK's context of the tool call under way, for adapters that ask the client something (MemGOS's chat samples).
_tool_context: ContextVar[Context | None] = ContextVar("engram_mcp_tool_context", default=None)
# Sessions without an id of their own (stdio, in-process clients) get one here for their lifetime.
_local_session_ids: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class RawArguments(ArgModelBase):
    """Hands a tool's arguments over untouched, as one ``arguments`` keyword."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


async def run_tool(profile: Profile, spec: ToolSpec, arguments: dict[str, Any]) -> CallToolResult | InputRequiredResult:
    started = time.perf_counter()
    try:
        caller = current_caller()
        caller.require_scope(spec.scope)
        # Every tool call of every profile spends the caller's platform budget, shared with REST.
        await arate_limit_check(user_id=caller.user.pk)
        params = spec.input_model.model_validate(arguments)
        named = getattr(params, spec.acts_for_field) if spec.acts_for_field else None
        # An optional user field left out (MemGOS's user_id) means the token's own user.
        actor = caller.user if named is None else await acting_user(caller, named)
        data = await spec.adapter(actor, params)
        if isinstance(data, InputRequiredResult):  # one round of a multi-round call (MemGOS's chat samples)
            return data
    except Exception as exc:
        if not isinstance(exc, (DomainError, ValidationError)):
            logger.exception("MCP tool %s/%s failed", profile.name, spec.name)
        return profile.envelope.failure(tool_failure(exc))
    elapsed_ms = round((time.perf_counter() - started) * 1000)
    return profile.envelope.success(data, components_used=spec.components_used, processing_ms=elapsed_ms)


def client_key() -> str:
    """Who is calling, as a stable key: the token, and the MCP session over which it calls. Over
    stateless HTTP a client has no session between requests, so the key is the token's alone. Profiles
    with per-client state (Mind's current session) store it."""
    caller = current_caller()
    session = _client_session.get()
    return f"token-{caller.token_id}" + (f":{session}" if session else "")


def tool_context() -> Context | None:
    """The SDK context of the tool call under way (None outside one)."""
    return _tool_context.get()


async def _record_call(arguments: dict[str, Any], *, succeeded: bool) -> None:
    """Counts an authenticated call for its client (MemGOS's session_info), with the cubes that a successful call
    named as the client's active cubes. Counting never fails the call it counts."""
    try:
        caller = current_caller()
    except PermissionDenied:
        return
    cube_ids = _cube_ids_named(arguments) if succeeded else []
    try:
        await database_sync_to_async(McpClientSession.objects.record_call)(
            key=client_key(), user_id=caller.user.pk, cube_ids=cube_ids)
    except Exception:
        logger.exception("Could not count an MCP tool call")


def _cube_ids_named(arguments: dict[str, Any]) -> list[str]:
    several = arguments.get("cube_ids")
    named = [arguments.get("cube_id"), arguments.get("mem_cube_id"), *(several if isinstance(several, list) else [])]
    return [cube_id for cube_id in named if is_cube_id(cube_id)]


def _session_of(ctx: Context) -> str:
    # HTTP: the SDK's session id, which only clients of the handshake-era protocols get from a stateful
    # server; 2026-07-28 requests carry no session, so such a client is known by its token alone.
    if ctx.headers is not None:
        return ctx.headers.get("mcp-session-id", "")
    # stdio and in-process: one server instance serves one client for its lifetime. (Not ctx.session:
    # since 2026-07-28 the SDK builds a ServerSession, and a connection, for every request.)
    server = ctx.mcp_server
    if server not in _local_session_ids:
        _local_session_ids[server] = f"local-{uuid.uuid4().hex}"
    return _local_session_ids[server]


def _sdk_tool(profile: Profile, spec: ToolSpec) -> Tool:
    async def call(arguments: dict[str, Any], ctx: Context) -> CallToolResult | InputRequiredResult:
        reset = _client_session.set(_session_of(ctx))
        reset_context = _tool_context.set(ctx)
        try:
            result = await run_tool(profile, spec, arguments)
            await _record_call(arguments, succeeded=isinstance(result, CallToolResult) and not result.is_error)
            return result
        finally:
            _tool_context.reset(reset_context)
            _client_session.reset(reset)

    return Tool(
        fn=call, name=spec.name, description=spec.description, parameters=advertised_schema(spec.input_model),
        fn_metadata=FuncMetadata(arg_model=RawArguments), is_async=True, context_kwarg="ctx",
    )


def build_server(profile: Profile) -> MCPServer:
    return MCPServer(
        name=f"engram-{profile.name}", title=f"Engram: {profile.title}", description=profile.description,
        version=SERVER_VERSION, tools=[_sdk_tool(profile, spec) for spec in profile.tools],
    )

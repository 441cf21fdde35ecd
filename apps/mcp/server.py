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

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult
from pydantic import ConfigDict, ValidationError

from apps.core.exceptions import DomainError
from apps.mcp.auth import acting_user, current_caller
from apps.mcp.errors import tool_failure
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import advertised_schema

logger = logging.getLogger(__name__)

SERVER_VERSION = "1.0.0"

# The MCP session a tool call arrived in, as a key that adapters may store (see ``client_key``).
_client_session: ContextVar[str] = ContextVar("engram_mcp_client_session", default="")
# Sessions without an id of their own (stdio, in-process clients) get one here for their lifetime.
_local_session_ids: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class RawArguments(ArgModelBase):
    """Hands a tool's arguments over untouched, as one ``arguments`` keyword."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


async def run_tool(profile: Profile, spec: ToolSpec, arguments: dict[str, Any]) -> CallToolResult:
    started = time.perf_counter()
    try:
        caller = current_caller()
        caller.require_scope(spec.scope)
        params = spec.input_model.model_validate(arguments)
        actor = await acting_user(caller, getattr(params, spec.acts_for_field)) if spec.acts_for_field else caller.user
        data = await spec.adapter(actor, params)
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
    async def call(arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        reset = _client_session.set(_session_of(ctx))
        try:
            return await run_tool(profile, spec, arguments)
        finally:
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

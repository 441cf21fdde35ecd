"""Builds one SDK ``MCPServer`` per profile, and runs every tool call the same way.

The SDK derives a tool's input schema and validation from a function signature; a profile instead
states its seed's schema as a model. So each tool is registered with the model's advertised schema
and receives the raw arguments, which ``run_tool`` validates itself: bad arguments then come back
in the profile's own envelope (with ``isError``), like every other failure, not as SDK text.

Resource reads and prompts are served by the SDK's own resource and prompt managers, behind the same
rules as tools: the caller's token (read scope) and rate limit, and the caller as the acting user.
"""
from __future__ import annotations

import inspect
import logging
import time
import uuid
import weakref
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, CallToolResult, InputRequiredResult
from pydantic import ConfigDict, ValidationError

from apps.accounts.models import User
from apps.core.exceptions import DomainError, InvalidInput, NotFound, PermissionDenied
from apps.core.ratelimit import arate_limit_check
from apps.core.threads import run_sync
from apps.core.validation import refuse_unstorable_text
from apps.cubes.validation import is_cube_id
from apps.mcp.auth import READ, acting_user, current_caller
from apps.mcp.errors import tool_failure
from apps.mcp.models import McpClientSession
from apps.mcp.profile import Profile, PromptSpec, ResourceSpec, ToolSpec
from apps.mcp.schema import advertised_schema, argument_naming

logger = logging.getLogger(__name__)

SERVER_VERSION = "1.0.0"

# The MCP session a tool call arrived in, as a key that adapters may store (see ``client_key``).
_client_session: ContextVar[str] = ContextVar("engram_mcp_client_session", default="")
# The SDK's context of the tool call under way, for adapters that ask the client something (MemGOS's chat samples).
_tool_context: ContextVar[Context | None] = ContextVar("engram_mcp_tool_context", default=None)
# The profile serving the tool call under way, for adapters that describe their own profile (MemGOS's list_tools).
_profile: ContextVar[Profile | None] = ContextVar("engram_mcp_profile", default=None)
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
        refuse_unstorable_text(arguments)
        params = spec.input_model.model_validate(arguments)
        named = getattr(params, spec.acts_for_field) if spec.acts_for_field else None
        # An optional user field left out (MemGOS's user_id) means the token's own user.
        actor = caller.user if named is None else await acting_user(caller, named)
        components = spec.components_for(params)
        data = await spec.adapter(actor, params)
        if isinstance(data, InputRequiredResult):  # one round of a multi-round call (MemGOS's chat samples)
            return data
    except Exception as exc:
        if not isinstance(exc, (DomainError, ValidationError)):
            logger.exception("MCP tool %s/%s failed", profile.name, spec.name)
        elif isinstance(exc, DomainError) and spec.aliases is not None:
            spec.aliases.report(exc)
        result = profile.envelope.failure(tool_failure(exc, naming=argument_naming(spec.input_model)))
    else:
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        result = profile.envelope.success(data, components_used=components, processing_ms=elapsed_ms)
    return await profile.after_call(result, arguments) if profile.after_call else result


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


def current_profile() -> Profile | None:
    """The profile serving the tool call under way (None outside one)."""
    return _profile.get()


async def _record_call(arguments: dict[str, Any], *, succeeded: bool) -> None:
    """Counts an authenticated call for its client (MemGOS's session_info), with the cubes that a successful call
    named as the client's active cubes. Counting never fails the call it counts."""
    try:
        caller = current_caller()
    except PermissionDenied:
        return
    cube_ids = _cube_ids_named(arguments) if succeeded else []
    try:
        await run_sync(McpClientSession.objects.record_call)(
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
        reset_profile = _profile.set(profile)
        try:
            result = await run_tool(profile, spec, arguments)
            await _record_call(arguments, succeeded=isinstance(result, CallToolResult) and not result.is_error)
            return result
        finally:
            _profile.reset(reset_profile)
            _tool_context.reset(reset_context)
            _client_session.reset(reset)

    return Tool(
        fn=call, name=spec.name, description=spec.description, parameters=advertised_schema(spec.input_model),
        fn_metadata=FuncMetadata(arg_model=RawArguments, output_schema=spec.output_schema), is_async=True,
        context_kwarg="ctx",
        annotations=spec.annotations,
    )


async def _reader() -> User:
    """The user a resource read or a prompt acts for: the caller, with the read scope, within its rate limit."""
    caller = current_caller()
    caller.require_scope(READ)
    await arate_limit_check(user_id=caller.user.pk)
    return caller.user


def _sdk_resource_reader(spec: ResourceSpec):
    """``spec.read`` as the SDK calls a resource function: the URI's variables as keywords, no actor. The
    SDK matches the function's signature against the URI template, so the reader carries ``spec.read``'s
    signature without its first (actor) parameter. Domain errors become protocol errors: a resource the
    caller may not see is simply not found (invalid params, as the SDK's own "resource not found")."""

    async def read(**variables: str) -> str:
        try:
            return await spec.read(await _reader(), **variables)
        except DomainError as exc:
            raise _protocol_error(exc) from exc

    signature = inspect.signature(spec.read)
    variables = list(signature.parameters.values())[1:]
    read.__signature__ = signature.replace(parameters=variables)
    read.__annotations__ = {parameter.name: str for parameter in variables} | {"return": str}
    return read


def _protocol_error(exc: DomainError) -> MCPError:
    """A domain error as a protocol error in its own words. The SDK passes an MCPError through to the client as
    it is; any other exception of a resource read or a prompt loses its message (or becomes a crash)."""
    code = INVALID_PARAMS if isinstance(exc, (InvalidInput, NotFound)) else INVALID_REQUEST
    return MCPError(code=code, message=exc.message, data={"code": exc.code, **exc.extra})


class _CheckedPrompt(Prompt):
    """The SDK's prompt, with missing and unknown arguments reported as clear protocol errors."""

    async def render(self, arguments: dict[str, Any] | None, context: Context):
        given = set(arguments or {})
        known = {argument.name: argument.required for argument in self.arguments or []}
        missing = sorted(name for name, required in known.items() if required and name not in given)
        unknown = sorted(given - set(known))
        if missing:
            raise _protocol_error(InvalidInput(f"Missing required argument {missing[0]!r} of prompt {self.name}.",
                                               field=missing[0]))
        if unknown:
            raise _protocol_error(InvalidInput(
                f"Unknown argument {unknown[0]!r} of prompt {self.name}: it takes "
                f"{', '.join(sorted(known)) or 'no arguments'}.", field=unknown[0]))
        return await super().render(arguments, context)


def _sdk_prompt(spec: PromptSpec) -> Prompt:
    async def render(ctx: Context, **arguments: str) -> str:
        try:
            return await spec.render(await _reader(), ctx, arguments)
        except DomainError as exc:
            raise _protocol_error(exc) from exc

    arguments = [PromptArgument(name=argument.name, description=argument.description, required=argument.required)
                 for argument in spec.arguments]
    return _CheckedPrompt(name=spec.name, description=spec.description, arguments=arguments, fn=render,
                          context_kwarg="ctx")


def build_server(profile: Profile) -> MCPServer:
    server = MCPServer(
        name=f"engram-{profile.name}", title=f"Engram: {profile.title}", description=profile.description,
        version=SERVER_VERSION, tools=[_sdk_tool(profile, spec) for spec in profile.tools],
    )
    for resource in profile.resources:
        server.resource(resource.uri, name=resource.name, description=resource.description,
                        mime_type=resource.mime_type)(_sdk_resource_reader(resource))
    for prompt in profile.prompts:
        server.add_prompt(_sdk_prompt(prompt))
    return server

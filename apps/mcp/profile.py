"""What a compatibility profile is: a named table of tools, each with its seed's input model, the
adapter that serves it and the envelope its answers come in, plus the resources, resource templates
and prompts the seed documents (Thoughtbox has them; the other profiles have none). Adding a profile
is adding a table."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations

from apps.accounts.models import User
from apps.core.aliases import Aliases
from apps.mcp.envelopes import Envelope
from apps.mcp.schema import SeedModel

Adapter = Callable[[User, Any], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_model: type[SeedModel]
    # Gets the acting user and the validated input, calls one service, returns the envelope's data.
    adapter: Adapter
    scope: str
    # The cognitive components a call used (ThoughtMCP's metadata.componentsUsed); a function of the validated
    # input when the tool's options decide which components run (analyze_reasoning's includeBias, ...).
    components_used: tuple[str, ...] | Callable[[Any], tuple[str, ...]] = ()
    # The input field that names the user the tool acts for (checked against the token), if any. Without one,
    # or when the field is optional and left out, the tool acts for the token's user.
    acts_for_field: str | None = None
    # The tool's group in its profile's own listing (MemGOS's list_tools), if the profile has groups.
    category: str | None = None
    # The seed's readOnlyHint, destructiveHint and idempotentHint, when it states them.
    annotations: ToolAnnotations | None = None
    # The profile's names for the arguments of the services the adapter calls, where they differ: a service's
    # error is reported under the argument the caller sent.
    aliases: Aliases | None = None
    # The seed's outputSchema, when it states one: published in tools/list, and the SDK client checks every
    # successful answer against it.
    output_schema: dict[str, Any] | None = None

    def components_for(self, params: Any) -> tuple[str, ...]:
        return self.components_used(params) if callable(self.components_used) else self.components_used


@dataclass(frozen=True)
class ResourceSpec:
    """A resource, or a resource template when ``uri`` has RFC 6570 variables. ``read`` gets the acting user
    and the URI's variables as keyword arguments of the same names, and returns the resource's text."""

    uri: str
    name: str
    description: str
    read: Callable[..., Awaitable[str]]
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class PromptArgumentSpec:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True)
class PromptSpec:
    """A prompt. ``render`` gets the acting user, the SDK context of the request (its server lists the profile's
    real registrations) and the client's arguments (text, as MCP sends them); it returns the prompt's text."""

    name: str
    description: str
    render: Callable[[User, Context, dict[str, str]], Awaitable[str]]
    arguments: tuple[PromptArgumentSpec, ...] = ()


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    description: str
    envelope: Envelope
    tools: tuple[ToolSpec, ...]
    # A profile whose tools keep per-client state (Mind's current session) is served with MCP
    # sessions even when ENGRAM_MCP_STATELESS is on: without them every HTTP request is a new client.
    keeps_client_sessions: bool = False
    resources: tuple[ResourceSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    # Adds to every answer, failures too, what the profile's seed puts in each (Context Graph's pulse): gets the
    # envelope's result and the call's raw arguments.
    after_call: Callable[[CallToolResult, dict[str, Any]], Awaitable[CallToolResult]] | None = None

"""What a compatibility profile is: a named table of tools, each with its seed's input model, the
adapter that serves it and the envelope its answers come in. Adding a profile is adding a table."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from apps.accounts.models import User
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
    components_used: tuple[str, ...] = ()
    # The input field that names the user the tool acts for (checked against the token), if any. When the
    # field is optional and left out, the tool acts for the token's user.
    acts_for_field: str | None = "user_id"
    # The tool's group in its profile's own listing (MemGOS's list_tools), if the profile has groups.
    category: str | None = None


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

"""The compatibility profiles Engram serves over MCP, by name (the `/mcp/<name>/` path segment)."""
from __future__ import annotations

from apps.mcp.profile import Profile
from apps.mcp.profiles import context_graph, memgos, mind, thoughtbox, thoughtmcp

PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (thoughtmcp.PROFILE, thoughtbox.PROFILE, mind.PROFILE, memgos.PROFILE, context_graph.PROFILE)
}

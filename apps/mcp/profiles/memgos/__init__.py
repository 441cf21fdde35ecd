"""The MemGOS profile: its sixteen tools, with input schemas exactly as the MemGOS seed (seeds/003, "MemGOS MCP
Server API Reference") writes them in its JSON blocks: names, types, enums, ranges, defaults, required fields and
descriptions. ``user_id`` is optional on every tool that has it (required only by validate_access, as the seed
says): without it a tool acts for the token's user; with it, for the user it names, which must be the token's own
(id or username) unless a staff user's token holds the admin scope."""
from __future__ import annotations

from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.profiles.memgos import chat, cubes, system
from apps.mcp.profiles.memgos.envelope import MemGosEnvelope
from apps.mcp.profiles.memgos.inputs import (
    ALIASES, AddMemoryInput, ChatHistoryInput, ChatInput, ContextSearchInput, CubeInfoInput, DeleteMemoryInput,
    GetMemoryInput, GetUserInfoInput, HealthCheckInput, ListCubesInput, ListToolsInput, RegisterCubeInput,
    SearchMemoriesInput, SessionInfoInput, UpdateMemoryInput, ValidateAccessInput,
)
from apps.mcp.schema import SnakeCaseSeedModel

MEMORY, CUBE, CHAT, USER, SYSTEM = "memory", "cube", "chat", "user", "system"


def _tool(name: str, description: str, category: str, input_model: type[SnakeCaseSeedModel], adapter, scope: str,
          *, acts_for_user: bool = True) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_model=input_model, adapter=adapter, scope=scope,
                    category=category, acts_for_field="user_id" if acts_for_user else None, aliases=ALIASES.get(name))


PROFILE = Profile(
    name="memgos",
    title="MemGOS",
    description="MemGOS's memory operating system: memories in named cubes shared between users, semantic search and "
                "context, memory-augmented chat, access checks, session and system information.",
    envelope=MemGosEnvelope(),
    # session_info and chat's conversation belong to the MCP client, so HTTP clients get MCP sessions.
    keeps_client_sessions=True,
    tools=(
        _tool("search_memories", "Search memories across all cubes with semantic similarity and filtering", MEMORY,
              SearchMemoriesInput, cubes.search_memories, READ),
        _tool("add_memory", "Add new textual memory to a memory cube", MEMORY, AddMemoryInput, cubes.add_memory,
              WRITE),
        _tool("get_memory", "Retrieve a specific memory by ID from a cube", MEMORY, GetMemoryInput,
              cubes.get_memory, READ),
        _tool("update_memory", "Update existing memory content", MEMORY, UpdateMemoryInput, cubes.update_memory,
              WRITE),
        _tool("delete_memory", "Delete a specific memory from a cube", MEMORY, DeleteMemoryInput,
              cubes.delete_memory, WRITE),
        _tool("register_cube", "Register a new memory cube for storing memories", CUBE, RegisterCubeInput,
              cubes.register_cube, WRITE),
        _tool("list_cubes", "List all available memory cubes for the user", CUBE, ListCubesInput,
              cubes.list_cubes, READ),
        _tool("cube_info", "Get detailed information about a specific memory cube", CUBE, CubeInfoInput,
              cubes.cube_info, READ),
        _tool("chat", "Send a chat message with memory-augmented response", CHAT, ChatInput, chat.chat, WRITE),
        _tool("chat_history", "Retrieve chat conversation history for a session", CHAT, ChatHistoryInput,
              chat.chat_history, READ),
        _tool("context_search", "Search for relevant memory context for chat enhancement", CHAT, ContextSearchInput,
              cubes.context_search, READ),
        _tool("get_user_info", "Get user account information and permissions", USER, GetUserInfoInput,
              system.get_user_info, READ),
        _tool("session_info", "Get information about the current session", USER, SessionInfoInput,
              system.session_info, READ, acts_for_user=False),
        _tool("validate_access", "Validate user access permissions for resources", USER, ValidateAccessInput,
              cubes.validate_access, READ),
        _tool("health_check", "Check system health and connectivity status", SYSTEM, HealthCheckInput,
              system.health_check, READ, acts_for_user=False),
        _tool("list_tools", "List all available MCP tools with their schemas", SYSTEM, ListToolsInput,
              system.list_tools, READ, acts_for_user=False),
    ),
)

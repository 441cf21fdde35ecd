"""The MemGOS profile: its sixteen tools, with input schemas exactly as the MemGOS seed (seeds/003, "MemGOS MCP
Server API Reference") writes them in its JSON blocks: names, types, enums, ranges, defaults, required fields and
descriptions. ``user_id`` is optional on every tool that has it (required only by validate_access, as the seed
says): without it a tool acts for the token's user; with it, for the user it names, which must be the token's own
(id or username) unless a staff user's token holds the admin scope."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.chat import mcp_tools as chat_tools
from apps.core.limits import CHAT_MAX_TOKENS, CHAT_TOP_K, HISTORY_LIMIT, OFFSET
from apps.cubes import mcp_tools as cube_tools
from apps.cubes.models import CUBE_ID_PATTERN
from apps.mcp import system_tools
from apps.mcp.auth import READ, WRITE
from apps.mcp.envelopes import MemGosEnvelope
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import SnakeCaseSeedModel

MEMORY, CUBE, CHAT, USER, SYSTEM = "memory", "cube", "chat", "user", "system"


ACCESS_CONTROL = "User context for access control (optional)"
CUBE_ID = "Memory cube identifier"
Metadata = dict[str, Any]


class SearchMemoriesInput(SnakeCaseSeedModel):
    query: str = Field(description="Search query text for semantic matching")
    top_k: float = Field(5, ge=1, le=100, description="Maximum number of results to return")
    cube_ids: list[str] | None = Field(None, description="Specific cube IDs to search within (optional)")
    user_id: str | None = Field(None, description="User context for access control (optional)")


class AddMemoryInput(SnakeCaseSeedModel):
    memory_content: str = Field(min_length=1, max_length=50000, description="The content to store as memory")
    mem_cube_id: str = Field(description="Target memory cube identifier")
    user_id: str | None = Field(None, description="User context for ownership (optional)")
    metadata: Metadata | None = Field(None, description="Additional metadata to store with memory (optional)")


class GetMemoryInput(SnakeCaseSeedModel):
    memory_id: str = Field(description="Unique memory identifier")
    cube_id: str = Field(description=CUBE_ID)
    user_id: str | None = Field(None, description=ACCESS_CONTROL)


class UpdateMemoryInput(SnakeCaseSeedModel):
    memory_id: str = Field(description="Memory identifier to update")
    cube_id: str = Field(description=CUBE_ID)
    updated_content: str = Field(min_length=1, max_length=50000, description="New memory content")
    user_id: str | None = Field(None, description=ACCESS_CONTROL)
    metadata: Metadata | None = Field(None, description="Updated metadata (optional)")


class DeleteMemoryInput(SnakeCaseSeedModel):
    memory_id: str = Field(description="Memory identifier to delete")
    cube_id: str = Field(description=CUBE_ID)
    user_id: str | None = Field(None, description=ACCESS_CONTROL)


class RegisterCubeInput(SnakeCaseSeedModel):
    cube_id: str = Field(pattern=CUBE_ID_PATTERN, min_length=1, max_length=100,
                         description="Unique identifier for the new cube")
    cube_path: str | None = Field(None, description="File system path for the cube (optional)")
    user_id: str | None = Field(None, description="Owner user ID (optional)")
    name: str | None = Field(None, description="Human-readable cube name (optional)")
    description: str | None = Field(None, description="Cube description (optional)")


class ListCubesInput(SnakeCaseSeedModel):
    user_id: str | None = Field(None, description="User context for filtering cubes (optional)")
    include_stats: bool = Field(False, description="Include memory count statistics")


class CubeInfoInput(SnakeCaseSeedModel):
    cube_id: str = Field(description="Memory cube identifier to inspect")
    user_id: str | None = Field(None, description=ACCESS_CONTROL)


class ChatInput(SnakeCaseSeedModel):
    query: str = Field(min_length=1, max_length=10000, description="The chat message or question")
    user_id: str | None = Field(None, description="User context for personalized responses (optional)")
    max_tokens: float = Field(CHAT_MAX_TOKENS.default, **CHAT_MAX_TOKENS.schema(), description="Maximum tokens in response")
    top_k: float = Field(CHAT_TOP_K.default, **CHAT_TOP_K.schema(), description="Number of memory contexts to include")
    cube_ids: list[str] | None = Field(None, description="Specific cubes to search for context (optional)")


class ChatHistoryInput(SnakeCaseSeedModel):
    user_id: str | None = Field(None, description="User context for history filtering (optional)")
    session_id: str | None = Field(None, description="Specific session to retrieve (optional)")
    limit: float = Field(HISTORY_LIMIT.default, **HISTORY_LIMIT.schema(), description="Maximum number of messages to return")
    offset: float = Field(OFFSET.default, **OFFSET.schema(), description="Number of messages to skip")


class ContextSearchInput(SnakeCaseSeedModel):
    query: str = Field(description="Query to find relevant context for")
    user_id: str | None = Field(None, description="User context for search (optional)")
    top_k: float = Field(5, ge=1, le=20, description="Number of context items to return")
    cube_ids: list[str] | None = Field(None, description="Specific cubes to search (optional)")


class GetUserInfoInput(SnakeCaseSeedModel):
    user_id: str | None = Field(None, description="User ID to query (defaults to current user)")


class SessionInfoInput(SnakeCaseSeedModel):
    session_id: str | None = Field(None, description="Specific session to query (optional)")


class ValidateAccessInput(SnakeCaseSeedModel):
    user_id: str = Field(description="User to validate access for")
    resource_type: Literal["cube", "memory", "chat", "admin"] = Field(
        description="Type of resource (cube, memory, etc.)")
    resource_id: str = Field(description="Specific resource identifier")
    action: Literal["read", "write", "delete", "admin"] = Field(description="Action to validate")


class HealthCheckInput(SnakeCaseSeedModel):
    pass


class ListToolsInput(SnakeCaseSeedModel):
    category: Literal["memory", "cube", "chat", "user", "system"] | None = Field(
        None, description="Filter by tool category (optional)")


def _tool(name: str, description: str, category: str, input_model: type[SnakeCaseSeedModel], adapter, scope: str,
          *, acts_for_user: bool = True) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_model=input_model, adapter=adapter, scope=scope,
                    category=category, acts_for_field="user_id" if acts_for_user else None)


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
              SearchMemoriesInput, cube_tools.search_memories, READ),
        _tool("add_memory", "Add new textual memory to a memory cube", MEMORY, AddMemoryInput, cube_tools.add_memory,
              WRITE),
        _tool("get_memory", "Retrieve a specific memory by ID from a cube", MEMORY, GetMemoryInput,
              cube_tools.get_memory, READ),
        _tool("update_memory", "Update existing memory content", MEMORY, UpdateMemoryInput, cube_tools.update_memory,
              WRITE),
        _tool("delete_memory", "Delete a specific memory from a cube", MEMORY, DeleteMemoryInput,
              cube_tools.delete_memory, WRITE),
        _tool("register_cube", "Register a new memory cube for storing memories", CUBE, RegisterCubeInput,
              cube_tools.register_cube, WRITE),
        _tool("list_cubes", "List all available memory cubes for the user", CUBE, ListCubesInput,
              cube_tools.list_cubes, READ),
        _tool("cube_info", "Get detailed information about a specific memory cube", CUBE, CubeInfoInput,
              cube_tools.cube_info, READ),
        _tool("chat", "Send a chat message with memory-augmented response", CHAT, ChatInput, chat_tools.chat, WRITE),
        _tool("chat_history", "Retrieve chat conversation history for a session", CHAT, ChatHistoryInput,
              chat_tools.chat_history, READ),
        _tool("context_search", "Search for relevant memory context for chat enhancement", CHAT, ContextSearchInput,
              cube_tools.context_search, READ),
        _tool("get_user_info", "Get user account information and permissions", USER, GetUserInfoInput,
              system_tools.get_user_info, READ),
        _tool("session_info", "Get information about the current session", USER, SessionInfoInput,
              system_tools.session_info, READ, acts_for_user=False),
        _tool("validate_access", "Validate user access permissions for resources", USER, ValidateAccessInput,
              cube_tools.validate_access, READ),
        _tool("health_check", "Check system health and connectivity status", SYSTEM, HealthCheckInput,
              system_tools.health_check, READ, acts_for_user=False),
        _tool("list_tools", "List all available MCP tools with their schemas", SYSTEM, ListToolsInput,
              system_tools.list_tools, READ, acts_for_user=False),
    ),
)

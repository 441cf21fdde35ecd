"""MemGOS's tool input models, exactly as the MemGOS seed (seeds/003, "MemGOS MCP Server API Reference") writes
them in its JSON blocks: names, types, enums, ranges, defaults, required fields and descriptions."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.core.aliases import Aliases
from apps.core.limits import CHAT_MAX_TOKENS, CHAT_TOP_K, HISTORY_LIMIT, OFFSET, PAGE_LIMIT
from apps.cubes.models import CUBE_ID_PATTERN
from apps.mcp.schema import SnakeCaseSeedModel

ACCESS_CONTROL = "User context for access control (optional)"


CUBE_ID = "Memory cube identifier"


Metadata = dict[str, Any]


class SearchMemoriesInput(SnakeCaseSeedModel):
    query: str = Field(description="Search query text for semantic matching")
    top_k: float = Field(5, **PAGE_LIMIT.schema(), description="Maximum number of results to return")
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


# Each tool's alias table: the services' argument names -> the tool's, where they differ.
_SEARCH_ALIASES = Aliases({"text": "query", "limit": "top_k"})
ALIASES = {
    "search_memories": _SEARCH_ALIASES,
    "context_search": _SEARCH_ALIASES,
    "add_memory": Aliases({"content": "memory_content", "cube_id": "mem_cube_id"}),
    "update_memory": Aliases({"content": "updated_content"}),
    "register_cube": Aliases({"path": "cube_path"}),
}

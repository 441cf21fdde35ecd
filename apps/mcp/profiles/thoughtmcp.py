"""The ThoughtMCP profile: its five memory tools, with input schemas exactly as its seed documents
them (seeds/000, "Memory Tools"). Descriptions, names, types, enums and ranges are the seed's; only
the delete default differs, as the delete_memory description says."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema

from apps.mcp.auth import READ, WRITE
from apps.mcp.envelopes import ThoughtMcpEnvelope
from apps.mcp.profile import Profile, ToolSpec
from apps.mcp.schema import SeedModel
from apps.memories import mcp_tools
from apps.memories.models import SECTORS

# Sector names are checked by the memory services, whose message is the seed's "Invalid sector".
Sector = Annotated[str, WithJsonSchema({"type": "string", "enum": SECTORS})]
DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]

USER_ID = "User ID for memory isolation (required)"
OWNER_ID = "User ID for ownership verification (required)"
SECTORS_TO_SEARCH = "Memory sectors to search (default: all sectors)"
UNIT = {"ge": 0, "le": 1}


class StoreMetadata(SeedModel):
    keywords: list[str] | None = Field(None, description="Keywords for search (auto-extracted if not provided)")
    tags: list[str] | None = Field(None, description="Tags for categorization")
    category: str | None = Field(None, description="Category for grouping")
    context: str | None = Field(None, description="Additional context information")
    importance: float | None = Field(None, **UNIT, description="Importance score (0-1, default 0.5)")


class StoreMemoryInput(SeedModel):
    content: str = Field(description="Memory content to store (required, non-empty)")
    user_id: str = Field(description=USER_ID)
    session_id: str = Field(description="Session ID for context tracking (required)")
    primary_sector: Sector = Field(description="Primary memory sector")
    metadata: StoreMetadata | None = Field(None, description="Optional metadata for classification and search")


class DateRange(SeedModel):
    start: DateTime | None = None
    end: DateTime | None = None


class MetadataFilter(SeedModel):
    keywords: list[str] | None = None
    tags: list[str] | None = None
    category: str | None = None


class RetrieveMemoriesInput(SeedModel):
    user_id: str = Field(description=USER_ID)
    text: str | None = Field(None, description="Search query text for vector similarity (optional)")
    sectors: list[Sector] | None = Field(None, description=SECTORS_TO_SEARCH)
    primary_sector: Sector | None = Field(None, description="Filter by primary sector")
    min_strength: float | None = Field(None, **UNIT, description="Minimum memory strength (0-1)")
    min_salience: float | None = Field(None, **UNIT, description="Minimum salience score (0-1)")
    date_range: DateRange | None = Field(None, description="Filter by creation date range (ISO 8601)")
    metadata: MetadataFilter | None = Field(None, description="Metadata filters")
    limit: float | None = Field(None, ge=1, le=100, description="Maximum results to return (default 10, max 100)")
    offset: float | None = Field(None, ge=0, description="Pagination offset (default 0)")


class SearchMemoriesInput(RetrieveMemoriesInput):
    text: str | None = Field(
        None,
        description="Full-text search query with boolean operators (AND, OR, NOT) and phrase matching",
    )
    date_range: DateRange | None = Field(None, description="Filter by creation date range")


class MetadataUpdate(SeedModel):
    keywords: list[str] | None = None
    tags: list[str] | None = None
    category: str | None = None
    context: str | None = None
    importance: float | None = Field(None, **UNIT)


class UpdateMemoryInput(SeedModel):
    memory_id: str = Field(description="Memory ID to update (required)")
    user_id: str = Field(description=OWNER_ID)
    content: str | None = Field(None, description="New content (triggers embedding regeneration)")
    strength: float | None = Field(None, **UNIT, description="New strength value (0-1)")
    salience: float | None = Field(None, **UNIT, description="New salience value (0-1)")
    metadata: MetadataUpdate | None = Field(None, description="Metadata updates")


class DeleteMemoryInput(SeedModel):
    memory_id: str = Field(description="Memory ID to delete (required)")
    user_id: str = Field(description=OWNER_ID)
    soft: bool | None = Field(
        None,
        description="Soft delete (true) sets strength=0, hard delete (false) removes record (default: false)",
    )


PROFILE = Profile(
    name="thoughtmcp",
    title="ThoughtMCP",
    description="ThoughtMCP's memory tools: five-sector memories, waypoint links, composite-scored retrieval "
                "and boolean full-text search.",
    envelope=ThoughtMcpEnvelope(),
    tools=(
        ToolSpec(
            name="store_memory",
            description="Store a new memory with automatic embedding generation and waypoint graph connections. "
                        "Generates five-sector embeddings (episodic, semantic, procedural, emotional, reflective) "
                        "and creates 1-3 waypoint connections to similar existing memories.",
            input_model=StoreMemoryInput,
            adapter=mcp_tools.store_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
        ),
        ToolSpec(
            name="retrieve_memories",
            description="Retrieve memories using composite scoring with vector similarity, metadata filtering, "
                        "and pagination: 0.6×similarity + 0.2×salience + 0.1×recency + 0.1×linkWeight. Supports "
                        "filtering by sectors, strength, salience, date range, and metadata.",
            input_model=RetrieveMemoriesInput,
            adapter=mcp_tools.retrieve_memories,
            scope=READ,
            components_used=("memoryRepository", "embeddingEngine", "compositeScorer"),
        ),
        ToolSpec(
            name="update_memory",
            description="Update an existing memory with selective field updates. Content changes trigger automatic "
                        "embedding regeneration and waypoint connection updates. Supports updating strength, "
                        "salience, and metadata.",
            input_model=UpdateMemoryInput,
            adapter=mcp_tools.update_memory,
            scope=WRITE,
            components_used=("memoryRepository", "embeddingEngine", "graphBuilder"),
        ),
        ToolSpec(
            name="delete_memory",
            description="Delete a memory. Soft delete sets strength to 0 and keeps everything, so the memory can "
                        "be restored; hard delete removes the memory with its embeddings and connections. "
                        "Engram deletes softly when `soft` is omitted (deletes stay recoverable unless you ask "
                        "otherwise); pass soft: false to remove the memory for good.",
            input_model=DeleteMemoryInput,
            adapter=mcp_tools.delete_memory,
            scope=WRITE,
            components_used=("memoryRepository",),
        ),
        ToolSpec(
            name="search_memories",
            description="Advanced memory search combining full-text search, vector similarity, and metadata "
                        "filtering. PostgreSQL full-text search with boolean operators (AND, OR, NOT) and "
                        "\"phrase matching\"; returns ranked results with composite scores.",
            input_model=SearchMemoriesInput,
            adapter=mcp_tools.search_memories,
            scope=READ,
            components_used=("memoryRepository", "searchEngine", "embeddingEngine"),
        ),
    ),
)

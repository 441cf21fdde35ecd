"""ThoughtMCP's memory tool adapters, in the seed's shapes.

Each adapter gets the acting user and the validated input model, calls one service through
``run_sync`` (apps/core/threads.py) (MCP tools are async: see ARCHITECTURE.md) and returns the ``data`` part
of the seed's response. Access checks and validation messages come from the services.
"""
from __future__ import annotations

from typing import Any


from apps.accounts.models import User
from apps.core.threads import run_sync
from apps.core.timestamps import iso_timestamp
from apps.mcp.profiles.thoughtmcp.inputs import (
    DeleteMemoryInput, MetadataUpdate, RetrieveMemoriesInput, SearchMemoriesInput, StoreMemoryInput, StoreMetadata,
    UpdateMemoryInput,
)
from apps.memories.models import Memory
from apps.memories.services import memory_delete, memory_retrieve, memory_search, memory_store, memory_update
from apps.memories.validation import MemoryFilters

DELETE_MESSAGES = {
    "hard": "Memory and all related data removed",
    "soft": "Memory soft-deleted: strength set to 0 and hidden from results; it can be restored",
}


async def store_memory(actor: User, params: StoreMemoryInput) -> dict[str, Any]:
    result = await run_sync(memory_store)(
        actor=actor, content=params.content, primary_sector=params.primary_sector, session_id=params.session_id,
        **_metadata_fields(params.metadata),
    )
    return {
        "memoryId": str(result.memory.pk),
        "embeddingsGenerated": result.embeddings_generated,
        "linksCreated": result.links_created,
        "salience": result.memory.salience,
        "strength": result.memory.strength,
    }


async def retrieve_memories(actor: User, params: RetrieveMemoriesInput) -> dict[str, Any]:
    result = await run_sync(memory_retrieve)(
        actor=actor, text=params.text, filters=_filters(params), limit=params.limit, offset=params.offset,
    )
    memories = [
        {**_memory_fields(item.memory), "lastAccessed": _last_accessed(item.memory),
         "primarySector": item.memory.primary_sector, "metadata": _metadata(item.memory), "score": item.score}
        for item in result.items
    ]
    return {
        "memories": memories,
        "totalCount": result.total_count,
        "scores": {memory["id"]: memory["score"] for memory in memories},
    }


async def search_memories(actor: User, params: SearchMemoriesInput) -> dict[str, Any]:
    result = await run_sync(memory_search)(
        actor=actor, text=params.text, filters=_filters(params), limit=params.limit, offset=params.offset,
    )
    memories = [
        {**_memory_fields(item.memory), "rank": item.score, "highlight": item.highlight,
         "matchedTerms": item.matched_terms, "primarySector": item.memory.primary_sector,
         "metadata": _metadata(item.memory)}
        for item in result.items
    ]
    answer = {"memories": memories, "totalCount": result.total_count, "searchType": result.search_type}
    # Engram's addition, present only when a word was corrected: the seed's answer is unchanged otherwise.
    return {**answer, "didYouMean": result.suggestion} if result.suggestion else answer


async def update_memory(actor: User, params: UpdateMemoryInput) -> dict[str, Any]:
    result = await run_sync(memory_update)(
        actor=actor, memory_id=params.memory_id, content=params.content, strength=params.strength,
        salience=params.salience, **_metadata_fields(params.metadata),
    )
    return {
        "memoryId": str(result.memory.pk),
        "embeddingsRegenerated": result.embeddings_regenerated,
        "connectionsUpdated": result.connections_updated,
        "strength": result.memory.strength,
        "salience": result.memory.salience,
    }


async def delete_memory(actor: User, params: DeleteMemoryInput) -> dict[str, Any]:
    # Engram's rule, not the seed's default: a delete is recoverable unless the caller says soft=false.
    soft = params.soft is not False
    deletion_type = await run_sync(memory_delete)(actor=actor, memory_id=params.memory_id, soft=soft)
    return {"memoryId": params.memory_id, "deletionType": deletion_type, "message": DELETE_MESSAGES[deletion_type]}


def _metadata_fields(metadata: StoreMetadata | MetadataUpdate | None) -> dict[str, Any]:
    """The seed's metadata object as the memory services' keyword arguments (None: not given)."""
    return metadata.model_dump() if metadata is not None else {}


def _filters(params: RetrieveMemoriesInput) -> MemoryFilters:
    date_range, metadata = params.date_range, params.metadata
    return MemoryFilters.build(
        sectors=params.sectors, primary_sector=params.primary_sector, min_strength=params.min_strength,
        min_salience=params.min_salience, date_start=date_range and date_range.start,
        date_end=date_range and date_range.end, keywords=metadata and metadata.keywords,
        tags=metadata and metadata.tags, category=metadata and metadata.category,
    )


def _memory_fields(memory: Memory) -> dict[str, Any]:
    return {
        "id": str(memory.pk),
        "content": memory.content,
        "createdAt": iso_timestamp(memory.created_at),
        "strength": memory.strength,
        "salience": memory.salience,
    }


def _last_accessed(memory: Memory) -> str:
    # ThoughtMCP counts creation as the first access, so lastAccessed is never empty.
    return iso_timestamp(memory.last_accessed_at or memory.created_at)


def _metadata(memory: Memory) -> dict[str, Any]:
    return {
        "keywords": memory.keywords,
        "tags": memory.tags,
        "category": memory.category,
        "context": memory.context,
        "importance": memory.importance,
    }

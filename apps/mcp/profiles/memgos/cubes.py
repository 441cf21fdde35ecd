"""MCP adapters for MemGOS's memory, cube and access tools (the `memgos` profile lists them), in the seed's shapes.

Each adapter gets the acting user and the validated input, calls the memory and cube services (and the access
selector) in one worker thread, and returns the seed's fields. Services name fields in their own words
(``content``, ``cube_id``, ``memory_id``); the profile's alias table (``inputs.ALIASES``) renames them to the MemGOS
argument the caller sent, so an error's ``details.parameter`` always names something the caller can fix.
Memory ids are Engram's UUIDs.
"""
from __future__ import annotations

import time
from typing import Any

from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.core.threads import run_sync
from apps.cubes.access import cube_get_readable
from apps.cubes.models import Cube
from apps.cubes.selectors import access_check, cube_list, cube_list_with_stats, cube_statistics
from apps.cubes.services import cube_register
from apps.core.timestamps import iso_or_none
from apps.mcp.profiles.memgos.inputs import (
    AddMemoryInput, ContextSearchInput, CubeInfoInput, DeleteMemoryInput, GetMemoryInput, ListCubesInput,
    RegisterCubeInput, SearchMemoriesInput, UpdateMemoryInput, ValidateAccessInput,
)
from apps.memories.models import Memory
from apps.memories.selectors import memory_get, memory_get_in_cube
from apps.memories.services import memory_delete, memory_retrieve, memory_store, memory_update
from apps.memories.services.retrieval import ScoredMemory
from apps.memories.validation import MemoryFilters

def _memory_in_cube(*, actor: User, memory_id: str, cube_id: str) -> Memory:
    return memory_get_in_cube(actor=actor, memory_id=memory_id, cube_id=cube_id)


def _search_query(query: str) -> str:
    if not query.strip():
        raise InvalidInput("query cannot be empty: say what to search for.", field="query")
    return query


async def _retrieve(actor: User, *, query: str, top_k: float, cube_ids: list[str] | None,
                    reinforce: bool) -> tuple[list[ScoredMemory], int]:
    """Retrieval over the readable cubes (or ``cube_ids``, each of which must be readable), and its duration in
    milliseconds as measured around the service call."""
    def retrieve() -> tuple[list[ScoredMemory], int]:
        filters = MemoryFilters.build(cube_ids=cube_ids)
        started = time.perf_counter()
        result = memory_retrieve(actor=actor, text=_search_query(query), filters=filters, limit=top_k,
                                 reinforce=reinforce)
        return result.items, round((time.perf_counter() - started) * 1000)

    return await run_sync(retrieve)()


async def search_memories(actor: User, params: SearchMemoriesInput) -> dict[str, Any]:
    items, elapsed_ms = await _retrieve(actor, query=params.query, top_k=params.top_k, cube_ids=params.cube_ids,
                                        reinforce=True)
    by_cube: dict[str, list[dict[str, Any]]] = {}
    for item in items:  # best first; cubes in the order of their best memory
        memory = item.memory
        by_cube.setdefault(memory.cube_id, []).append({
            "id": str(memory.pk), "content": memory.content,
            "metadata": {**memory.metadata, "score": round(item.score, 4),
                         "created_at": iso_or_none(memory.created_at)},
        })
    return {
        # MemGOS's activation and parametric memories have no counterpart in Engram: honestly empty.
        "results": {"text_mem": [{"cube_id": cube_id, "memories": memories} for cube_id, memories in by_cube.items()],
                    "act_mem": [], "para_mem": []},
        "total_results": len(items),
        "search_time_ms": elapsed_ms,
    }


async def context_search(actor: User, params: ContextSearchInput) -> dict[str, Any]:
    # Like chat's own retrieval, finding context is not a use the user chose: no reinforcement.
    items, elapsed_ms = await _retrieve(actor, query=params.query, top_k=params.top_k, cube_ids=params.cube_ids,
                                        reinforce=False)
    context = [
        {"memory_id": str(item.memory.pk), "cube_id": item.memory.cube_id, "content": item.memory.content,
         "relevance_score": round(item.relevance, 4), "metadata": item.memory.metadata}
        for item in items
    ]
    return {"context": context, "total_context_items": len(context), "search_time_ms": elapsed_ms}


async def add_memory(actor: User, params: AddMemoryInput) -> dict[str, Any]:
    def add() -> Memory:
        return memory_store(actor=actor, content=params.memory_content, cube_id=params.mem_cube_id,
                            metadata=params.metadata).memory

    memory = await run_sync(add)()
    return {"memory_id": str(memory.pk), "cube_id": memory.cube_id, "created_at": iso_or_none(memory.created_at),
            "message": "Memory added successfully"}


async def get_memory(actor: User, params: GetMemoryInput) -> dict[str, Any]:
    memory = await run_sync(_memory_in_cube)(actor=actor, memory_id=params.memory_id,
                                                           cube_id=params.cube_id)
    metadata = {**memory.metadata, "created_at": iso_or_none(memory.created_at),
                "updated_at": iso_or_none(memory.updated_at)}
    return {"memory": {"id": str(memory.pk), "content": memory.content, "metadata": metadata,
                       "cube_id": memory.cube_id}}


async def update_memory(actor: User, params: UpdateMemoryInput) -> dict[str, Any]:
    """New content re-embeds the memory; metadata, when given, replaces the memory's metadata."""
    def update() -> Memory:
        memory = _memory_in_cube(actor=actor, memory_id=params.memory_id, cube_id=params.cube_id)
        return memory_update(actor=actor, memory_id=memory.pk, content=params.updated_content,
                             metadata=params.metadata).memory

    memory = await run_sync(update)()
    return {"memory_id": str(memory.pk), "updated_at": iso_or_none(memory.updated_at),
            "message": "Memory updated successfully"}


async def delete_memory(actor: User, params: DeleteMemoryInput) -> dict[str, Any]:
    """A soft delete: the memory disappears from every read and can be restored (dashboard, REST, admin)."""
    def delete() -> Memory:
        memory = _memory_in_cube(actor=actor, memory_id=params.memory_id, cube_id=params.cube_id)
        memory_delete(actor=actor, memory_id=memory.pk, soft=True)
        return memory_get(actor=actor, memory_id=memory.pk, include_deleted=True)

    memory = await run_sync(delete)()
    return {"memory_id": str(memory.pk), "deleted_at": iso_or_none(memory.deleted_at),
            "message": "Memory deleted successfully"}


async def register_cube(actor: User, params: RegisterCubeInput) -> dict[str, Any]:
    def register() -> Cube:
        return cube_register(actor=actor, cube_id=params.cube_id, name=params.name,
                             description=params.description or "", path=params.cube_path or "")

    cube = await run_sync(register)()
    return {"cube_id": cube.pk, "created_at": iso_or_none(cube.created_at),
            "message": "Memory cube registered successfully"}


def cube_rows(*, actor: User, include_stats: bool) -> list[dict[str, Any]]:
    """The readable cubes in the seed's shape, in one query (with their live memory counts when asked)."""
    cubes = cube_list_with_stats(actor=actor) if include_stats else cube_list(actor=actor)
    rows = []
    for cube in cubes:
        # Engram keeps every cube in its database, always ready: "loaded" is always true.
        row = {"id": cube.pk, "name": cube.name, "owner_id": str(cube.owner_id),
               "created_at": iso_or_none(cube.created_at), "is_loaded": True}
        if include_stats:
            row["memory_count"] = cube.memory_count
        rows.append(row)
    return rows


async def list_cubes(actor: User, params: ListCubesInput) -> dict[str, Any]:
    cubes = await run_sync(cube_rows)(actor=actor, include_stats=params.include_stats)
    return {"cubes": cubes, "total_cubes": len(cubes)}


async def cube_info(actor: User, params: CubeInfoInput) -> dict[str, Any]:
    def info() -> tuple[Cube, dict[str, Any]]:
        return cube_get_readable(actor=actor, cube_id=params.cube_id), \
            cube_statistics(actor=actor, cube_id=params.cube_id)

    cube, stats = await run_sync(info)()
    statistics = {
        "total_memories": stats["total_memories"],
        # Engram's memories are all text (the memory kind, and Mind's entity nodes); it has no activation or
        # parametric memories, so those counts are 0.
        "text_memories": stats["memories_by_kind"].get(Memory.Kind.MEMORY, 0),
        "activation_memories": 0,
        "parametric_memories": 0,
        "total_size_bytes": stats["total_size_bytes"],
        "last_accessed": iso_or_none(stats["last_accessed"]),
    }
    return {"cube": {"id": cube.pk, "name": cube.name, "path": cube.path, "owner_id": str(cube.owner_id),
                     "created_at": iso_or_none(cube.created_at), "updated_at": iso_or_none(cube.updated_at),
                     "is_loaded": True, "statistics": statistics}}


async def validate_access(actor: User, params: ValidateAccessInput) -> dict[str, Any]:
    """The answer of the same rules every service enforces (apps.cubes.selectors.access_check)."""
    decision = await run_sync(access_check)(
        actor=actor, resource_type=params.resource_type, resource_id=params.resource_id, action=params.action)
    return {"access": {
        "user_id": str(actor.pk), "resource_type": params.resource_type, "resource_id": params.resource_id,
        "action": params.action, "has_access": decision.has_access, "reason": decision.reason,
        "checked_at": iso_or_none(timezone.now()),
    }}

"""Writes of the memory core, one module an area; import them from here."""
from functools import wraps

from apps.memories import queries
from apps.memories.services import retrieval
from apps.memories.services.bulk import (  # noqa: F401
    MoveResult, memory_delete_many, memory_move_many, memory_restore_many, memory_tag_many,
)
from apps.memories.services.lifecycle import (  # noqa: F401
    memory_boost, memory_decay, memory_delete, memory_purge, memory_reembed, memory_reinforce, memory_restore,
    memory_update,
)
from apps.memories.services.retrieval import RetrieveResult, SearchResult  # noqa: F401
from apps.memories.services.store import (  # noqa: F401
    PreparedBatch, StoreResult, embed_memories, memory_prepare_many, memory_store, memory_store_many,
    memory_store_prepared, memory_tables_analyze,
)


# Every edge queries through these two: each query is announced first (a dream of the actor stops for it), so a
# query by any edge wakes the actor's dream. The dream's own queries use the retrieval package's, unannounced.
@wraps(retrieval.memory_retrieve)
def memory_retrieve(*, actor, **arguments) -> RetrieveResult:
    queries.announce(actor.pk)
    return retrieval.memory_retrieve(actor=actor, **arguments)


@wraps(retrieval.memory_search)
def memory_search(*, actor, **arguments) -> SearchResult:
    queries.announce(actor.pk)
    return retrieval.memory_search(actor=actor, **arguments)

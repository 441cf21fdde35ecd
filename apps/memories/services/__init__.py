"""Writes of the memory core, one module an area; import them from here."""
from apps.memories.services.lifecycle import (  # noqa: F401
    memory_boost, memory_decay, memory_delete, memory_purge, memory_reembed, memory_reinforce, memory_restore,
    memory_update,
)
from apps.memories.services.retrieval import RetrieveResult, SearchResult, memory_retrieve, memory_search  # noqa: F401
from apps.memories.services.store import (  # noqa: F401
    PreparedBatch, StoreResult, embed_memories, memory_prepare_many, memory_store, memory_store_many,
    memory_store_prepared,
)

"""Dense search: the query's vector, and whether a boolean search's matches are compared with it exactly or
through the HNSW index (docs/retrieval.md, "Candidates")."""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import connection

from apps.memories.embeddings import embed_query
from apps.memories.models import Memory

# Above this many matches, a boolean search walks HNSW instead when its matches are at least
# HNSW_MIN_SHARE of all memories: embedded as its positive words, the query's nearest vectors are mostly
# matches, and a walk through which one row in a hundred passes is faster than comparing thousands of
# vectors exactly (docs/benchmarks.md#retrieve-and-search-latency). Through a smaller share of a larger
# table (one user's matches among many users' memories) the walk would go far: those stay exact.
HNSW_MIN_MATCHES = 1000
HNSW_MIN_SHARE = 0.01
# The HNSW candidate list of a retrieval's walk: the pool's 100 nearest come out of one pass, 1.3 ms sooner than
# at 200 at 100k memories, and the top 10 stay those of an ef_search of 1000 (docs/benchmarks.md, speed table).
RETRIEVAL_EF_SEARCH = 100
TABLE_SIZE_SECONDS = 300.0
_table_size: list = [float("-inf"), -1]  # [monotonic time read, memories in the table per PostgreSQL's statistics]
# Query embeddings run here, beside the request's SQL; a few workers so that concurrent requests do not queue.
_query_embedder = ThreadPoolExecutor(max_workers=4, thread_name_prefix="engram-query-embedding")


def start_embedding(text: str) -> Future:
    """The query vector, computed in a worker thread while the calling thread runs the first SQL (torch
    releases the GIL). Only the model runs there: database work stays on the caller's connection."""
    return _query_embedder.submit(embed_query, text)


class QueryEmbedding:
    """The query's vector, started in the worker thread when the lexical statement is sent (`start`, called by
    lexical_model), so that the model's Python steps (the tokenizer) run while the calling thread waits
    on PostgreSQL rather than beside the Python that builds the statements before it: two threads that both want
    the GIL take turns, and the scope's statement took 1.5-3 ms instead of 0.1 ms. `result` starts it if nothing did."""

    def __init__(self, text: str):
        self.text = text
        self._future: Future | None = None

    def start(self) -> None:
        if self._future is None:
            self._future = start_embedding(self.text)

    def result(self):
        self.start()
        return self._future.result()


def compare_exactly(matches: int) -> bool:
    """Whether a boolean search's `matches` (at most lexical.EXACT_DENSE_MATCHES) compare their vectors
    exactly rather than through HNSW (see HNSW_MIN_MATCHES)."""
    if matches <= HNSW_MIN_MATCHES:
        return True
    table = _memories_in_table()
    return table < 0 or matches < HNSW_MIN_SHARE * table  # a table never analyzed: the safe way


def _memories_in_table() -> int:
    """The memory table's rows as PostgreSQL's statistics estimate them (pg_class.reltuples, which ANALYZE
    and autovacuum keep), read at most every TABLE_SIZE_SECONDS per process; -1 before the first ANALYZE."""
    now = time.monotonic()
    if now - _table_size[0] > TABLE_SIZE_SECONDS:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [Memory._meta.db_table])
            _table_size[:] = [now, cursor.fetchone()[0]]
    return _table_size[1]

"""Filtered nearest-neighbour search over the HNSW index.

An HNSW index scan yields its ef_search nearest entries of the whole table; filters applied after it
(the actor's cubes, a sector, live rows) can then leave too few rows, or none, once other users'
vectors crowd the neighbourhood. pgvector's iterative scan keeps walking the graph until the filters
are satisfied. ``relaxed_order`` may return rows slightly out of order, so callers re-sort.

The walk stops at ``hnsw.max_scan_tuples`` (20,000) even so: a scope that is a small part of the table
(one user's small cube among 100k memories, or a table full of dead entries not yet vacuumed) can come
back short or empty. ``nearest_in_scope`` therefore compares a small scope exactly.
"""
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import QuerySet
from pgvector import Vector
from pgvector.django import CosineDistance

HNSW_EF_SEARCH = 200
# A scope of at most this many memories is compared exactly (a few milliseconds), never through HNSW.
EXACT_SCOPE_MEMORIES = 2000


def vector_text(vector) -> str:
    """A vector (a list of floats or a numpy array) in pgvector's text form, for a ``%s::vector`` parameter of
    raw SQL: what pgvector.django's own distance functions send."""
    return Vector(vector).to_text()


@contextmanager
def filtered_vector_scan():
    """Run the enclosed queries with HNSW iterative scans (SET LOCAL: this transaction only)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                           "set_config('hnsw.ef_search', %s, true)", [str(HNSW_EF_SEARCH)])
        yield


def nearest_exactly(memory_ids: list, vector, sectors: list[str], limit: int) -> list[tuple]:
    """(memory id, distance) of the ``limit`` memories of ``memory_ids`` nearest ``vector`` over ``sectors``,
    nearest first, every vector compared.

    The distances are computed in a subquery that PostgreSQL may not flatten (OFFSET 0), so that only
    (memory id, distance) pairs reach the aggregate, never whole rows with their vectors sorted by memory
    id (docs/benchmarks.md#retrieve-and-search-latency). With no ORDER BY on the distance inside, the HNSW
    index stays out."""
    from apps.memories.models import MemoryEmbedding

    if not memory_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT memory_id, min(distance) AS distance FROM ("
            f"SELECT memory_id, embedding <=> %s::vector AS distance FROM {MemoryEmbedding._meta.db_table} "
            "WHERE memory_id = ANY(%s::uuid[]) AND sector = ANY(%s::text[]) OFFSET 0) AS compared "
            "GROUP BY memory_id ORDER BY distance, memory_id LIMIT %s",
            [vector_text(vector), list(memory_ids), list(sectors), limit],
        )
        return cursor.fetchall()


def nearest_in_scope(scope: QuerySet, vector, *, sector: str, limit: int) -> list[tuple]:
    """(memory id, distance) of the ``limit`` memories of ``scope`` (a Memory queryset) nearest ``vector`` in
    one sector, nearest first: exactly when the scope holds at most EXACT_SCOPE_MEMORIES, else through the
    index with an iterative scan."""
    from apps.memories.models import MemoryEmbedding

    ids = list(scope.values_list("pk", flat=True)[:EXACT_SCOPE_MEMORIES + 1])
    if len(ids) <= EXACT_SCOPE_MEMORIES:
        return nearest_exactly(ids, vector, [sector], limit)
    with filtered_vector_scan():
        rows = list(
            MemoryEmbedding.objects.filter(sector=sector, memory_id__in=scope.values("pk"))
            .annotate(distance=CosineDistance("embedding", vector)).order_by("distance")
            .values_list("memory_id", "distance")[:limit]
        )
    return sorted(rows, key=lambda row: row[1])

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
from django.db.models import F, FloatField, Func, QuerySet
import numpy as np
from pgvector import HalfVector, Vector
from pgvector.django import CosineDistance

from apps.core.halfvec import halfvec_text
from apps.memories.sectors import SECTORS, SEMANTIC, sector_offsets

HNSW_EF_SEARCH = 200
# A scope of at most this many memories is compared exactly (a few milliseconds), never through HNSW.
EXACT_SCOPE_MEMORIES = 2000


def vector_text(vector) -> str:
    """A vector (a list of floats or a numpy array) in pgvector's text form, for a ``%s::vector`` parameter of raw
    SQL; a ``%s::halfvec`` one takes apps.core.halfvec.halfvec_text, a third of the time."""
    return Vector(vector).to_text()


def vector_scan_settings(ef_search: int = HNSW_EF_SEARCH) -> tuple[str, list]:
    """The settings of filtered_vector_scan as a statement to send in the same execute as the query that walks
    the index ("<these>; <query>", then ``cursor.nextset()``): one round trip instead of BEGIN, SET and COMMIT.
    In autocommit the statements of one simple query are one implicit transaction, so the settings hold for that
    query only; inside a transaction they hold to its end, as filtered_vector_scan's do."""
    return ("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true); ",
            [str(ef_search)])


@contextmanager
def filtered_vector_scan(ef_search: int = HNSW_EF_SEARCH):
    """Run the enclosed queries with HNSW iterative scans (SET LOCAL: this transaction only)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                           "set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
        yield


def sector_similarity_sql(query, sectors, *, vector: str, tokens: str, similarity: str,
                          similarity_params: tuple = ()) -> tuple[str, list]:
    """SQL and parameters for the best cosine similarity between `query` and a memory's sector vectors over
    `sectors`, given the SQL of the memory's content vector, its token count, and its cosine similarity with
    the query (with `similarity_params`): (q.v + q.a / n) / sqrt(1 + 2 v.a / n + a.a / n^2) per sector
    (apps/memories/sectors.py), where `v <#> a` is -v.a."""
    offsets = sector_offsets()
    query = np.asarray(query, dtype=np.float32)
    terms, params = [], []
    for sector in dict.fromkeys(sectors):
        params += similarity_params
        if sector == SEMANTIC:
            terms.append(similarity)
            continue
        offset = offsets.of(sector)
        n = f"GREATEST({tokens}, 1)::float8"
        terms.append(f"({similarity} + %s / {n}) / sqrt(1 - 2 * ({vector} <#> %s::halfvec) / {n} + %s / ({n} * {n}))")
        params += [float(query @ offset), offsets.texts[SECTORS.index(sector)], float(offset @ offset)]
    return (terms[0] if len(terms) == 1 else f"GREATEST({', '.join(terms)})"), params


class BestSectorSimilarity(Func):
    """The ORM's form of sector_similarity_sql: the best similarity between `query` and the sector vectors
    (over `sectors`) of a MemoryVector's `embedding` and `tokens` columns."""

    output_field = FloatField()

    def __init__(self, *, query, sectors):
        super().__init__(F("embedding"), F("tokens"))
        self.query, self.sectors = query, list(sectors)

    def as_sql(self, compiler, connection, **extra_context):
        (vector, vector_params), (tokens, tokens_params) = (compiler.compile(e) for e in self.source_expressions)
        assert not vector_params and not tokens_params  # plain columns
        return sector_similarity_sql(self.query, self.sectors, vector=vector, tokens=tokens,
                                     similarity=f"(1 - ({vector} <=> %s::halfvec))",
                                     similarity_params=(halfvec_text(self.query),))


def nearest_exactly(memory_ids: list, vector, sectors: list[str], limit: int) -> list[tuple]:
    """(memory id, distance) of the ``limit`` memories of ``memory_ids`` nearest ``vector`` over ``sectors``
    (distance = 1 - the best sector similarity), nearest first, every vector compared.

    Each vector's similarity is computed once, in a subquery PostgreSQL may not flatten (OFFSET 0); with
    no ORDER BY on a distance inside, the HNSW index stays out."""
    from apps.memories.models import MemoryVector

    if not memory_ids:
        return []
    best, params = sector_similarity_sql(vector, sectors, vector="v", tokens="n", similarity="s")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT memory_id, 1 - {best} AS distance FROM ("
            f"SELECT memory_id, embedding AS v, tokens AS n, 1 - (embedding <=> %s::halfvec) AS s "
            f"FROM {MemoryVector._meta.db_table} "
            "WHERE memory_id = ANY(%s::uuid[]) OFFSET 0) AS compared ORDER BY distance, memory_id LIMIT %s",
            [*params, halfvec_text(vector), list(memory_ids), limit],
        )
        return cursor.fetchall()


def nearest_in_scope(scope: QuerySet, vector, *, limit: int) -> list[tuple]:
    """(memory id, distance) of the ``limit`` memories of ``scope`` (a Memory queryset) whose content vectors are
    nearest ``vector``, nearest first: exactly when the scope holds at most EXACT_SCOPE_MEMORIES, else through
    the index with an iterative scan (and exactly after all when that scan comes back short)."""
    from apps.memories.models import MemoryVector

    ids = list(scope.values_list("pk", flat=True)[:EXACT_SCOPE_MEMORIES + 1])
    if len(ids) <= EXACT_SCOPE_MEMORIES:
        return nearest_exactly(ids, vector, [SEMANTIC], limit)
    with filtered_vector_scan():
        rows = list(
            MemoryVector.objects.filter(memory_id__in=scope.values("pk"))
            .annotate(distance=CosineDistance("embedding", HalfVector(vector))).order_by("distance")
            .values_list("memory_id", "distance")[:limit]
        )
    if len(rows) < limit and len(rows) < scope.count():
        # The walk stopped at hnsw.max_scan_tuples before the scope's neighbours (dead entries, or other
        # users' vectors crowding this one): rare, and then the exact comparison is the right answer.
        return nearest_exactly(list(scope.values_list("pk", flat=True)), vector, [SEMANTIC], limit)
    return sorted(rows, key=lambda row: row[1])

"""Filtered nearest-neighbour search over the HNSW index.

An HNSW index scan yields its ef_search nearest entries of the whole table; filters applied after it
(the actor's cubes, a sector, live rows) can then leave too few rows, or none, once other users'
vectors crowd the neighbourhood. pgvector's iterative scan keeps walking the graph until the filters
are satisfied. ``relaxed_order`` may return rows slightly out of order, so callers re-sort.
"""
from contextlib import contextmanager

from django.db import connection, transaction

HNSW_EF_SEARCH = 200


@contextmanager
def filtered_vector_scan():
    """Run the enclosed queries with HNSW iterative scans (SET LOCAL: this transaction only)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                           "set_config('hnsw.ef_search', %s, true)", [str(HNSW_EF_SEARCH)])
        yield

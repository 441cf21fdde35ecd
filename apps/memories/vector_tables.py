"""The tables that keep vectors made by the embedding model, so that a model switch (services/model_switch.py)
moves every one of them: memories' own, and those apps above memories ``register`` at start-up (Context Graph's
session items), so memories never imports those apps."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class VectorTable:
    """A table whose `column` holds a vector of the text `text_sql` (SQL over the table aliased ``t``, with
    `join`), keyed by `key`; `tokens` is the column of the token count the model read, where the table has one;
    `index` the HNSW index on the column (cosine, halfvec), built again after the switch."""

    table: str
    key: str
    column: str
    text_sql: str
    join: str = ""
    tokens: str | None = None
    index: str | None = None
    index_m: int = 16
    index_ef_construction: int = 64


_tables: list[VectorTable] = []


def register(table: VectorTable) -> None:
    if table not in _tables:
        _tables.append(table)


def vector_tables() -> list[VectorTable]:
    from apps.memories.models import Memory, MemoryVector

    own = VectorTable(table=MemoryVector._meta.db_table, key="memory_id", column="embedding", text_sql="m.content",
                      join=f"JOIN {Memory._meta.db_table} m ON m.id = t.memory_id", tokens="tokens",
                      index="memory_vector_hnsw")
    return [own, *_tables]


def stored_dimensions() -> int | None:
    """The dimension of the stored memory vectors (their column's), or None before the table exists."""
    from apps.memories.models import MemoryVector

    with connection.cursor() as cursor:
        cursor.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
                       [MemoryVector._meta.db_table])
        row = cursor.fetchone()
    return row[0] if row and row[0] > 0 else None

"""Moving every stored vector to another embedding model while Engram keeps answering.

A switch (a ModelSwitch row, run by the Celery task or ``manage.py switch_embedding_model --inline``) goes in three
steps over every vector table (vector_tables.py):

1. staging: the new model embeds each row's text into a stage table beside it, in batches, saving its progress after
   each; a run that stops (a worker killed under it) goes on from the rows already staged. Reads and writes go on
   with the old vectors meanwhile.
2. swapping: one transaction that holds writes back (reads go on): rows stored or edited since they were staged
   (their text's md5 differs) are embedded again, then each vector column is replaced by the staged one.
3. indexing: each HNSW index is built again, concurrently, so neither reads nor writes wait for it.

The processes that serve must then restart with ENGRAM_EMBEDDING_MODEL set to the new model: until they do, their
queries' vectors no longer match the stored ones, and they answer so (apps/core/exceptions.py).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.exceptions import Conflict, InvalidInput
from apps.memories.embeddings import ModelReader, model_reader
from apps.memories.models import ModelSwitch
from apps.memories.sectors import embed_contents
from apps.memories.vector_tables import VectorTable, stored_dimensions, vector_tables
from apps.core.halfvec import halfvec_text

logger = logging.getLogger(__name__)

BATCH = 128
Progress = Callable[[ModelSwitch], None]


def stored_model() -> str | None:
    """The model that made the stored vectors: the last finished switch's; before any, the configured one when the
    stored dimension is its, else the known model of that dimension (a server started with a new model, not
    switched), or None."""
    last = _last_swapped()
    if last:
        return last.model
    dimensions = stored_dimensions()
    if dimensions in (None, settings.ENGRAM_EMBEDDING_DIMENSIONS):
        return settings.ENGRAM_EMBEDDING_MODEL
    return next((name for name, known in settings.ENGRAM_EMBEDDING_MODELS.items()
                 if known["dimensions"] == dimensions), None)


def _last_swapped() -> ModelSwitch | None:
    """The last switch whose vectors were swapped in: done, or stopped while its index was built."""
    swapped = (ModelSwitch.Status.DONE, ModelSwitch.Status.INDEXING)
    return ModelSwitch.objects.filter(status__in=swapped).order_by("-updated_at").first()


def switch_start(model: str) -> ModelSwitch:
    """A queued switch to `model` (a key of ENGRAM_EMBEDDING_MODELS or a model folder); Conflict while another runs."""
    known = settings.ENGRAM_EMBEDDING_MODELS.get(model)
    if known is None and not Path(model).is_dir():
        raise InvalidInput(
            f"Unknown embedding model {model!r}: use one of {', '.join(sorted(settings.ENGRAM_EMBEDDING_MODELS))}, "
            "or a sentence-transformers model folder.", field="model")
    last, resumed = _last_swapped(), None
    if model == stored_model():
        if last is None or last.status == ModelSwitch.Status.DONE:
            raise Conflict(f"The stored vectors are already {model}'s: nothing to switch.", code="already_stored")
        resumed = last  # swapped in, but its index was not built: only that is left to do
    try:
        with transaction.atomic():
            if resumed:
                resumed.active, resumed.error = True, ""
                resumed.save(update_fields=["active", "error", "updated_at"])
                return resumed
            return ModelSwitch.objects.create(model=model, dimensions=known["dimensions"] if known else 0)
    except IntegrityError as exc:
        running = ModelSwitch.objects.get(active=True)
        raise Conflict(f"A switch to {running.model} is running (run {running.id}, {running.status}): wait for it.",
                       code="switch_running") from exc


def switch_run(run: ModelSwitch, *, progress: Progress | None = None) -> ModelSwitch:
    """Run (or go on with) the switch `run` to its end; the run records what failed, and the error is raised."""
    try:
        reader = model_reader(run.model)
        run.dimensions = reader.dimensions  # a model folder's is known only once it is loaded
        tables = vector_tables()
        if run.status in (ModelSwitch.Status.QUEUED, ModelSwitch.Status.STAGING):
            _mark(run, ModelSwitch.Status.STAGING, started_at=run.started_at or timezone.now(),
                  total=sum(_count(table) for table in tables))
            for table in tables:
                _create_stage(table, run.dimensions)
            run.done = sum(_staged(table) for table in tables)
            for table in tables:
                _stage(table, reader, run, progress)
            for table in tables:  # rows edited behind the first pass, so that the locked pass is short
                _stage(table, reader, run, progress, counting=False)
            _mark(run, ModelSwitch.Status.SWAPPING)
        if run.status == ModelSwitch.Status.SWAPPING:
            _swap(tables, reader, run, progress)
        if run.status == ModelSwitch.Status.INDEXING:
            for table in tables:
                _index(table)
            _mark(run, ModelSwitch.Status.DONE, finished_at=timezone.now(), active=None)
    except Exception as exc:
        logger.exception("The switch to %s failed", run.model)
        # Once swapped, the vectors are the new model's whatever failed after: the run stays "indexing" for the next.
        status = run.status if run.status == ModelSwitch.Status.INDEXING else ModelSwitch.Status.FAILED
        _mark(run, status, error=str(exc)[:2000], finished_at=timezone.now(), active=None)
        raise
    finally:
        if progress:
            progress(run)
    return run


def _mark(run: ModelSwitch, status: str, **fields) -> None:
    run.status = status
    for name, value in fields.items():
        setattr(run, name, value)
    run.save()


def _stage_table(table: VectorTable) -> str:
    return f"{table.table}__switch"


def _count(table: VectorTable) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table.table}")
        return cursor.fetchone()[0]


def _staged(table: VectorTable) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {_stage_table(table)}")
        return cursor.fetchone()[0]


def _create_stage(table: VectorTable, dimensions: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                       "WHERE attrelid = %s::regclass AND attname = %s", [table.table, table.key])
        [key_type] = cursor.fetchone()
        # A stage left by a switch to a model of another dimension is no use to this one.
        cursor.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'vector'",
                       [_stage_table(table)])
        found = cursor.fetchone()
        if found and found[0] != dimensions:
            cursor.execute(f"DROP TABLE {_stage_table(table)}")
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {_stage_table(table)} (key {key_type} PRIMARY KEY, "
                       f"vector halfvec({dimensions}) NOT NULL, tokens integer NOT NULL, digest text NOT NULL)")


def _stage(table: VectorTable, reader: ModelReader, run: ModelSwitch, progress: Progress | None, *,
           counting: bool = True) -> None:
    """Embed the rows not staged yet, or changed since (by their text's md5), in key order, a batch at a time."""
    after = None
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT t.{table.key}, {table.text_sql} FROM {table.table} t {table.join} "
                f"LEFT JOIN {_stage_table(table)} s ON s.key = t.{table.key} "
                f"WHERE (s.key IS NULL OR s.digest <> md5({table.text_sql})) "
                + ("" if after is None else f"AND t.{table.key} > %s ")
                + f"ORDER BY t.{table.key} LIMIT {BATCH}", [] if after is None else [after])
            rows = cursor.fetchall()
        if not rows:
            return
        vectors = embed_contents([text for _, text in rows], reader)
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {_stage_table(table)} (key, vector, tokens, digest) "
                "VALUES (%s, %s::halfvec, %s, md5(%s)) "
                "ON CONFLICT (key) DO UPDATE SET vector = excluded.vector, tokens = excluded.tokens, "
                "digest = excluded.digest",
                [(key, halfvec_text(vector.vector), vector.tokens, text)
                 for (key, text), vector in zip(rows, vectors)])
        after = rows[-1][0]
        if counting:
            run.done += len(rows)
            run.save(update_fields=["done", "updated_at"])
            if progress:
                progress(run)


def _swap(tables: list[VectorTable], reader: ModelReader, run: ModelSwitch, progress: Progress | None) -> None:
    with transaction.atomic():
        with connection.cursor() as cursor:
            for table in tables:  # writes wait from here to the commit; reads go on
                cursor.execute(f"LOCK TABLE {table.table} IN SHARE ROW EXCLUSIVE MODE")
        for table in tables:
            _stage(table, reader, run, progress, counting=False)  # what was stored or edited while staging
        with connection.cursor() as cursor:
            for table in tables:
                stage, column = _stage_table(table), table.column
                cursor.execute(f"ALTER TABLE {table.table} DROP COLUMN {column}")  # and its index with it
                cursor.execute(f"ALTER TABLE {table.table} ADD COLUMN {column} halfvec({run.dimensions})")
                tokens = f", {table.tokens} = s.tokens" if table.tokens else ""
                cursor.execute(f"UPDATE {table.table} t SET {column} = s.vector{tokens} FROM {stage} s "
                               f"WHERE s.key = t.{table.key}")
                cursor.execute(f"ALTER TABLE {table.table} ALTER COLUMN {column} SET NOT NULL")
                cursor.execute(f"DROP TABLE {stage}")
        _mark(run, ModelSwitch.Status.INDEXING, done=run.total)


def _index(table: VectorTable) -> None:
    if not table.index:
        return
    with connection.cursor() as cursor:
        # A concurrent build that stopped leaves an invalid index behind: drop it and build again.
        cursor.execute("SELECT NOT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [table.index])
        found = cursor.fetchone()
        if found and found[0]:
            cursor.execute(f"DROP INDEX CONCURRENTLY {table.index}")
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {table.index} ON {table.table} USING hnsw "
            f"({table.column} halfvec_cosine_ops) WITH (m = {table.index_m}, "
            f"ef_construction = {table.index_ef_construction})")

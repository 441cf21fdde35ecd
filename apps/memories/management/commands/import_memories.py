"""`manage.py import_memories FILE.jsonl --user NAME [--cube ID]`: the fast path from another memory store.

One JSON object a line, in the format export_memories writes (so export -> import round-trips):

    content (required), primarySector, sessionId, agentId, keywords, tags, category, context, importance,
    metadata, createdAt (ISO 8601), deletedAt (ISO 8601: the memory arrives soft-deleted)

snake_case spellings (primary_sector, session_id, ...) are accepted too. Lines are stored in batches (256 lines,
--batch-size): one model call embeds a whole batch (on every core unless --threads says otherwise), the next batch is
embedded while the one before it is written and linked, and a batch is written whole or not at all.
The progress bar counts memories written, with their rate and the time left. A bad line stops the import with its line number and field (the batches before it stay imported),
unless --skip-invalid is given, which leaves bad lines out and lists them. An import of ANALYZE_AFTER memories or
more ends with ANALYZE of the memory tables, so that the next reads are planned for the rows it wrote.
"""
from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.accounts.selectors import user_resolve
from apps.core.aliases import Aliases
from apps.core.exceptions import DomainError, InvalidInput
from apps.memories import embeddings
from apps.memories.services import (
    embed_memories, memory_delete, memory_prepare_many, memory_store_prepared, memory_tables_analyze,
)
from apps.memories.validation import clean_datetime

# memory_store_many's item fields -> the names of the export format; errors name the metadata fields as ThoughtMCP.
# An import of this many memories or more refreshes the planner's statistics of the memory tables at its end.
ANALYZE_AFTER = 1000
# Memories a model call and a transaction. 256 rather than 64: the model pads each batch to its longest text, and
# sorting 256 texts by length before batching them pads far less than sorting 64; a 5k import took 16% less CPU
# (docs/benchmarks.md, "Import batches").
BATCH_SIZE = 256
LINE_ALIASES = Aliases({
    "primary_sector": "primarySector", "session_id": "sessionId", "agent_id": "agentId", "created_at": "createdAt",
    "keywords": "metadata.keywords", "tags": "metadata.tags", "category": "metadata.category",
    "context": "metadata.context", "importance": "metadata.importance",
})
# A line's fields as export_memories writes them; memory_store_many's own names are accepted too.
FORMAT_NAMES = ("content", "primarySector", "sessionId", "agentId", "keywords", "tags", "category", "context",
                "importance", "metadata", "createdAt")
FIELDS = {*FORMAT_NAMES, *LINE_ALIASES.arguments(dict.fromkeys(FORMAT_NAMES))}
DELETED_AT = ("deletedAt", "deleted_at")


@dataclass
class Line:
    number: int
    item: dict
    deleted: bool


class BadLine(Exception):
    def __init__(self, number: int, message: str, field: str | None = None):
        where = f"line {number}" + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")


def parse_line(number: int, text: str) -> Line:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(number, f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
    if not isinstance(data, dict):
        raise BadLine(number, "each line must be one JSON object, e.g. {\"content\": \"...\"}.")
    unknown = [name for name in data if name not in FIELDS and name not in DELETED_AT]
    if unknown:
        raise BadLine(number, f"unknown field; known fields are {', '.join([*FORMAT_NAMES, 'deletedAt'])}.",
                     field=unknown[0])
    if "content" not in data:
        raise BadLine(number, "Missing required parameter: content.", field="content")
    item = LINE_ALIASES.arguments({name: value for name, value in data.items() if name in FIELDS})
    deleted = False
    try:
        if "created_at" in item:
            item["created_at"] = clean_datetime(item["created_at"], field_name="createdAt")
        for name in DELETED_AT:
            if name in data:
                deleted = clean_datetime(data[name], field_name=name) is not None
    except InvalidInput as exc:
        raise BadLine(number, exc.message, field=exc.field) from None
    return Line(number=number, item=item, deleted=deleted)


class Command(BaseCommand):
    help = "Import memories from a JSONL file (one JSON object a line), embedding them in batches."

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL file to read, or - for standard input")
        parser.add_argument("--user", required=True, help="username or id of the user who will own the memories")
        parser.add_argument("--cube", help="cube id to import into (one the user may write); default: personal cube")
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                            help=f"memories a model call and a transaction (default {BATCH_SIZE})")
        parser.add_argument("--no-links", action="store_true", help="store without making waypoint links")
        parser.add_argument("--skip-invalid", action="store_true", help="leave bad lines out and list them")
        parser.add_argument("--threads", type=int, help="threads torch may use with ENGRAM_EMBEDDING_BACKEND=torch (default: every core); ONNX Runtime, the default, uses ENGRAM_EMBEDDING_THREADS")

    def handle(self, *args, file: str, user: str, cube: str | None, batch_size: int, no_links: bool,
               skip_invalid: bool, threads: int | None, **options):
        actor = user_resolve(identifier=user)
        if actor is None:
            raise CommandError(f"No user {user!r}: give an existing username or id with --user.")
        if batch_size < 1:
            raise CommandError("--batch-size must be 1 or more.")
        if threads is not None and threads < 1:
            raise CommandError("--threads must be 1 or more.")
        stream = sys.stdin if file == "-" else self._open(file)
        total = None if file == "-" else sum(1 for line in self._open(file) if line.strip())
        self.actor, self.imported, self.skipped, self.link = actor, 0, [], not no_links
        self.pending: tuple | None = None
        embeddings.get_text_encoder()  # loaded (with ENGRAM_EMBEDDING_THREADS) before this command takes every core
        threads_before = self._set_torch_threads(threads or os.cpu_count() or 1)
        # The progress bar writes to the command's raw stderr: OutputWrapper would end each redraw with "\n".
        self.progress = tqdm(total=total, unit="memory", desc="import", file=self.stderr._out, dynamic_ncols=True)
        batch: list[Line] = []
        # The next batch is embedded in this thread while the one before it is written and linked.
        self.embedder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-embedding")
        try:
            for number, text in enumerate(stream, start=1):
                if not text.strip():
                    continue
                try:
                    batch.append(parse_line(number, text))
                except BadLine as exc:
                    self._bad_line(str(exc), skip_invalid)
                if len(batch) >= batch_size:
                    self._submit(actor, cube, batch, skip_invalid=skip_invalid)
                    batch = []
            if batch:
                self._submit(actor, cube, batch, skip_invalid=skip_invalid)
            self._write_pending()
            if self.imported >= ANALYZE_AFTER:
                memory_tables_analyze()
        finally:
            self.embedder.shutdown(cancel_futures=True)
            self._set_torch_threads(threads_before)
            self.progress.close()
            if stream is not sys.stdin:
                stream.close()
        for message in self.skipped:
            self.stderr.write(f"skipped {message}")
        summary = f"Imported {self.imported} memories"
        summary += f", skipped {len(self.skipped)} invalid lines." if self.skipped else "."
        self.stdout.write(self.style.SUCCESS(summary))

    @staticmethod
    def _set_torch_threads(threads: int) -> int:
        """torch's threads for this command, and the number before; ONNX Runtime keeps its session's."""
        if not embeddings.uses_torch():
            return threads
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        return before

    def _open(self, file: str):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"No file {file!r}: give the path of a JSONL file, or - for standard input.")
        return path.open(encoding="utf-8")

    def _bad_line(self, message: str, skip_invalid: bool) -> None:
        if not skip_invalid:
            self._write_pending()  # the batches before the bad line's stay imported
            raise CommandError(
                f"{message} Nothing of that line's batch was written; {self.imported} memories were imported "
                "before it. Fix the line and import the rest, or pass --skip-invalid to leave bad lines out."
            )
        self.skipped.append(message)
        self.progress.update(1)

    def _submit(self, actor, cube: str | None, batch: list[Line], *, skip_invalid: bool) -> None:
        """Validate a batch (leaving bad lines out with --skip-invalid), start embedding it, and write the one
        before it meanwhile."""
        while batch:
            try:
                prepared = memory_prepare_many(actor=actor, items=[line.item for line in batch], cube_id=cube)
            except InvalidInput as exc:
                index = exc.extra.get("index")
                if index is None:
                    raise CommandError(exc.message) from None
                bad = batch.pop(index)
                message = LINE_ALIASES.caller_message(exc.message.split(": ", 1)[-1], field=exc.field)
                self._bad_line(str(BadLine(bad.number, message, field=LINE_ALIASES.caller_name(exc.field))),
                               skip_invalid)
                continue
            except DomainError as exc:
                raise CommandError(f"{exc.message} ({self.imported} memories were imported before it.)") from None
            vectors = self.embedder.submit(embed_memories, prepared.memories)
            self._write_pending()
            self.pending = (batch, prepared, vectors)
            return

    def _write_pending(self) -> None:
        if self.pending is None:
            return
        lines, prepared, vectors = self.pending
        self.pending = None
        try:
            results = memory_store_prepared(prepared, vectors.result(), link=self.link)
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({self.imported} memories were imported before it.)") from None
        for line, result in zip(lines, results):
            if line.deleted:
                memory_delete(actor=self.actor, memory_id=result.memory.pk)
        self.imported += len(results)
        self.progress.update(len(results))

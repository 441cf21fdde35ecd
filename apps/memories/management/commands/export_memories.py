"""`manage.py export_memories --user NAME [--cube ID] [--include-deleted] [-o FILE]`: memories as JSONL.

Writes the format import_memories reads, one memory a line, oldest first, streamed from the database
in chunks so that any number of memories fits in little memory. Only what the user may read is
exported. Derived state (salience, strength, access counts, links) is not exported: an import derives
it again. A soft-deleted memory (with --include-deleted) carries deletedAt.
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.accounts.selectors import user_resolve
from apps.core.exceptions import DomainError
from apps.cubes.access import cube_get_readable
from apps.memories.models import Memory
from apps.memories.selectors import memories_readable

CHUNK_SIZE = 1000


def memory_line(memory: Memory) -> dict:
    line = {
        "content": memory.content, "primarySector": memory.primary_sector, "sessionId": memory.session_id,
        "agentId": memory.agent_id, "keywords": memory.keywords, "tags": memory.tags, "category": memory.category,
        "context": memory.context, "importance": memory.importance, "metadata": memory.metadata,
        "createdAt": memory.created_at.isoformat(),
    }
    if memory.deleted_at is not None:
        line["deletedAt"] = memory.deleted_at.isoformat()
    return line


class Command(BaseCommand):
    help = "Export the memories a user may read as JSONL (the format import_memories reads)."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="username or id of the user whose view is exported")
        parser.add_argument("--cube", help="export only this cube (one the user may read)")
        parser.add_argument("--include-deleted", action="store_true", help="also export soft-deleted memories")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, user: str, cube: str | None, include_deleted: bool, output: str | None, **options):
        actor = user_resolve(identifier=user)
        if actor is None:
            raise CommandError(f"No user {user!r}: give an existing username or id with --user.")
        memories = memories_readable(actor=actor, include_deleted=include_deleted)
        if cube:
            try:
                cube_get_readable(actor=actor, cube_id=cube)
            except DomainError as exc:
                raise CommandError(exc.message) from None
            memories = memories.filter(cube_id=cube)
        memories = memories.order_by("created_at", "pk")
        # The progress bar writes to the command's raw stderr: OutputWrapper would end each redraw with "\n".
        target = open(output, "w", encoding="utf-8") if output else self.stdout._out  # noqa: SIM115 (closed below)
        written = 0
        try:
            with tqdm(total=memories.count(), unit="memory", desc="export", file=self.stderr._out) as progress:
                for memory in memories.iterator(chunk_size=CHUNK_SIZE):
                    target.write(json.dumps(memory_line(memory), ensure_ascii=False) + "\n")
                    written += 1
                    progress.update(1)
        finally:
            if output:
                target.close()
        self.stderr.write(f"Exported {written} memories" + (f" to {output}." if output else "."))

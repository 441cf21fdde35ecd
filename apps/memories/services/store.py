"""Storing memories: validate, embed (outside any transaction), then write node, vector and links."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cubes.access import cube_get_writable
from apps.cubes.services import cube_ensure_personal
from apps.graph import events
from apps.memories import changes
from apps.memories.batching import GroupCommit
from apps.memories.changes import Action, Change
from apps.memories.models import SECTORS, Memory, MemoryLink, MemoryVector
from apps.memories.sectors import ContentVector, embed_contents
from apps.memories.services.linking import create_links_many
from apps.memories.text import extract_keywords, urgency_salience
from apps.memories.validation import (
    MAX_CONTEXT_CHARS, MAX_ID_CHARS, MAX_LABEL_CHARS, clean_content, clean_labels, clean_sector, clean_text, clean_unit,
)
from apps.core.exceptions import InvalidInput
from apps.core.validation import refuse_unstorable_text

# What one item of memory_store_many may carry: build_memory's keyword arguments but the actor and the cube.
ITEM_FIELDS = frozenset({"content", "primary_sector", "session_id", "agent_id", "keywords", "tags", "category",
                         "context", "importance", "metadata", "created_at", "kind"})


@dataclass(frozen=True)
class StoreResult:
    memory: Memory
    embeddings_generated: int
    links_created: int
    # The content's vector as stored, for callers that compare it further (Context Graph's surprise and reward).
    vector: ContentVector | None = None


def _clean_metadata(value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be an object.", field="metadata")
    # PostgreSQL's jsonb can hold neither \u0000 nor an unpaired surrogate: refused here, not in the INSERT.
    refuse_unstorable_text(value, "metadata")
    return value


def build_memory(*, actor: User, cube, content, primary_sector="semantic", session_id="", agent_id="",
                 keywords=None, tags=None, category=None, context=None, importance=None, metadata=None,
                 created_at=None, kind=Memory.Kind.MEMORY, content_limit: int | None = None) -> Memory:
    """An unsaved, validated Memory with its derived fields (keywords, salience). ``content_limit``: see
    clean_content."""
    content = clean_content(content, max_chars=content_limit)
    importance = clean_unit(importance, field_name="importance")
    keywords = clean_labels(keywords, field_name="keywords") or extract_keywords(content)
    # Salience: 0.5 plus 0.1 per urgency word, averaged with the stated importance when there is one.
    salience = urgency_salience(content)
    if importance is not None:
        salience = (salience + importance) / 2
    return Memory(
        cube=cube, owner=actor, kind=kind, content=content, primary_sector=clean_sector(primary_sector),
        session_id=clean_text(session_id, field_name="session_id", max_chars=MAX_ID_CHARS),
        agent_id=clean_text(agent_id, field_name="agent_id", max_chars=MAX_ID_CHARS),
        keywords=keywords, tags=clean_labels(tags, field_name="tags"),
        category=clean_text(category, field_name="category", max_chars=MAX_LABEL_CHARS),
        context=clean_text(context, field_name="context", max_chars=MAX_CONTEXT_CHARS),
        importance=0.5 if importance is None else importance, salience=round(salience, 4),
        metadata=_clean_metadata(metadata), created_at=created_at or timezone.now(),
    )


def embed_memories(memories: list[Memory]) -> list[ContentVector]:
    """Each memory's content vector, in one batched model call: its sector vectors derive from it
    (apps/memories/sectors.py)."""
    return embed_contents([memory.content for memory in memories])


def _resolve_cube(actor: User, cube_id: str | None):
    return cube_get_writable(actor=actor, cube_id=cube_id) if cube_id else cube_ensure_personal(actor=actor)


def _persist(memories: list[Memory], vectors: list[ContentVector], *, link: bool) -> list[int]:
    """Insert the memories and their vectors (one statement each) and link them, and report them as created
    (apps/memories/changes.py); how many links each got."""
    created = [memory.created_at for memory in memories]
    Memory.objects.bulk_create(memories)
    moved = [(memory.pk, when) for memory, when in zip(memories, created) if memory.created_at != when]
    if moved:  # auto_now_add overrides an imported timestamp
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {Memory._meta.db_table} m SET created_at = t.created_at "
                           "FROM unnest(%s::uuid[], %s::timestamptz[]) AS t(id, created_at) WHERE m.id = t.id",
                           [[pk for pk, _ in moved], [when for _, when in moved]])
        for memory, when in zip(memories, created):
            memory.created_at = when
    MemoryVector.objects.bulk_create([MemoryVector(memory=memory, embedding=vector.vector, tokens=vector.tokens)
                                      for memory, vector in zip(memories, vectors)])
    links = create_links_many(memories, vectors) if link else [[] for _ in memories]
    changes.report(Change(Action.CREATED, str(memory.pk), memory.owner_id, memory.owner_id,
                          {"agent_id": memory.agent_id, "links": changes.link_detail(made)})
                   for memory, made in zip(memories, links))
    return [len(made) for made in links]


def memory_store(*, actor: User, content, primary_sector="semantic", cube_id: str | None = None, session_id="",
                 agent_id="", keywords=None, tags=None, category=None, context=None, importance=None, metadata=None,
                 created_at=None, kind=Memory.Kind.MEMORY, content_limit: int | None = None) -> StoreResult:
    """``content_limit``: a caller's own bound on the content's characters (clean_content); content longer than
    the model's window is embedded whole, as the mean of its windows' vectors (sectors.embed_contents)."""
    cube = _resolve_cube(actor, cube_id)
    memory = build_memory(
        actor=actor, cube=cube, content=content, primary_sector=primary_sector, session_id=session_id,
        agent_id=agent_id, keywords=keywords, tags=tags, category=category, context=context, importance=importance,
        metadata=metadata, created_at=created_at, kind=kind, content_limit=content_limit,
    )
    [vector] = embed_memories([memory])
    if connection.in_atomic_block:  # the caller's transaction: the memory commits with it, so it is written here
        [links_created] = _write_stores([(memory, vector)])
    else:
        links_created = _concurrent_stores.submit((memory, vector), key=memory.cube_id)
    return StoreResult(memory=memory, embeddings_generated=len(SECTORS), links_created=links_created, vector=vector)


def _write_stores(items: list[tuple[Memory, ContentVector]]) -> list[int]:
    """Single stores written together in one transaction (of one cube when they come from
    _concurrent_stores): per cube, one insert of each kind, one linking statement and one graph event.
    How many links each memory got, in order."""
    by_cube: dict[str, list[int]] = {}
    for index, (memory, _) in enumerate(items):
        by_cube.setdefault(memory.cube_id, []).append(index)
    links = [0] * len(items)
    with transaction.atomic():
        for cube_id, indexes in by_cube.items():
            memories = [items[index][0] for index in indexes]
            counts = _persist(memories, [items[index][1] for index in indexes], link=True)
            for index, count in zip(indexes, counts):
                links[index] = count
            events.publish_after_commit(events.Kind.MEMORIES_CREATED, cube_id, events.memories_created(memories))
    return links


# Concurrent single stores (MCP and REST writers) into one cube share one transaction: the first to arrive
# writes for those waiting (apps/memories/batching.py), each answered once its memory has committed.
_concurrent_stores = GroupCommit(_write_stores)


@dataclass(frozen=True)
class PreparedBatch:
    """A validated batch, not yet embedded or written: what memory_prepare_many returns."""

    cube: object
    memories: list[Memory]


def memory_prepare_many(*, actor: User, items: list[dict], cube_id: str | None = None) -> PreparedBatch:
    """Validate a batch (each item as memory_store's arguments but ``cube_id``, which is the batch's) into
    unsaved memories; a bad item raises InvalidInput naming its index."""
    cube = _resolve_cube(actor, cube_id)
    memories = []
    for index, item in enumerate(items):
        try:
            unknown = sorted(set(item) - ITEM_FIELDS)
            if unknown:
                raise InvalidInput(f"Unknown field {unknown[0]}: an item has {', '.join(sorted(ITEM_FIELDS))}.",
                                   field=unknown[0])
            if "content" not in item:
                raise InvalidInput("Missing required parameter: content", field="content")
            memories.append(build_memory(actor=actor, cube=cube, **item))
        except InvalidInput as exc:
            raise InvalidInput(f"Item {index}: {exc.message}", field=exc.field, extra={"index": index}) from exc
    return PreparedBatch(cube=cube, memories=memories)


def memory_store_prepared(batch: PreparedBatch, vectors: list[ContentVector] | None = None, *,
                          link: bool = True) -> list[StoreResult]:
    """Write a prepared batch in one transaction, with `vectors` (embed_memories of its memories) when the
    caller embedded them already, e.g. while the previous batch was written."""
    vectors = embed_memories(batch.memories) if vectors is None else vectors
    with transaction.atomic():
        links = _persist(batch.memories, vectors, link=link) if batch.memories else []
        events.publish_after_commit(events.Kind.MEMORIES_CREATED, batch.cube.pk, events.memories_created(batch.memories))
    return [StoreResult(memory=memory, embeddings_generated=len(SECTORS), links_created=count)
            for memory, count in zip(batch.memories, links)]


def memory_tables_analyze() -> None:
    """Refresh PostgreSQL's statistics of the memory tables after a bulk write such as an import: until autovacuum's
    analyze comes round, the planner plans for the tables as they were (a graph snapshot read after a 10k-row fill
    planned for empty tables took over two minutes)."""
    tables = ", ".join(model._meta.db_table for model in (Memory, MemoryVector, MemoryLink))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def memory_store_many(*, actor: User, items: list[dict], cube_id: str | None = None, link: bool = True) -> list[StoreResult]:
    """Store a batch with one model call. Every item is validated before anything is written, so a bad
    item leaves the whole batch unwritten; each item may carry its own ``created_at``. An item's fields are
    memory_store's (but ``cube_id``, which is the batch's)."""
    return memory_store_prepared(memory_prepare_many(actor=actor, items=items, cube_id=cube_id), link=link)

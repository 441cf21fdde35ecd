"""Reads of memories. Every query starts from the cubes the actor may read."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import BooleanField, Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.access import AccessDecision, cube_access, cube_ids_readable, cubes_readable
from apps.memories.exclusions import retrieval_exclusions
from apps.memories.models import SEARCH_CONFIG, SECTORS, Memory, MemoryLink, MemoryVector
from apps.memories.query import parse_search
from apps.memories.sectors import embed_contents
from apps.memories.validation import MAX_QUERY_CHARS, MemoryFilters, clean_content
from apps.memories.vectors import nearest_in_scope


def memories_readable(*, actor: User, include_deleted: bool = False) -> QuerySet[Memory]:
    queryset = Memory.objects.filter(cube_id__in=cube_ids_readable(actor=actor))
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)


def memory_scope_cube_ids(*, actor: User, filters: MemoryFilters) -> list[str]:
    """The cubes a retrieval reads: the readable ones, or the one the filters name if it is readable, or
    the several they name (``cube_ids``), each of which must be readable: one that is not is "not found"."""
    readable = cube_ids_readable(actor=actor)
    if filters.cube_id:
        readable = readable.filter(id=filters.cube_id)
    if filters.cube_ids:
        found = set(readable.filter(id__in=filters.cube_ids).values_list("id", flat=True))
        missing = [cube_id for cube_id in filters.cube_ids if cube_id not in found]
        if missing:
            raise NotFound(f"Cube '{missing[0]}' not found.", extra={"field": "cube_ids"})
        return list(filters.cube_ids)
    return list(readable.values_list("id", flat=True))


def memory_filtered(*, actor: User, filters: MemoryFilters, cube_ids: list[str] | None = None) -> QuerySet[Memory]:
    """Readable memories narrowed by every filter except sectors (which choose the vectors compared).
    `cube_ids`: memory_scope_cube_ids(actor, filters), when the caller already has them.

    The readable cube ids go in as values, not as a subquery, so that the planner sees how many memories
    are in scope and never compares every vector exactly where the HNSW index answers
    (docs/benchmarks.md#retrieve-and-search-latency). What the apps above exclude from retrieval (a quarantined
    node, apps/memories/exclusions.py) is left out here, in the same statement."""
    if cube_ids is None:
        cube_ids = memory_scope_cube_ids(actor=actor, filters=filters)
    queryset = Memory.objects.filter(cube_id__in=cube_ids)
    for excluded in retrieval_exclusions():
        queryset = queryset.filter(~excluded)
    if not filters.include_deleted:
        queryset = queryset.filter(deleted_at__isnull=True)
    if filters.primary_sector:
        queryset = queryset.filter(primary_sector=filters.primary_sector)
    if filters.min_strength is not None:
        queryset = queryset.filter(strength__gte=filters.min_strength)
    if filters.min_salience is not None:
        queryset = queryset.filter(salience__gte=filters.min_salience)
    if filters.created_after:
        queryset = queryset.filter(created_at__gte=filters.created_after)
    if filters.created_before:
        queryset = queryset.filter(created_at__lte=filters.created_before)
    if filters.keywords:
        queryset = queryset.filter(keywords__overlap=filters.keywords)
    if filters.tags:
        queryset = queryset.filter(tags__contains=filters.tags)
    if filters.category:
        queryset = queryset.filter(category__iexact=filters.category)
    if filters.session_id:
        queryset = queryset.filter(session_id=filters.session_id)
    if filters.restrict is not None:
        queryset = queryset.filter(filters.restrict)
    return queryset


def parse_memory_id(memory_id) -> str:
    import uuid

    try:
        return str(uuid.UUID(str(memory_id)))
    except (TypeError, ValueError, AttributeError):
        raise NotFound("Memory not found", extra={"field": "memory_id"}) from None


def memory_ids_readable(*, actor: User, memory_ids, field: str = "memory_ids") -> list[str]:
    """``memory_ids`` (a list of ids), each of which must be a live memory the actor may read, as normalised
    strings in the caller's order: one that is not, or is no id, is "not found" under ``field``[index]."""
    if isinstance(memory_ids, str) or not isinstance(memory_ids, (list, tuple)):
        raise InvalidInput(f"{field} must be a list of memory ids.", field=field)
    parsed = []
    for index, memory_id in enumerate(memory_ids):
        try:
            parsed.append(parse_memory_id(memory_id))
        except NotFound:
            raise InvalidInput(f"{field}[{index}] is not a memory id (a UUID): {memory_id!r}.",
                               field=f"{field}[{index}]") from None
    found = {str(pk) for pk in memories_readable(actor=actor).filter(pk__in=parsed).values_list("pk", flat=True)}
    for index, memory_id in enumerate(parsed):
        if memory_id not in found:
            raise NotFound(f"Memory {memory_id} not found: {field}[{index}] must be one of your live memories "
                           "(or one shared with you).", extra={"field": f"{field}[{index}]"})
    return parsed


def memory_get(*, actor: User, memory_id, include_deleted: bool = True) -> Memory:
    """A memory the actor may read. Another user's memory is simply not found: nothing leaks."""
    memory = (
        memories_readable(actor=actor, include_deleted=include_deleted)
        .select_related("cube", "owner").filter(pk=parse_memory_id(memory_id)).first()
    )
    if memory is None:
        raise NotFound("Memory not found", extra={"field": "memory_id"})
    return memory


def memory_get_in_cube(*, actor: User, memory_id, cube_id: str) -> Memory:
    """A live memory the actor may read, in the cube the caller names: one in another cube is not found there."""
    memory = memory_get(actor=actor, memory_id=memory_id, include_deleted=False)
    if memory.cube_id != cube_id:
        raise NotFound(f"Memory '{memory_id}' not found in cube '{cube_id}'.", extra={
            "field": "memory_id", "suggestion": "Check memory_id and cube_id: the memory must be in that cube "
                                                "(search_memories gives each memory with its cube_id)."})
    return memory


def memory_access(*, actor: User, memory_id, action: str) -> AccessDecision:
    """A memory's access is its cube's; a memory the actor cannot read is "memory not found" (no leak)."""
    try:
        memory = memory_get(actor=actor, memory_id=memory_id)
    except NotFound:
        return AccessDecision(False, "memory not found")
    return cube_access(actor=actor, cube_id=memory.cube_id, action=action, resource="memory")


def memory_list(*, actor: User, cube_id: str | None = None, include_deleted: bool = False,
                only_deleted: bool = False, primary_sector: str | None = None) -> QuerySet[Memory]:
    queryset = memories_readable(actor=actor, include_deleted=include_deleted or only_deleted)
    if only_deleted:
        queryset = queryset.filter(deleted_at__isnull=False)
    if cube_id:
        queryset = queryset.filter(cube_id=cube_id)
    if primary_sector:
        queryset = queryset.filter(primary_sector=primary_sector)
    return queryset.select_related("cube").annotate(link_count=Count("outgoing_links", distinct=True)
                                                     + Count("incoming_links", distinct=True)).order_by("-created_at")


# The orders the memories list offers: (label, ORDER BY), each ending on the id so that pages never overlap.
BROWSE_SORTS = {
    "newest": ("Newest first", ("-created_at", "-id")),
    "oldest": ("Oldest first", ("created_at", "id")),
    "importance": ("Most important", ("-importance", "-created_at", "-id")),
    "strength": ("Strongest", ("-strength", "-created_at", "-id")),
    "accessed": ("Last accessed", (F("last_accessed_at").desc(nulls_last=True), "-created_at", "-id")),
}
# How many of the most used tags the list offers as filters, with their counts.
BROWSE_TOP_TAGS = 30


@dataclass(frozen=True)
class MemoryBrowse:
    """What the memories list shows: its filters and order (every one optional)."""

    text: str = ""
    cube_id: str | None = None
    primary_sector: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    deleted: bool = False
    sort: str = "newest"

    def __post_init__(self):
        if "\x00" in self.text:
            raise InvalidInput("text cannot contain NUL bytes.", field="text")
        if len(self.text) > MAX_QUERY_CHARS:
            raise InvalidInput(f"text has at most {MAX_QUERY_CHARS} characters.", field="text")
        if self.sort not in BROWSE_SORTS:
            raise InvalidInput(f"sort must be one of {', '.join(BROWSE_SORTS)}.", field="sort")
        if self.primary_sector and self.primary_sector not in SECTORS:
            raise InvalidInput(f"Invalid sector {self.primary_sector!r}: use one of {', '.join(SECTORS)}.",
                               field="primary_sector")
        if self.kind and self.kind not in Memory.Kind.values:
            raise InvalidInput(f"kind must be one of {', '.join(Memory.Kind.values)}.", field="kind")


def _browsed(actor: User, browse: MemoryBrowse, *, ignore: str = "") -> QuerySet[Memory]:
    """The memories ``browse`` selects, but for its filter named ``ignore`` (a facet counts its values over the
    others). Text is matched by full-text search on the generated tsvector (its GIN index, the search page's
    syntax: words all, "phrases", OR, NOT), so it stays fast at any size; text with no word in it (symbols,
    "C++") is matched as a substring of the content instead."""
    queryset = memories_readable(actor=actor, include_deleted=browse.deleted)
    if browse.deleted:
        queryset = queryset.filter(deleted_at__isnull=False)
    if browse.text:
        parsed = parse_search(browse.text)
        queryset = (queryset.filter(search_vector=SearchQuery(parsed.tsquery, search_type="raw", config=SEARCH_CONFIG))
                    if parsed.tsquery else queryset.filter(content__icontains=browse.text))
    filters = {"cube_id": browse.cube_id, "primary_sector": browse.primary_sector, "kind": browse.kind,
               "tags__contains": list(browse.tags), "created_at__gte": browse.created_after,
               "created_at__lte": browse.created_before}
    return queryset.filter(**{name: value for name, value in filters.items()
                              if value and name.partition("__")[0] != ignore})


def memory_browse(*, actor: User, browse: MemoryBrowse) -> QuerySet[Memory]:
    """The memories list: readable memories (live, or the deleted ones) filtered and ordered as ``browse`` says,
    each with its cube and its number of links. The link counts are subqueries, so a page counts only its own."""
    def links(field: str) -> Subquery:
        return Subquery(MemoryLink.objects.filter(**{field: OuterRef("pk")}).order_by().values(field)
                        .annotate(n=Count("pk")).values("n"), output_field=IntegerField())

    return (_browsed(actor, browse).select_related("cube").defer("search_vector")
            .annotate(link_count=Coalesce(links("source"), Value(0)) + Coalesce(links("target"), Value(0)))
            .order_by(*BROWSE_SORTS[browse.sort][1]))


@dataclass(frozen=True)
class BrowseCounts:
    """How many memories each filter value would show, the other filters applied."""

    sectors: dict[str, int]
    kinds: dict[str, int]
    cubes: dict[str, int]
    tags: list[tuple[str, int]]  # the BROWSE_TOP_TAGS most used, most used first


def memory_browse_counts(*, actor: User, browse: MemoryBrowse) -> BrowseCounts:
    """The counts beside the list's filters: one grouped query per facet (sector, kind, cube, tag)."""
    def grouped(field: str) -> dict[str, int]:
        return dict(_browsed(actor, browse, ignore=field).order_by().values(field).annotate(n=Count("pk"))
                    .values_list(field, "n"))

    tagged, params = _browsed(actor, browse, ignore="tags").order_by().values("tags").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT tag, count(*) AS n FROM (SELECT unnest(tags) AS tag FROM ({tagged}) AS m) AS t "
                       "GROUP BY tag ORDER BY n DESC, tag LIMIT %s", [*params, BROWSE_TOP_TAGS])
        tags = [(tag, n) for tag, n in cursor.fetchall()]
    return BrowseCounts(sectors=grouped("primary_sector"), kinds=grouped("kind"), cubes=grouped("cube_id"), tags=tags)


def memory_links(*, actor: User, memory_id, direction: str = "both") -> QuerySet[MemoryLink]:
    """The links of a readable memory whose other end the actor may read too."""
    if direction not in {"both", "outgoing", "incoming"}:
        raise InvalidInput("direction must be both, outgoing or incoming.", field="direction")
    memory = memory_get(actor=actor, memory_id=memory_id)
    readable = memories_readable(actor=actor).values("pk")
    outgoing = Q(source=memory, target_id__in=readable)
    incoming = Q(target=memory, source_id__in=readable)
    condition = {"both": outgoing | incoming, "outgoing": outgoing, "incoming": incoming}[direction]
    return MemoryLink.objects.filter(condition).select_related("source", "target").order_by("-weight")


def memory_count_owned(*, actor: User) -> int:
    """The live memories the actor owns (in any cube but a hidden one), for account summaries."""
    return Memory.objects.filter(owner=actor, deleted_at__isnull=True, cube__hidden=False).count()


def memory_counts(*, actor: User) -> dict:
    counts = memories_readable(actor=actor, include_deleted=True).aggregate(
        total=Count("pk", filter=Q(deleted_at__isnull=True)),
        deleted=Count("pk", filter=Q(deleted_at__isnull=False)),
    )
    counts["links"] = MemoryLink.objects.filter(source__cube_id__in=cube_ids_readable(actor=actor)).count()
    return counts


def memory_neighbours(*, actor: User, memory_id, limit: int = 5) -> list[tuple[Memory, float]]:
    """The readable live memories nearest in meaning (content vectors, cosine), with their similarity:
    what the graph could link next, shown beside the links it has."""
    memory = memory_get(actor=actor, memory_id=memory_id)
    vector = MemoryVector.objects.filter(memory=memory).values_list("embedding", flat=True).first()
    if vector is None:
        return []
    nearest = nearest_in_scope(memories_readable(actor=actor).exclude(pk=memory.pk), vector, limit=limit)
    memories = Memory.objects.in_bulk([memory_id for memory_id, _ in nearest])
    return [(memories[memory_id], round(1.0 - distance, 4)) for memory_id, distance in nearest]


# New content this similar to a live memory of the cube it goes into (cosine of content vectors) nearly repeats it.
NEAR_DUPLICATE_COSINE = 0.97
DUPLICATES_SHOWN = 5
# Text as duplicates compare it: whitespace runs as one space, ends trimmed, lower case (PostgreSQL's own lower, so
# both sides fold the same way).
_NORMALISED = "lower(btrim(regexp_replace({}, '\\s+', ' ', 'g')))"


@dataclass(frozen=True)
class Duplicate:
    memory: Memory
    similarity: float  # cosine of the content vectors (1.0 for the same text)
    exact: bool  # the same text but for case and whitespace


def memory_duplicates(*, actor: User, content, cube_id: str | None = None) -> list[Duplicate]:
    """The live memories of the cube ``content`` would be stored in (``cube_id``; None: the actor's personal cube)
    that it repeats: the same text but for case and whitespace, or a content vector at cosine >= 0.97. Exact ones
    first, then the most similar; at most DUPLICATES_SHOWN. A cube the actor cannot read has none.

    The exact match reads the full-text index first (a duplicate holds every word of the content), then compares
    the normalised texts of what it finds; text with no indexable word is compared with every memory of the cube."""
    content = clean_content(content)
    cubes = cubes_readable(actor=actor)
    cubes = cubes.filter(id=cube_id) if cube_id else cubes.filter(owner=actor, is_personal=True)
    scope = Memory.objects.filter(cube_id__in=cubes.values("id"), deleted_at__isnull=True)
    same_text = RawSQL(
        "(numnode(plainto_tsquery(%s::regconfig, %s)) = 0 OR search_vector @@ plainto_tsquery(%s::regconfig, %s)) "
        f"AND {_NORMALISED.format('content')} = {_NORMALISED.format('%s')}",
        (SEARCH_CONFIG, content, SEARCH_CONFIG, content, content), output_field=BooleanField())
    exact = {str(pk) for pk in scope.filter(same_text).values_list("pk", flat=True)[:DUPLICATES_SHOWN]}
    [vector] = embed_contents([content])
    similar = {str(memory_id): round(1.0 - distance, 4)
               for memory_id, distance in nearest_in_scope(scope, vector.vector, limit=DUPLICATES_SHOWN)
               if 1.0 - distance >= NEAR_DUPLICATE_COSINE}
    found = (list(exact) + [memory_id for memory_id in similar if memory_id not in exact])[:DUPLICATES_SHOWN]
    memories = {str(memory.pk): memory
                for memory in Memory.objects.select_related("cube").defer("search_vector").filter(pk__in=found)}
    return [Duplicate(memory=memories[memory_id], similarity=1.0 if memory_id in exact else similar[memory_id],
                      exact=memory_id in exact) for memory_id in found]

"""Waypoint links: each new memory joins the graph through its 1-3 best neighbours.

Weight (ThoughtMCP's formula, REFERENCE.md):
    0.6 x mean cosine over the five sector vectors
  + 0.25 x metadata overlap (0.4 keyword Jaccard + 0.4 tag Jaccard + 0.2 same category)
  + 0.1 x temporal closeness (same session: 1.0 under 5 min, 0.5 under 30 min, else 0.1; else 0)
  + 0.05 x mean salience.
A pair links when its weight reaches LINK_THRESHOLD, at most MAX_LINKS per new memory. ThoughtMCP's
threshold alone almost never fires for memories of different sessions without shared metadata
(0.6 x cosine must exceed ~0.67), so a memory with no such neighbour still joins the graph through its
single best neighbour when that one reaches WAYPOINT_FLOOR: the graph stays connected without
linking unrelated things.

A link is causal only when the new memory claims a cause and an effect (text.causal_claims: "E because C", "C
leads to E", ...) and one side of the claim names the neighbour (cosine >= CLAIM_NODE_COSINE between the side's
and the neighbour's vectors; the other side is the new memory, whose text holds the claim). The link then points
from cause to effect: neighbour -> new memory when the neighbour is the cause. Its origin is "parse".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from django.db import connection

from apps.core.halfvec import halfvec_text
from apps.memories.embeddings import embed_for_ranking
from apps.memories.models import SECTORS, Memory, MemoryLink, MemoryVector
from apps.memories.sectors import ContentVector, mean_pair_cosine, sector_offsets
from apps.memories.text import causal_claims
from apps.memories.vectors import EXACT_SCOPE_MEMORIES, filtered_vector_scan

LINK_THRESHOLD = 0.7
WAYPOINT_FLOOR = 0.5
# An edited memory keeps a former neighbour's link while their recomputed weight is at least this (about cosine 0.55
# with nothing else in common): a link needs more to be made than to stay, so an edit that adds a topic does not
# cut the memory from what it still relates to.
KEEP_FLOOR = 0.35
MAX_LINKS = 3
CANDIDATES = 12
# A side of a causal claim names a neighbour when their vectors' cosine reaches this (issue 20).
CLAIM_NODE_COSINE = 0.6
# What link_weight and link_type_for read of a neighbour.
NEIGHBOUR_FIELDS = ("content", "keywords", "tags", "category", "session_id", "created_at", "salience")


@dataclass(frozen=True)
class LinkCandidate:
    target_id: str
    weight: float
    link_type: str
    # The neighbour is the cause of what the new memory claims: the link runs neighbour -> new memory.
    incoming: bool = False

    @property
    def origin(self) -> str:
        return MemoryLink.Origin.PARSE if self.link_type == MemoryLink.LinkType.CAUSAL else MemoryLink.Origin.STORE

    def link(self, memory_id) -> MemoryLink:
        ends = (self.target_id, memory_id) if self.incoming else (memory_id, self.target_id)
        return MemoryLink(source_id=ends[0], target_id=ends[1], weight=self.weight, link_type=self.link_type,
                          origin=self.origin)


def _jaccard(a, b) -> float:
    a, b = {x.lower() for x in a}, {x.lower() for x in b}
    return len(a & b) / len(a | b) if a or b else 0.0


def metadata_overlap(a: Memory, b: Memory) -> float:
    same_category = 1.0 if a.category and a.category.lower() == (b.category or "").lower() else 0.0
    return 0.4 * _jaccard(a.keywords, b.keywords) + 0.4 * _jaccard(a.tags, b.tags) + 0.2 * same_category


def temporal_closeness(a: Memory, b: Memory) -> float:
    if not a.session_id or a.session_id != b.session_id:
        return 0.0
    minutes = abs((a.created_at - b.created_at).total_seconds()) / 60
    return 1.0 if minutes < 5 else 0.5 if minutes < 30 else 0.1


def link_weight(*, sector_cosine: float, a: Memory, b: Memory) -> float:
    return (
        0.6 * sector_cosine + 0.25 * metadata_overlap(a, b) + 0.1 * temporal_closeness(a, b)
        + 0.05 * (a.salience + b.salience) / 2
    )


def link_type_for(a: Memory, b: Memory) -> str:
    """The type of a link that no causal claim of `a` explains."""
    if temporal_closeness(a, b) >= 0.5:
        return MemoryLink.LinkType.TEMPORAL
    if a.category and b.category and a.category.lower() != b.category.lower():
        return MemoryLink.LinkType.ANALOGICAL
    return MemoryLink.LinkType.SEMANTIC


def claim_direction(sides: list[tuple[np.ndarray, np.ndarray]], neighbour: np.ndarray) -> tuple[bool, float] | None:
    """Whether a neighbour is the cause (True) or the effect (False) of the best-matching of a memory's claims (each
    as its cause's and effect's unit vectors), with that side's cosine; None when no side reaches CLAIM_NODE_COSINE."""
    best = None
    for cause, effect in sides:
        for cosine, is_cause in ((float(cause @ neighbour), True), (float(effect @ neighbour), False)):
            if cosine >= CLAIM_NODE_COSINE and (best is None or cosine > best[1]):
                best = (is_cause, cosine)
    return best


def choose_links(memory: Memory, content: ContentVector) -> list[LinkCandidate]:
    """The links a memory with this content vector should get, best first (reads only)."""
    return choose_links_many([memory], [content])[0]


def choose_links_many(memories: list[Memory], contents: list[ContentVector],
                      keep: list[set[str]] | None = None) -> list[list[LinkCandidate]]:
    """choose_links for a batch of stored memories of one cube, in two statements whatever its size. As when
    they are stored one by one, a memory may link to the batch's earlier memories, never to its later ones.
    ``keep``: per memory, former neighbours (an edited memory's) that keep a link while they are still among its
    nearest and reach KEEP_FLOOR, beyond MAX_LINKS: an edit refines a memory, it does not sever what still relates."""
    if not memories:
        return []
    if len({memory.cube_id for memory in memories}) != 1:
        raise ValueError("choose_links_many links the memories of one cube at a time.")
    offsets = sector_offsets()
    rows = _nearest_with_shifts(memories, contents, offsets)
    neighbours = Memory.objects.only(*NEIGHBOUR_FIELDS).in_bulk({row[1] for row in rows})
    by_memory: dict[int, list[tuple]] = {}
    for row in rows:
        if row[1] in neighbours:
            by_memory.setdefault(row[0], []).append(row)
    shift_norms = (offsets.matrix.astype(np.float64) ** 2).sum(axis=1)
    candidates = []
    for index, (memory, content) in enumerate(zip(memories, contents)):
        found = by_memory.get(index, [])
        if not found:
            candidates.append([])
            continue
        own_shift = offsets.matrix.astype(np.float64) @ np.asarray(content.vector, dtype=np.float64)
        cosines = mean_pair_cosine(
            dot=np.array([row[2] for row in found]), own_shift=own_shift, own_tokens=content.tokens,
            their_shift=np.array([row[4] for row in found], dtype=np.float64),
            their_tokens=np.array([row[3] for row in found]), shift_norms=shift_norms,
        )
        scored = []
        for row, sector_cosine in zip(found, cosines):
            neighbour = neighbours[row[1]]
            weight = round(min(1.0, link_weight(sector_cosine=float(sector_cosine), a=memory, b=neighbour)), 4)
            scored.append(LinkCandidate(str(neighbour.pk), weight, link_type_for(memory, neighbour)))
        scored.sort(key=lambda c: c.weight, reverse=True)
        candidates.append(scored)
    keep = keep or [set() for _ in memories]
    return [_chosen(scored, kept) for scored, kept in zip(_with_claims(memories, candidates), keep)]


def _chosen(scored: list[LinkCandidate], keep: set[str] = frozenset()) -> list[LinkCandidate]:
    """A claim's causal links first, then the strongest over LINK_THRESHOLD, MAX_LINKS in all; failing both, the
    best neighbour over WAYPOINT_FLOOR; and the neighbours to ``keep`` that still reach KEEP_FLOOR."""
    causal = [c for c in scored if c.link_type == MemoryLink.LinkType.CAUSAL][:MAX_LINKS]
    links = causal + [c for c in scored if c.weight >= LINK_THRESHOLD and c not in causal][:MAX_LINKS - len(causal)]
    if not links and scored and scored[0].weight >= WAYPOINT_FLOOR:
        links = scored[:1]
    kept = {c.target_id for c in links}
    return links + [c for c in scored if c.target_id in keep and c.weight >= KEEP_FLOOR and c.target_id not in kept]


def _with_claims(memories: list[Memory], candidates: list[list[LinkCandidate]]) -> list[list[LinkCandidate]]:
    """Each memory's candidate neighbours, those a claim of the memory names made causal, cause to effect, weighing
    the larger of the link formula's weight and the cosine that names them. Only a batch whose memories claim
    something pays: one model call for the claims' sides (the query model: these vectors rank, they are never
    stored) and one read of the candidates' vectors."""
    claims = {index: found for index, memory in enumerate(memories)
              if candidates[index] and (found := causal_claims(memory.content))}
    if not claims:
        return candidates
    texts = [side for found in claims.values() for claim in found for side in (claim.cause, claim.effect)]
    vectors = iter(np.asarray(embed_for_ranking(texts), dtype=np.float64))
    sides = {index: [(next(vectors), next(vectors)) for _ in found] for index, found in claims.items()}
    wanted = {candidate.target_id for index in claims for candidate in candidates[index]}
    neighbour_vectors = {str(memory_id): _unit(embedding) for memory_id, embedding in
                         MemoryVector.objects.filter(memory_id__in=wanted).values_list("memory_id", "embedding")}
    for index in claims:
        named = []
        for candidate in candidates[index]:
            vector = neighbour_vectors.get(candidate.target_id)
            found = None if vector is None else claim_direction(sides[index], vector)
            named.append(candidate if found is None else LinkCandidate(
                candidate.target_id, round(max(candidate.weight, found[1]), 4), MemoryLink.LinkType.CAUSAL, found[0]))
        candidates[index] = sorted(named, key=lambda c: c.weight, reverse=True)
    return candidates


def _unit(embedding) -> np.ndarray:
    vector = np.asarray(embedding.to_list() if hasattr(embedding, "to_list") else embedding, dtype=np.float64)
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def _nearest_with_shifts(memories: list[Memory], contents: list[ContentVector], offsets) -> list[tuple]:
    """(batch index, neighbour id, a.b, neighbour's tokens, neighbour's b.A per sector) for each memory's
    CANDIDATES nearest live memories of its cube (content vectors, cosine), in one statement: compared exactly
    when the cube holds at most EXACT_SCOPE_MEMORIES, else through HNSW with an iterative scan."""
    cube_id = memories[0].cube_id
    scope = Memory.objects.filter(cube_id=cube_id, deleted_at__isnull=True)
    # Counted, not fetched: sending the cube's ids back as an array cost more than the comparison itself.
    exact = scope[:EXACT_SCOPE_MEMORIES + 1].count() <= EXACT_SCOPE_MEMORIES
    shifts = ", ".join("-(c.embedding <#> %s::halfvec)" for _ in SECTORS)
    shift_params = list(offsets.texts)
    where = f"v.memory_id IN (SELECT id FROM {Memory._meta.db_table} WHERE cube_id = %s AND deleted_at IS NULL)"
    where_params = [cube_id]
    # The batch's own id and its later ones (n.later) are left out. The slice is made once per memory: without the
    # OFFSET 0 under n the planner folds it into the comparison, which then made it once per compared row (2.5x
    # the time of an exact comparison of 256 memories). OFFSET 0 also keeps an exact comparison off the index.
    nearest = (f"SELECT v.memory_id, v.embedding, v.tokens, v.embedding <=> n.q AS distance "
               f"FROM {MemoryVector._meta.db_table} v WHERE {where} AND v.memory_id <> ALL(n.later)")
    if exact:
        nearest = f"SELECT * FROM ({nearest} OFFSET 0) AS compared"
    # The neighbours' tokens and vectors come out of the lateral itself: joining the vectors again outside it let a
    # planner that believed the tables empty (statistics taken while they were) run the whole lateral once per row
    # of that join, which took minutes for a batch of 200.
    sql = (f"SELECT n.ord - 1, c.memory_id, 1 - c.distance, c.tokens, ARRAY[{shifts}] "
           f"FROM (SELECT u.q, u.ord, (%s::uuid[])[u.ord::int:] AS later "
           f"FROM unnest(%s::halfvec[]) WITH ORDINALITY AS u(q, ord) OFFSET 0) AS n "
           f"CROSS JOIN LATERAL ({nearest} ORDER BY distance LIMIT %s) AS c")
    params = [*shift_params, [memory.pk for memory in memories],
              [halfvec_text(content.vector) for content in contents], *where_params, CANDIDATES]
    if exact:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    with filtered_vector_scan(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def create_links(memory: Memory, content: ContentVector, *, keep: set[str] = frozenset()) -> list[LinkCandidate]:
    """Link a memory to its chosen neighbours (call inside the caller's transaction); the links it got.
    ``keep``: see choose_links_many."""
    [links] = create_links_many([memory], [content], keep=[set(keep)])
    return links


def create_links_many(memories: list[Memory], contents: list[ContentVector],
                      keep: list[set[str]] | None = None) -> list[list[LinkCandidate]]:
    """create_links for a batch of one cube in one insert; the links each memory got."""
    chosen = choose_links_many(memories, contents, keep)
    MemoryLink.objects.bulk_create([candidate.link(memory.pk) for memory, candidates in zip(memories, chosen)
                                    for candidate in candidates], ignore_conflicts=True)
    return chosen

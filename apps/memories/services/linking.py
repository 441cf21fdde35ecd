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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apps.memories.models import Memory, MemoryLink
from apps.memories.sectors import ContentVector, sector_offsets
from apps.memories.text import has_causal_cue
from apps.memories.vectors import nearest_in_scope

LINK_THRESHOLD = 0.7
WAYPOINT_FLOOR = 0.5
MAX_LINKS = 3
CANDIDATES = 12


@dataclass(frozen=True)
class LinkCandidate:
    target_id: str
    weight: float
    link_type: str


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
    if has_causal_cue(a.content):
        return MemoryLink.LinkType.CAUSAL
    if temporal_closeness(a, b) >= 0.5:
        return MemoryLink.LinkType.TEMPORAL
    if a.category and b.category and a.category.lower() != b.category.lower():
        return MemoryLink.LinkType.ANALOGICAL
    return MemoryLink.LinkType.SEMANTIC


def choose_links(memory: Memory, content: ContentVector) -> list[LinkCandidate]:
    """The links a memory with this content vector should get, best first (reads only)."""
    scope = Memory.objects.filter(cube_id=memory.cube_id, deleted_at__isnull=True).exclude(pk=memory.pk)
    nearest = [memory_id for memory_id, _ in nearest_in_scope(scope, content.vector, limit=CANDIDATES)]
    if not nearest:
        return []
    neighbours = {m.pk: m for m in Memory.objects.filter(pk__in=nearest, vector__isnull=False).select_related("vector")}
    offsets = sector_offsets()
    own = np.array(list(offsets.sector_vectors(content.vector, content.tokens).values()))
    scored = []
    for memory_id, neighbour in neighbours.items():
        theirs = neighbour.vector
        other = np.array(list(offsets.sector_vectors(theirs.embedding, theirs.tokens).values()))
        sector_cosine = float(np.mean(np.sum(own * other, axis=1)))  # sector vectors are unit length
        weight = round(min(1.0, link_weight(sector_cosine=sector_cosine, a=memory, b=neighbour)), 4)
        scored.append(LinkCandidate(str(memory_id), weight, link_type_for(memory, neighbour)))
    scored.sort(key=lambda c: c.weight, reverse=True)
    chosen = [c for c in scored if c.weight >= LINK_THRESHOLD][:MAX_LINKS]
    if not chosen and scored and scored[0].weight >= WAYPOINT_FLOOR:
        chosen = scored[:1]
    return chosen


def create_links(memory: Memory, content: ContentVector) -> list[MemoryLink]:
    """Link a memory to its chosen neighbours (call inside the caller's transaction)."""
    links = [
        MemoryLink(source_id=memory.pk, target_id=c.target_id, weight=c.weight, link_type=c.link_type)
        for c in choose_links(memory, content)
    ]
    return MemoryLink.objects.bulk_create(links, ignore_conflicts=True)

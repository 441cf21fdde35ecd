"""entailment_query: what a node entails and what entails it, over directed hierarchical links (source IS-A, or is a
member of, target: a member -> its summary, a kind -> its genus). Its ancestors are the nodes reached along those
links, its descendants the nodes reached against them, each within ``max_depth`` links (selectors/walks.py: one
statement per level, bounded, only live nodes the actor may read).

A node's confidence is the best product of link weights along a path to it (Dijkstra on -log weight); the answer's
``entailment_confidence`` is the mean of those over the nodes returned, and 0 when there are none. No hyperbolic
embedding is computed: the cone is the links' closure, and ``method`` says so."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from apps.accounts.models import User
from apps.cognition.limits import ENTAILMENT_DEPTH
from apps.cognition.selectors.walks import (
    Arc, NodeText, Path, Rule, ball, best_paths, node_texts, readable_cube_ids,
)
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import Memory, MemoryLink

DIRECTIONS = ("ancestors", "descendants", "both")
HIERARCHICAL = (MemoryLink.LinkType.HIERARCHICAL.value,)
METHOD = ("Closure over directed hierarchical links (source IS-A, or is a member of, target) up to max_depth links: "
          "ancestors along the links, descendants against them. Each node's confidence is the best product of link "
          "weights along a path to it; entailment_confidence is the mean of those over the nodes returned (0 when "
          "there are none). No hyperbolic embedding is computed.")


@dataclass(frozen=True)
class Entailed:
    node_id: str
    relation: str  # "ancestor" or "descendant"
    path: Path  # from the queried node, along (ancestor) or against (descendant) the links

    @property
    def confidence(self) -> float:
        return self.path.strength


@dataclass(frozen=True)
class Entailment:
    node_id: str
    direction: str
    max_depth: int
    ancestors: list[Entailed]
    descendants: list[Entailed]
    names: dict[str, NodeText]
    truncated: bool
    nodes_visited: int
    method: str = METHOD

    @property
    def confidence(self) -> float:
        found = [*self.ancestors, *self.descendants]
        return sum(entry.confidence for entry in found) / len(found) if found else 0.0

    @property
    def edges(self) -> list[Arc]:
        arcs = {step.arc: None for entry in [*self.ancestors, *self.descendants] for step in entry.path.steps}
        return list(arcs)


def node_entailment(*, actor: User, node_id, direction=None, max_depth=None) -> Entailment:
    """The node's ancestors and descendants over hierarchical links, best first (highest confidence, then fewest
    links). ``node_id`` must be a live node the actor may read."""
    direction = "both" if direction is None else direction
    if direction not in DIRECTIONS:
        raise InvalidInput(f"direction must be one of {', '.join(DIRECTIONS)}.", field="direction")
    depth = ENTAILMENT_DEPTH.clean(max_depth, field="max_depth")
    readable = readable_cube_ids(actor=actor)
    apex = _readable_node(node_id, readable)
    found: dict[str, list[Entailed]] = {"ancestors": [], "descendants": []}
    truncated, visited = False, {apex}
    for relation, rule in (("ancestors", Rule(forward=HIERARCHICAL)), ("descendants", Rule(backward=HIERARCHICAL))):
        if direction not in (relation, "both"):
            continue
        read = ball(sources={apex: 1.0}, readable=readable, rule=rule, hops=depth)
        truncated |= read.truncated
        visited |= set(read.reached)
        paths = best_paths(read.steps, {apex: 1.0}, depth)
        entries = [Entailed(node, relation[:-1], path) for node, path in paths.items() if node != apex]
        found[relation] = sorted(entries, key=lambda entry: (-entry.confidence, entry.path.hops, entry.node_id))
    names = node_texts({apex, *(entry.node_id for entries in found.values() for entry in entries)})
    return Entailment(node_id=apex, direction=direction, max_depth=depth, ancestors=found["ancestors"],
                      descendants=found["descendants"], names=names, truncated=truncated, nodes_visited=len(visited))


def _readable_node(node_id, readable: list[str]) -> str:
    try:
        parsed = str(uuid.UUID(str(node_id)))
    except (TypeError, ValueError, AttributeError):
        raise InvalidInput("node_id must be a node's id (a UUID).", field="node_id") from None
    if not Memory.objects.filter(pk=parsed, cube_id__in=readable, deleted_at__isnull=True).exists():
        raise NotFound("node_id names no live node you can read.", extra={
            "field": "node_id", "suggestion": "Search for the node first and use the id it answers."})
    return parsed

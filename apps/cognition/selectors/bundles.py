"""Small graphs around retrieved nodes, as inject_context bundles them on request (its neighbourhood is
get_neighborhood's, selectors/graph.py): causal chains (along causal links, source = cause) and entailment cones
(along hierarchical links, source IS-A target: the target is the more general node). Only live nodes the actor may
read are walked to or shown; each hop is one query for the links of the whole frontier and one for the nodes they
reach."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from apps.accounts.models import User
from apps.cognition.citations import citation_tag
from apps.cognition.limits import CAUSAL_HOPS, CAUSAL_PATHS, CONE_DEPTH
from apps.cognition.representations import edge_summary
from apps.memories.models import MemoryLink
from apps.memories.selectors import memories_readable

PREVIEW_CHARS = 200
# Nodes a walk follows from each node per hop, strongest links first: a hub does not flood a bundle.
BRANCHING = 8
FORWARD, BACKWARD, BOTH = "forward", "backward", "both"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    edge_type: str
    weight: float

    def as_dict(self) -> dict:
        return edge_summary(self.source, self.target, self.edge_type, self.weight)

    def other(self, node: str) -> str:
        return self.target if node == self.source else self.source


def links_touching(node_ids, *, link_type: str | None = None, direction: str = BOTH) -> list[Edge]:
    """The links from (forward), to (backward) or at either end of (both) these nodes, strongest first."""
    ids = list(node_ids)
    condition = {FORWARD: Q(source_id__in=ids), BACKWARD: Q(target_id__in=ids),
                 BOTH: Q(source_id__in=ids) | Q(target_id__in=ids)}[direction]
    links = MemoryLink.objects.filter(condition)
    if link_type:
        links = links.filter(link_type=link_type)
    return [Edge(str(source), str(target), link_type_, weight) for source, target, link_type_, weight in
            links.order_by("-weight").values_list("source_id", "target_id", "link_type", "weight")]


def visible_nodes(*, actor: User, node_ids) -> dict[str, dict]:
    """The live nodes among ``node_ids`` that the actor may read: id -> {content, kind, importance}."""
    rows = memories_readable(actor=actor).filter(pk__in=list(node_ids)).values_list("pk", "content", "kind",
                                                                                   "importance")
    return {str(pk): {"content": content, "kind": kind, "importance": importance}
            for pk, content, kind, importance in rows}


@dataclass
class Walk:
    """Where a walk from each root went: node -> (the node it came from, the edge), per root; the rows it saw."""

    reached: dict[str, dict[str, tuple[str | None, Edge | None]]]
    rows: dict[str, dict]


def walk(*, actor: User, roots: list[str], hops: int, direction: str, link_type: str | None = None) -> Walk:
    reached = {root: {root: (None, None)} for root in roots}
    frontiers = {root: [root] for root in roots}
    rows: dict[str, dict] = {}
    for _ in range(hops):
        frontier = {node for nodes in frontiers.values() for node in nodes}
        if not frontier:
            break
        edges = links_touching(frontier, link_type=link_type, direction=direction)
        found = {edge.other(node) for edge in edges for node in (edge.source, edge.target) if node in frontier}
        rows.update(visible_nodes(actor=actor, node_ids=found - set(rows)))
        for root in roots:
            came, nodes = reached[root], set(frontiers[root])
            grown: list[str] = []
            taken: dict[str, int] = {}
            for edge in edges:  # strongest first
                for node in (edge.source, edge.target):
                    step = _step(edge, node, direction)
                    if node not in nodes or step is None or step in came or step not in rows:
                        continue
                    if taken.get(node, 0) >= BRANCHING:
                        continue
                    came[step] = (node, edge)
                    taken[node] = taken.get(node, 0) + 1
                    grown.append(step)
            frontiers[root] = grown
    return Walk(reached=reached, rows=rows)


def _step(edge: Edge, node: str, direction: str) -> str | None:
    """Where the edge leads from ``node`` in the walk's direction, or None."""
    if direction == FORWARD:
        return edge.target if node == edge.source else None
    if direction == BACKWARD:
        return edge.source if node == edge.target else None
    return edge.other(node)


def causal_paths_list(*, actor: User, node_ids: list[str]) -> list[dict]:
    """Chains of causal links through the nodes, each from a cause to an effect: what follows from each node
    (forward) and what led to it (backward), up to CAUSAL_HOPS links; the longest and strongest first, a chain
    inside a longer one left out."""
    paths: list[list[Edge]] = []
    for direction in (FORWARD, BACKWARD):
        walked = walk(actor=actor, roots=node_ids, hops=CAUSAL_HOPS, direction=direction,
                      link_type=MemoryLink.LinkType.CAUSAL)
        for root in node_ids:
            came = walked.reached[root]
            parents = {parent for parent, _ in came.values() if parent is not None}
            for leaf in (node for node in came if node not in parents and node != root):
                chain = _chain(came, leaf)
                paths.append(chain if direction == FORWARD else chain[::-1])
    unique = {tuple((edge.source, edge.target) for edge in path): path for path in paths}
    ranked = sorted(unique.values(), key=lambda path: (-len(path), -_strength(path)))
    kept: list[list[Edge]] = []
    for path in ranked:
        if not any(_inside(path, longer) for longer in kept):
            kept.append(path)
    return [_causal_path(path) for path in kept[:CAUSAL_PATHS]]


def _chain(came: dict, leaf: str) -> list[Edge]:
    chain: list[Edge] = []
    node = leaf
    while came[node][1] is not None:
        parent, edge = came[node]
        chain.append(edge)
        node = parent
    return chain[::-1]


def _strength(path: list[Edge]) -> float:
    strength = 1.0
    for edge in path:
        strength *= edge.weight
    return strength


def _inside(path: list[Edge], longer: list[Edge]) -> bool:
    keys, longer_keys = [(e.source, e.target) for e in path], [(e.source, e.target) for e in longer]
    return len(keys) < len(longer_keys) and any(longer_keys[i:i + len(keys)] == keys
                                                 for i in range(len(longer_keys) - len(keys) + 1))


def _causal_path(path: list[Edge]) -> dict:
    nodes = [path[0].source, *(edge.target for edge in path)]
    return {"nodes": nodes, "edges": [edge.as_dict() for edge in path], "strength": round(_strength(path), 4),
            "narrative": " -> ".join(citation_tag(node) for node in nodes)}


def entailment_cones_list(*, actor: User, node_ids: list[str]) -> list[dict]:
    """Each node's IS-A cone: the more general nodes above it (its hierarchical links out) and the more specific
    ones below it (links in), CONE_DEPTH levels each way; nodes with neither have no cone."""
    up = walk(actor=actor, roots=node_ids, hops=CONE_DEPTH, direction=FORWARD,
              link_type=MemoryLink.LinkType.HIERARCHICAL)
    down = walk(actor=actor, roots=node_ids, hops=CONE_DEPTH, direction=BACKWARD,
                link_type=MemoryLink.LinkType.HIERARCHICAL)
    cones = []
    for apex in node_ids:
        ancestors = {node: edge for node, (_, edge) in up.reached[apex].items() if edge is not None}
        descendants = {node: edge for node, (_, edge) in down.reached[apex].items() if edge is not None}
        if ancestors or descendants:
            cones.append({"apex": apex, "ancestors": list(ancestors), "descendants": list(descendants),
                          "depth": CONE_DEPTH,
                          "edges": [edge.as_dict() for edge in [*ancestors.values(), *descendants.values()]]})
    return cones


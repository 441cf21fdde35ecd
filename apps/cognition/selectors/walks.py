"""Directed, weighted walks over the memory graph for Context Graph's reasoning tools (services/causal.py,
selectors/entailment.py): read the links around some nodes hop by hop, then find the best paths among them.

- **Reading** (``ball``): one statement per hop reads the links of the whole frontier that a ``Rule`` allows (link
  types walked along their direction, against it, or both), whose far end is a live memory in a cube the actor may
  read: a node the actor cannot read is never reached, so a link from or to another user's node is never walked.
  The frontier is expanded best first (by the best product of weights found so far) and the walk stops at
  REASONING_MAX_NODES nodes and REASONING_LINKS_PER_HOP links a hop (the strongest); an answer that hit a bound says
  ``truncated``.
- **Best paths** (``best_paths``): Dijkstra on -log(weight) over (node, links used) states, so the best path is the
  one whose product of weights is highest among those of at most ``hops`` links (ties: fewer links). Weights are at
  most 1, so a cycle never helps and every path found is loopless. ``k_best_paths`` is Yen's algorithm on top.
"""
from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.db.models import BooleanField, F, Value
from django.db.models.functions import Left

from apps.accounts.models import User
from apps.cognition.limits import REASONING_LINKS_PER_HOP, REASONING_MAX_NODES
from apps.cognition.representations import edge_summary
from apps.cubes.access import cube_ids_readable
from apps.memories.models import Memory, MemoryLink

NAME_CHARS = 80
TEXT_CHARS = 400
_SENTENCE_END = re.compile(r"(?<=[.?!])\s")


@dataclass(frozen=True)
class Arc:
    """A stored link: directed source -> target, typed, weighted."""

    source: str
    target: str
    link_type: str
    weight: float

    def as_dict(self) -> dict:
        return edge_summary(self.source, self.target, self.link_type, self.weight)


@dataclass(frozen=True)
class Step:
    """A move from ``node`` to ``to`` over ``arc``: forward along the link's direction, or backward against it."""

    node: str
    to: str
    arc: Arc

    @property
    def forward(self) -> bool:
        return self.arc.source == self.node

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.node, self.to, self.arc.source, self.arc.target


@dataclass(frozen=True)
class Rule:
    """Which links a walk follows and which way: the link types walked forward (source to target) and those walked
    backward; None is every type, () none."""

    forward: tuple[str, ...] | None = ()
    backward: tuple[str, ...] | None = ()


@dataclass
class Ball:
    """What a walk read: the steps out of every node it expanded, the best product of weights it saw for each node
    it reached (a running estimate that orders the expansion), and whether a bound stopped it."""

    steps: dict[str, list[Step]] = field(default_factory=dict)
    reached: dict[str, float] = field(default_factory=dict)
    truncated: bool = False


def readable_cube_ids(*, actor: User) -> list[str]:
    """The cubes the actor may read, as the other cognition selectors scope: one query, then a plain list."""
    return list(cube_ids_readable(actor=actor).values_list("id", flat=True))


def ball(*, sources: Mapping[str, float], readable: list[str], rule: Rule, hops: int, min_weight: float = 0.0,
         max_nodes: int = REASONING_MAX_NODES) -> Ball:
    """The links a walk of at most ``hops`` links from ``sources`` (node -> starting score) can take, read one hop a
    statement, the most promising nodes first."""
    read = Ball(reached=dict(sources))
    frontier = sorted(sources, key=lambda node: (-sources[node], node))[:max_nodes]
    read.truncated = len(sources) > max_nodes
    for _ in range(hops):
        if not frontier:
            break
        rows = _arcs(frontier, readable=readable, rule=rule, min_weight=min_weight)
        if len(rows) >= REASONING_LINKS_PER_HOP:
            read.truncated = True
        for node in frontier:
            read.steps[node] = []
        new: dict[str, float] = {}
        for near, source, target, link_type, weight, forward in rows:
            near = str(near)
            arc = Arc(str(source), str(target), link_type, float(weight))
            step = Step(near, arc.target if forward else arc.source, arc)
            read.steps[near].append(step)
            score = read.reached[near] * arc.weight
            if score > read.reached.get(step.to, -1.0):
                read.reached[step.to] = score
            if step.to not in read.steps:
                new[step.to] = read.reached[step.to]
        room = max_nodes - len(read.steps)
        frontier = sorted(new, key=lambda node: (-new[node], node))
        if len(frontier) > room:
            read.truncated = True
            frontier = frontier[:room]
    return read


def _arcs(frontier: list[str], *, readable: list[str], rule: Rule, min_weight: float) -> list[tuple]:
    """(frontier node, source, target, type, weight, forward?) of the links the rule allows at the frontier, whose
    far end is live and readable: one statement, strongest first, at most REASONING_LINKS_PER_HOP rows."""
    parts = []
    weight = {"weight__gt": 0.0, "weight__gte": min_weight}
    if rule.forward != ():
        outgoing = MemoryLink.objects.filter(source_id__in=frontier, target__cube_id__in=readable,
                                             target__deleted_at__isnull=True, **weight)
        if rule.forward is not None:
            outgoing = outgoing.filter(link_type__in=rule.forward)
        parts.append(outgoing.annotate(near=F("source_id"), forward=Value(True, output_field=BooleanField()))
                     .values_list("near", "source_id", "target_id", "link_type", "weight", "forward"))
    if rule.backward != ():
        incoming = MemoryLink.objects.filter(target_id__in=frontier, source__cube_id__in=readable,
                                             source__deleted_at__isnull=True, **weight)
        if rule.backward is not None:
            incoming = incoming.filter(link_type__in=rule.backward)
        parts.append(incoming.annotate(near=F("target_id"), forward=Value(False, output_field=BooleanField()))
                     .values_list("near", "source_id", "target_id", "link_type", "weight", "forward"))
    if not parts:
        return []
    query = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    return list(query.order_by("-weight")[:REASONING_LINKS_PER_HOP])


@dataclass(frozen=True)
class Path:
    """A walk's path: its start, its steps in order and the product of their weights (times the start's score)."""

    start: str
    steps: tuple[Step, ...]
    score: float

    @property
    def nodes(self) -> list[str]:
        return [self.start, *(step.to for step in self.steps)]

    @property
    def hops(self) -> int:
        return len(self.steps)

    @property
    def strength(self) -> float:
        return math.prod(step.arc.weight for step in self.steps)


def _cost(weight: float) -> float:
    return -math.log(weight)


def best_paths(steps: Mapping[str, list[Step]], sources: Mapping[str, float], hops: int, *,
               banned_nodes: Iterable[str] = (), banned_steps: Iterable[tuple] = ()) -> dict[str, Path]:
    """Each reachable node's best path from any of ``sources`` (node -> starting score in (0, 1]) over at most
    ``hops`` steps: the highest score x product of weights, then the fewest steps. Dijkstra over (node, steps used):
    a state is dropped when a state of the same node with no more steps was settled before it (cheaper or as
    cheap), so a node is settled again only with fewer steps left over, which the hop limit may need."""
    banned_nodes, banned_steps = set(banned_nodes), set(banned_steps)
    heap: list[tuple[float, int, str]] = []
    came: dict[tuple[str, int], tuple[float, tuple[str, int] | None, Step | None]] = {}
    for node, score in sources.items():
        if score > 0 and node not in banned_nodes:
            came[(node, 0)] = (_cost(score), None, None)
            heapq.heappush(heap, (_cost(score), 0, node))
    settled: dict[str, int] = {}
    best: dict[str, tuple[str, int]] = {}
    while heap:
        cost, used, node = heapq.heappop(heap)
        if came[(node, used)][0] < cost or settled.get(node, hops + 1) <= used:
            continue
        settled[node] = used
        best.setdefault(node, (node, used))
        if used == hops:
            continue
        for step in steps.get(node, ()):
            if step.to in banned_nodes or step.key in banned_steps:
                continue
            state, next_cost = (step.to, used + 1), cost + _cost(step.arc.weight)
            if state not in came or next_cost < came[state][0]:
                came[state] = (next_cost, (node, used), step)
                heapq.heappush(heap, (next_cost, used + 1, step.to))
    return {node: _path(came, state, sources) for node, state in best.items()}


def _path(came: dict, state: tuple[str, int], sources: Mapping[str, float]) -> Path:
    steps: list[Step] = []
    while came[state][1] is not None:
        _, previous, step = came[state]
        steps.append(step)
        state = previous
    steps.reverse()
    start = state[0]
    return Path(start, tuple(steps), sources[start] * math.prod(step.arc.weight for step in steps))


def k_best_paths(steps: Mapping[str, list[Step]], start: str, end: str, hops: int, k: int) -> list[Path]:
    """Yen's algorithm: the ``k`` best loopless paths from ``start`` to ``end`` of at most ``hops`` steps, best
    first. Each next path deviates from one already found at a spur node: the best path from there that avoids the
    root's nodes and the steps the found paths with the same root took next."""
    first = best_paths(steps, {start: 1.0}, hops).get(end)
    if first is None or start == end:
        return [first] if first is not None else []
    found: list[Path] = [first]
    candidates: list[tuple[float, int, tuple, Path]] = []
    seen = {_identity(first)}
    while len(found) < k:
        last = found[-1]
        for index in range(last.hops):
            root = last.steps[:index]
            spur = last.nodes[index]
            banned_steps = {path.steps[index].key for path in found
                            if path.hops > index and path.steps[:index] == root}
            tail = best_paths(steps, {spur: 1.0}, hops - index, banned_nodes=last.nodes[:index],
                              banned_steps=banned_steps).get(end)
            if tail is None:
                continue
            path = Path(start, root + tail.steps, math.prod(step.arc.weight for step in root + tail.steps))
            if _identity(path) not in seen:
                seen.add(_identity(path))
                heapq.heappush(candidates, (-path.score, path.hops, _identity(path), path))
        if not candidates:
            break
        found.append(heapq.heappop(candidates)[3])
    return found


def _identity(path: Path) -> tuple:
    return tuple(step.key for step in path.steps)


@dataclass(frozen=True)
class NodeText:
    name: str
    text: str


def node_texts(node_ids: Iterable[str]) -> dict[str, NodeText]:
    """Each node's name (its Context Graph name, else the start of its first sentence) and the start of its text,
    for narratives: one query. The nodes were reached by a walk, so the actor may read them."""
    rows = Memory.objects.filter(pk__in=list(node_ids)).values_list("pk", "node_profile__name",
                                                                    Left("content", TEXT_CHARS))
    return {str(pk): NodeText(name or _first_sentence(text), text) for pk, name, text in rows}


def _first_sentence(text: str) -> str:
    text = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0].rstrip(".")
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS - 1].rstrip() + "…"

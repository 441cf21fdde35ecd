"""Causal reasoning over the caller's graph: query_causal, find_causal_path and expand_causal_path.

A causal link is directed, cause (source) -> effect (target), weighted 0-1. Every walk reads links hop by hop (one
statement a hop, bounded, only live nodes the caller may read: selectors/walks.py) and ranks paths by the product of
their weights (Dijkstra on -log weight, at most the hop limit). Concepts given as text are matched to the caller's
own nodes by the memory core's retrieval (meaning and words), never by string equality; a node id is taken as it is.

- do(X): the graph with X's incoming causal links cut; the effects are the nodes reached from X along causal links,
  each with its effect strength, the best product of weights along a path from X.
- observe(X): association both ways: X's causes (reached against the links), its effects, and nodes that share a
  cause with X (X <- C -> Y: confounded, associated without either causing the other). A node's strength is its best
  trek's product: up from X to a common cause (or none), then down to the node.
- counterfactual(X): the effects of X that lose all support without it: remove X, and an effect keeps support when a
  causal path reaches it from a node that is not downstream of X (within the hop limit); the others lose it.

These are graph semantics over the weights stored, not a fitted structural model: a weight is read as the strength
of one link, and a path's strength as the product of its links'.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from apps.accounts.models import User
from apps.cognition.limits import (
    CAUSAL_ALTERNATIVES, CAUSAL_PATH_HOPS, CAUSAL_QUERY_HOPS, CONCEPT_CANDIDATES, CONCEPT_MIN_SIMILARITY,
    CONCEPT_NEAREST_SHOWN, EXPAND_HOPS, EXPAND_MIN_WEIGHT, EXPAND_MIN_WEIGHT_DEFAULT, REASONING_LINKS_PER_HOP,
    REASONING_RESULTS,
)
from apps.cognition.selectors.walks import (
    Arc, NodeText, Path, Rule, Step, ball, best_paths, k_best_paths, node_texts, readable_cube_ids,
)
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_retrieve
from apps.memories.validation import MAX_QUERY_CHARS

CAUSAL = MemoryLink.LinkType.CAUSAL.value
INTERVENTIONS = ("do", "observe", "counterfactual")
PATH_TYPES = ("causal", "semantic", "any")
EXPAND_DIRECTIONS = ("effects", "causes", "both")
# find_causal_path's path types: causal links only along their direction; other links either way.
NOT_CAUSAL = tuple(value for value in MemoryLink.LinkType.values if value != CAUSAL)
PATH_RULES = {
    "causal": Rule(forward=(CAUSAL,)),
    "semantic": Rule(forward=(MemoryLink.LinkType.SEMANTIC.value,), backward=(MemoryLink.LinkType.SEMANTIC.value,)),
    "any": Rule(forward=None, backward=NOT_CAUSAL),
}
EFFECTS, CAUSES = Rule(forward=(CAUSAL,)), Rule(backward=(CAUSAL,))
CONCEPT_UNRESOLVED = "concept_unresolved"


# --- concepts ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Concept:
    """What a concept resolved to: one of the caller's nodes, by its id or by retrieval (``match_score``: the
    retrieval's relevance, 1 for an id)."""

    node_id: str
    name: str
    match_score: float
    matched_by: str  # "id" or "meaning"

    def as_dict(self) -> dict:
        return {"node_id": self.node_id, "node_name": self.name, "match_score": round(self.match_score, 4),
                "matched_by": self.matched_by}


def concept_resolve(*, actor: User, concept, field: str, readable: list[str]) -> Concept:
    """A node id the actor may read, or the caller's node that retrieval finds for the text: the most relevant of
    the best CONCEPT_CANDIDATES that shares a word with it or is close in meaning (cosine >= CONCEPT_MIN_SIMILARITY).
    Neither: NotFound (code concept_unresolved) naming the nearest nodes. Retrieval here reinforces nothing."""
    if not isinstance(concept, str) or not concept.strip():
        raise InvalidInput(f"{field} cannot be empty: name a concept or give a node id.", field=field)
    if len(concept) > MAX_QUERY_CHARS:
        raise InvalidInput(f"{field} has at most {MAX_QUERY_CHARS} characters.", field=field)
    if "\x00" in concept:
        raise InvalidInput(f"{field} cannot contain NUL bytes.", field=field)
    text = concept.strip()
    try:
        node_id = str(uuid.UUID(text))
    except ValueError:
        node_id = None
    if node_id is not None:
        if not Memory.objects.filter(pk=node_id, cube_id__in=readable, deleted_at__isnull=True).exists():
            raise NotFound(f"{field} names no live node you can read.", code=CONCEPT_UNRESOLVED, extra={
                "field": field, "nearest": [],
                "suggestion": "Give the concept in words, or an id that search_graph answered."})
        return Concept(node_id, node_texts([node_id])[node_id].name, 1.0, "id")
    found = memory_retrieve(actor=actor, text=text, limit=CONCEPT_CANDIDATES, reinforce=False).items
    matching = [item for item in found if item.shares_a_word or item.dense >= CONCEPT_MIN_SIMILARITY]
    if not matching:
        names = node_texts([str(item.memory.pk) for item in found])
        nearest = [names[str(item.memory.pk)].name for item in found[:CONCEPT_NEAREST_SHOWN]]
        raise NotFound(
            f"No node of yours matches {field} {text[:80]!r}"
            + (f"; the nearest are: {'; '.join(nearest)}." if nearest else ": your graph has no nodes yet."),
            code=CONCEPT_UNRESOLVED,
            extra={"field": field, "nearest": [{"node_id": str(item.memory.pk), "node_name": name,
                                                "similarity": round(item.dense, 4)}
                                               for item, name in zip(found, nearest)],
                   "suggestion": "Use one of the nearest names (or its node_id), or store the concept first."})
    best = max(matching, key=lambda item: (item.relevance, item.score))
    node_id = str(best.memory.pk)
    return Concept(node_id, node_texts([node_id])[node_id].name, best.relevance, "meaning")


def _choice(value, choices: tuple[str, ...], default: str, field: str) -> str:
    if value is None:
        return default
    if value not in choices:
        raise InvalidInput(f"{field} must be one of {', '.join(choices)}.", field=field)
    return value


def _flag(value, field: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false.", field=field)
    return value


# --- narratives --------------------------------------------------------------------------------------------------

# How a step reads, by link type and whether it is walked along the link (True) or against it (False).
VERBS = {
    (CAUSAL, True): "leads to", (CAUSAL, False): "is caused by",
    ("semantic", True): "relates to", ("semantic", False): "relates to",
    ("analogical", True): "is analogous to", ("analogical", False): "is analogous to",
    ("temporal", True): "comes before", ("temporal", False): "comes after",
    ("hierarchical", True): "is a kind of", ("hierarchical", False): "includes",
}


def narrate(steps, names: dict[str, NodeText], *, with_types: bool = True) -> str:
    """'A leads to B (causal, 0.90), which relates to C (semantic, 0.80)': the path in the nodes' own words."""
    if not steps:
        return ""
    parts = [names[steps[0].node].name]
    for index, step in enumerate(steps):
        said = f"{step.arc.link_type}, {step.arc.weight:.2f}" if with_types else f"{step.arc.weight:.2f}"
        parts.append(f"{'' if index == 0 else ', which '}{VERBS[(step.arc.link_type, step.forward)]} "
                     f"{names[step.to].name} ({said})")
    return parts[0] + " " + "".join(parts[1:]) + "."


# --- query_causal ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CausalResult:
    node_id: str
    relation: str  # "effect", "cause" or "common_cause"
    strength: float  # the best path's (do, counterfactual) or trek's (observe) product of weights
    steps: tuple[Step, ...]  # from the action
    via: str | None = None  # the shared cause of a common_cause
    loses_support: bool | None = None  # counterfactual
    remaining_support: float | None = None  # counterfactual: the best support left without the action
    supported_by: str | None = None  # counterfactual: where that support starts

    @property
    def nodes(self) -> list[str]:
        return [self.steps[0].node, *(step.to for step in self.steps)] if self.steps else [self.node_id]


@dataclass(frozen=True)
class CausalQuery:
    intervention_type: str
    action: Concept
    outcome: Concept | None
    results: list[CausalResult]
    # counterfactual: the effects that keep support without the action.
    still_supported: list[CausalResult]
    effect_strength: float | None
    outcome_loses_support: bool | None
    names: dict[str, NodeText]
    narrative: str
    truncated: bool
    nodes_visited: int


def causal_query(*, actor: User, action, outcome=None, intervention_type=None) -> CausalQuery:
    """What ``action`` does (do), goes with (observe) or is needed for (counterfactual), over the actor's causal
    links; with ``outcome``, about that node alone: its entry (if reached) and ``effect_strength``."""
    kind = _choice(intervention_type, INTERVENTIONS, "do", "intervention_type")
    readable = readable_cube_ids(actor=actor)
    source = concept_resolve(actor=actor, concept=action, field="action", readable=readable)
    target = None if outcome is None else concept_resolve(actor=actor, concept=outcome, field="outcome",
                                                          readable=readable)
    x = source.node_id
    kept: list[CausalResult] = []
    if kind == "observe":
        results, visited, truncated = _observe(x, readable)
    else:
        results, visited, truncated = _effects(x, readable)
        if kind == "counterfactual":
            results, kept, outside, cut_short = _counterfactual(x, results, readable)
            visited, truncated = visited | outside, truncated or cut_short
    everything = {entry.node_id: entry for entry in [*results, *kept]}
    strength = lost = None
    if target is not None:
        reached = everything.get(target.node_id)
        strength = reached.strength if reached else 0.0
        if kind == "counterfactual":
            lost = bool(reached and reached.loses_support)
        results = [entry for entry in results if entry.node_id == target.node_id]
        kept = [entry for entry in kept if entry.node_id == target.node_id]
    results, kept = results[:REASONING_RESULTS], kept[:REASONING_RESULTS]
    shown = {x} if target is None else {x, target.node_id}
    for entry in [*results, *kept]:
        shown.update(entry.nodes)
        if entry.supported_by:
            shown.add(entry.supported_by)
    names = node_texts(shown)
    return CausalQuery(intervention_type=kind, action=source, outcome=target, results=results, still_supported=kept,
                       effect_strength=strength, outcome_loses_support=lost, names=names,
                       narrative=_query_narrative(kind, source, target, results, kept, strength, names),
                       truncated=truncated, nodes_visited=len(visited))


def _ranked(results: list[CausalResult]) -> list[CausalResult]:
    return sorted(results, key=lambda entry: (-entry.strength, len(entry.steps), entry.node_id))


def _effects(x: str, readable: list[str]) -> tuple[list[CausalResult], set[str], bool]:
    """do(X): the nodes reached from X along causal links, X's own incoming links cut (no path returns to X)."""
    read = ball(sources={x: 1.0}, readable=readable, rule=EFFECTS, hops=CAUSAL_QUERY_HOPS)
    cut = {node: [step for step in steps if step.to != x] for node, steps in read.steps.items()}
    paths = best_paths(cut, {x: 1.0}, CAUSAL_QUERY_HOPS)
    results = [CausalResult(node, "effect", path.strength, path.steps) for node, path in paths.items() if node != x]
    return _ranked(results), set(read.reached), read.truncated


def _observe(x: str, readable: list[str]) -> tuple[list[CausalResult], set[str], bool]:
    """observe(X): treks from X. Up: X's causes, against the links; down: from X and from each cause along the
    links (a multi-source Dijkstra whose sources start at their up path's product)."""
    up_read = ball(sources={x: 1.0}, readable=readable, rule=CAUSES, hops=CAUSAL_QUERY_HOPS)
    ups = best_paths(up_read.steps, {x: 1.0}, CAUSAL_QUERY_HOPS)
    starts = {node: path.strength for node, path in ups.items()}
    down_read = ball(sources=starts, readable=readable, rule=EFFECTS, hops=CAUSAL_QUERY_HOPS)
    downs = best_paths(down_read.steps, starts, CAUSAL_QUERY_HOPS)
    cut = {node: [step for step in steps if step.to != x] for node, steps in down_read.steps.items()}
    effects = set(best_paths(cut, {x: 1.0}, CAUSAL_QUERY_HOPS))
    results = []
    for node, down in downs.items():
        if node == x:
            continue
        top = down.start
        steps = ups[top].steps + down.steps
        relation = "effect" if node in effects else "cause" if node in ups else "common_cause"
        results.append(CausalResult(node, relation, down.score, steps,
                                    via=top if top not in (x, node) else None))
    return (_ranked(results), set(up_read.reached) | set(down_read.reached),
            up_read.truncated or down_read.truncated)


def _counterfactual(x: str, effects: list[CausalResult], readable: list[str]):
    """Remove X: an effect keeps support when a causal path reaches it from a node outside X's effects (not X),
    through other effects only. One statement reads every causal link into the effects."""
    downstream = {entry.node_id for entry in effects}
    if not downstream:
        return [], [], set(), False
    rows = list(MemoryLink.objects.filter(target_id__in=downstream, link_type=CAUSAL, weight__gt=0,
                                          source__cube_id__in=readable, source__deleted_at__isnull=True)
                .exclude(source_id=x).order_by("-weight")
                .values_list("source_id", "target_id", "link_type", "weight")[:REASONING_LINKS_PER_HOP])
    steps: dict[str, list[Step]] = {}
    outside: set[str] = set()
    for source, target, link_type, weight in rows:
        arc = Arc(str(source), str(target), link_type, float(weight))
        steps.setdefault(arc.source, []).append(Step(arc.source, arc.target, arc))
        if arc.source not in downstream:
            outside.add(arc.source)
    support = best_paths(steps, {node: 1.0 for node in outside}, len(downstream) + 1)
    lost, kept = [], []
    for entry in effects:
        held = support.get(entry.node_id)
        if held is None:
            lost.append(CausalResult(entry.node_id, "effect", entry.strength, entry.steps, loses_support=True))
        else:
            kept.append(CausalResult(entry.node_id, "effect", entry.strength, entry.steps, loses_support=False,
                                     remaining_support=held.strength, supported_by=held.start))
    return lost, kept, outside, len(rows) >= REASONING_LINKS_PER_HOP


def _query_narrative(kind: str, action: Concept, outcome: Concept | None, results: list[CausalResult],
                     kept: list[CausalResult], strength: float | None, names: dict[str, NodeText]) -> str:
    x = names[action.node_id].name

    def named(entry: CausalResult) -> str:
        return f"{names[entry.node_id].name} ({entry.strength:.2f})"

    if outcome is not None:
        y = names[outcome.node_id].name
        if not results:
            told = {"do": f"Doing {x} does not reach {y} along your causal links",
                    "observe": f"{x} and {y} are not associated through your causal links (no trek joins them)",
                    "counterfactual": (f"{y} keeps support without {x}" if kept else
                                       f"{y} does not depend on {x} through your causal links")}[kind]
            return told + "."
        [entry] = results
        chain = narrate(entry.steps, names, with_types=False)
        if kind == "do":
            return f"Doing {x} leads to {y} with effect strength {strength:.2f}: {chain}"
        if kind == "counterfactual":
            return f"Without {x}, {y} loses all support (effect strength {strength:.2f}): {chain}"
        return _observed(entry, x, names) + f" Strength {strength:.2f}: {chain}"
    if kind == "do":
        if not results:
            return f"Doing {x} has no effects along your causal links."
        return (f"Doing {x} (its own causes cut) leads to {len(results)} effect"
                f"{'s' if len(results) != 1 else ''}: " + "; ".join(named(entry) for entry in results[:10]) + ".")
    if kind == "counterfactual":
        said = (f"Without {x}, {len(results)} effect{'s' if len(results) != 1 else ''} lose all support: "
                + "; ".join(named(entry) for entry in results[:10]) + "." if results
                else f"Without {x}, no effect loses all its support.")
        if kept:
            said += " Still supported: " + "; ".join(
                f"{names[entry.node_id].name} (by {names[entry.supported_by].name}, {entry.remaining_support:.2f})"
                for entry in kept[:10]) + "."
        return said
    if not results:
        return f"Nothing is associated with {x} through your causal links."
    return f"Observing {x}: " + " ".join(_observed(entry, x, names) for entry in results[:10])


def _observed(entry: CausalResult, x: str, names: dict[str, NodeText]) -> str:
    y = names[entry.node_id].name
    if entry.relation == "effect":
        return f"{y} is an effect of {x} ({entry.strength:.2f})."
    if entry.relation == "cause":
        return f"{y} is a cause of {x} ({entry.strength:.2f})."
    return f"{y} shares the cause {names[entry.via].name} with {x} ({entry.strength:.2f})."


# --- find_causal_path -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CausalPathFound:
    start: Concept
    end: Concept
    path_type: str
    max_hops: int
    paths: list[Path]  # the best first, then Yen's alternatives
    names: dict[str, NodeText]
    truncated: bool
    nodes_visited: int

    @property
    def path(self) -> Path | None:
        return self.paths[0] if self.paths else None

    @property
    def alternatives(self) -> list[Path]:
        return self.paths[1:]

    def no_path(self) -> str:
        start, end = self.names[self.start.node_id].name, self.names[self.end.node_id].name
        return (f"No path of at most {self.max_hops} links ({self.path_type}) joins {start} to {end} in the graph "
                "you can read.")

    def narrative(self, path: Path) -> str:
        if not path.steps:
            return (f"{self.names[path.start].name}: both concepts match this one node.")
        return (narrate(path.steps, self.names) + f" Path confidence {path.strength:.2f}: the product of the "
                f"{path.hops} link weight{'s' if path.hops != 1 else ''}.")


def causal_path_find(*, actor: User, start_concept, end_concept, max_hops=None, path_type=None,
                     include_alternatives=None) -> CausalPathFound:
    """The best path from the start concept's node to the end concept's: the highest product of link weights over
    at most ``max_hops`` links (ties: fewer links), causal links only along their direction and the others either
    way; ``path_type`` keeps only causal or semantic links. With ``include_alternatives``, the next CAUSAL_ALTERNATIVES
    best loopless paths (Yen's algorithm)."""
    hops = CAUSAL_PATH_HOPS.clean(max_hops, field="max_hops")
    kind = _choice(path_type, PATH_TYPES, "any", "path_type")
    alternatives = _flag(include_alternatives, "include_alternatives")
    readable = readable_cube_ids(actor=actor)
    start = concept_resolve(actor=actor, concept=start_concept, field="start_concept", readable=readable)
    end = concept_resolve(actor=actor, concept=end_concept, field="end_concept", readable=readable)
    read = ball(sources={start.node_id: 1.0}, readable=readable, rule=PATH_RULES[kind], hops=hops)
    paths = k_best_paths(read.steps, start.node_id, end.node_id, hops, 1 + (CAUSAL_ALTERNATIVES if alternatives else 0))
    names = node_texts({start.node_id, end.node_id, *(node for path in paths for node in path.nodes)})
    return CausalPathFound(start=start, end=end, path_type=kind, max_hops=hops, paths=paths, names=names,
                           truncated=read.truncated, nodes_visited=len(read.reached))


# --- expand_causal_path -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CausalChain:
    """A causal path in causal order (cause first) and which way it was walked from the concept."""

    direction: str  # "effects" or "causes"
    arcs: tuple[Arc, ...]

    @property
    def nodes(self) -> list[str]:
        return [self.arcs[0].source, *(arc.target for arc in self.arcs)]

    @property
    def strength(self) -> float:
        product = 1.0
        for arc in self.arcs:
            product *= arc.weight
        return product


@dataclass(frozen=True)
class CausalExpansion:
    concept: Concept
    direction: str
    max_hops: int
    min_weight: float
    chains: list[CausalChain]
    names: dict[str, NodeText]
    truncated: bool
    nodes_visited: int

    def narrative(self, chain: CausalChain) -> str:
        steps = [Step(arc.source, arc.target, arc) for arc in chain.arcs]
        return narrate(steps, self.names, with_types=False)


def causal_expand(*, actor: User, concept, direction=None, max_hops=None, min_weight=None) -> CausalExpansion:
    """The causal chains from the concept's node (effects: along causal links of weight >= ``min_weight``), to it
    (causes: against them) or both, each the best path (highest product) of at most ``max_hops`` links to one node;
    the strongest REASONING_RESULTS first."""
    way = _choice(direction, EXPAND_DIRECTIONS, "effects", "direction")
    hops = EXPAND_HOPS.clean(max_hops, field="max_hops")
    floor = EXPAND_MIN_WEIGHT.clean(min_weight, field="min_weight")
    floor = EXPAND_MIN_WEIGHT_DEFAULT if floor is None else floor
    readable = readable_cube_ids(actor=actor)
    found = concept_resolve(actor=actor, concept=concept, field="concept", readable=readable)
    x = found.node_id
    chains: list[CausalChain] = []
    visited, truncated = {x}, False
    for name, rule in (("effects", EFFECTS), ("causes", CAUSES)):
        if way not in (name, "both"):
            continue
        read = ball(sources={x: 1.0}, readable=readable, rule=rule, hops=hops, min_weight=floor)
        visited |= set(read.reached)
        truncated |= read.truncated
        for node, path in best_paths(read.steps, {x: 1.0}, hops).items():
            if node == x:
                continue
            arcs = tuple(step.arc for step in path.steps)
            chains.append(CausalChain(name, arcs if name == "effects" else arcs[::-1]))
    chains.sort(key=lambda chain: (-chain.strength, len(chain.arcs), chain.direction, chain.nodes))
    chains = chains[:REASONING_RESULTS]
    names = node_texts({x, *(node for chain in chains for node in chain.nodes)})
    return CausalExpansion(concept=found, direction=way, max_hops=hops, min_weight=floor, chains=chains, names=names,
                           truncated=truncated, nodes_visited=len(visited))

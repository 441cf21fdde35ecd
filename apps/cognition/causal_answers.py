"""The answers of Context Graph's reasoning tools (query_causal, find_causal_path, expand_causal_path,
entailment_query) as plain data, shared by its edges: the MCP profile adds the pulse, REST serializes them as they
are. Each ``method`` says what was computed, in the terms of services/causal.py and selectors/entailment.py."""
from __future__ import annotations

from typing import Any

from apps.cognition.limits import CAUSAL_QUERY_HOPS, REASONING_RESULTS
from apps.cognition.selectors.entailment import Entailment
from apps.cognition.selectors.walks import Path
from apps.cognition.services.causal import CausalExpansion, CausalPathFound, CausalQuery, CausalResult

CAUSAL_METHODS = {
    "do": "do(action): the graph with the action's incoming causal links cut; its effects are the nodes reached along "
          "causal links, each with effect_strength = the best product of link weights along a path from the action "
          f"(at most {CAUSAL_QUERY_HOPS} links).",
    "observe": "observe(action): association both ways over causal links: the action's causes, its effects and the "
               "nodes that share a cause with it (confounded); strength = the best trek's product of weights (up "
               f"from the action to a common cause, then down to the node; at most {CAUSAL_QUERY_HOPS} links each "
               "way).",
    "counterfactual": "counterfactual(action): remove the action; an effect keeps support when a causal path reaches "
                      "it from a node that is not downstream of the action. results are the effects that lose all "
                      "support (effect_strength: the best path product from the action); still_supported the others, "
                      "with the best remaining support.",
}
# The seed's edge types (find_causal_path): an analogical link is a kind of semantic one there; link_type keeps the
# stored name.
SEED_EDGE_TYPE = {"analogical": "semantic"}


def _rounded(value: float) -> float:
    return round(float(value), 4)


def _result(entry: CausalResult, query: CausalQuery) -> dict[str, Any]:
    data: dict[str, Any] = {
        "node_id": entry.node_id, "node_name": query.names[entry.node_id].name, "relation": entry.relation,
        "effect_strength": _rounded(entry.strength), "hops": len(entry.steps), "path": entry.nodes,
        "edges": [step.arc.as_dict() for step in entry.steps],
    }
    if entry.via:
        data["via"] = entry.via
    if entry.loses_support is not None:
        data["loses_support"] = entry.loses_support
    if entry.remaining_support is not None:
        data.update(remaining_support=_rounded(entry.remaining_support), supported_by=entry.supported_by)
    return data


def causal_query_answer(query: CausalQuery) -> dict[str, Any]:
    data: dict[str, Any] = {
        "intervention_type": query.intervention_type, "action": query.action.as_dict(),
        "results": [_result(entry, query) for entry in query.results],
        "narrative": query.narrative, "method": CAUSAL_METHODS[query.intervention_type],
        "nodes_visited": query.nodes_visited, "truncated": query.truncated,
    }
    if query.intervention_type == "counterfactual":
        data["still_supported"] = [_result(entry, query) for entry in query.still_supported]
    if query.outcome is not None:
        data["outcome"] = query.outcome.as_dict()
        data["effect_strength"] = _rounded(query.effect_strength)
        if query.outcome_loses_support is not None:
            data["outcome_loses_support"] = query.outcome_loses_support
    return data


def _path_items(path: Path, found: CausalPathFound) -> list[dict[str, Any]]:
    """Each node of the path; all but the last with the link that leads on from it to the next."""
    items = []
    for index, node in enumerate(path.nodes):
        item: dict[str, Any] = {"node_id": node, "node_name": found.names[node].name}
        if index < path.hops:
            step = path.steps[index]
            item.update(edge_type=SEED_EDGE_TYPE.get(step.arc.link_type, step.arc.link_type),
                        edge_weight=_rounded(step.arc.weight), link_type=step.arc.link_type,
                        direction="forward" if step.forward else "backward")
        items.append(item)
    return items


def causal_path_answer(found: CausalPathFound, *, include_alternatives: bool) -> dict[str, Any]:
    best = found.path
    data: dict[str, Any] = {
        "path_found": best is not None,
        "narrative": found.narrative(best) if best else found.no_path(),
        "path": _path_items(best, found) if best else [],
        "hop_count": best.hops if best else 0,
        "path_confidence": _rounded(best.strength) if best else 0.0,
        "start_match": found.start.as_dict(), "end_match": found.end.as_dict(),
        "nodes_visited": found.nodes_visited, "truncated": found.truncated,
    }
    if include_alternatives:
        data["alternative_paths"] = [_path_items(path, found) for path in found.alternatives]
        data["alternative_confidences"] = [_rounded(path.strength) for path in found.alternatives]
    return data


def causal_expansion_answer(expansion: CausalExpansion) -> dict[str, Any]:
    return {
        "concept": expansion.concept.as_dict(), "direction": expansion.direction,
        "paths": [{"nodes": chain.nodes, "edges": [arc.as_dict() for arc in chain.arcs],
                   "strength": _rounded(chain.strength), "narrative": expansion.narrative(chain),
                   "direction": chain.direction} for chain in expansion.chains],
        "nodes_visited": expansion.nodes_visited, "truncated": expansion.truncated,
        "method": (f"Best-first along causal links of weight >= {expansion.min_weight:g} (effects: along them; causes: "
                   f"against them), at most {expansion.max_hops} links: each reached node's best path, strength = "
                   f"the product of its weights (Dijkstra on -log weight); the strongest {REASONING_RESULTS} first."),
    }


def entailment_answer(found: Entailment) -> dict[str, Any]:
    entries = [*found.ancestors, *found.descendants]
    return {
        "ancestors": [entry.node_id for entry in found.ancestors],
        "descendants": [entry.node_id for entry in found.descendants],
        "entailment_confidence": _rounded(found.confidence),
        "method": found.method,
        "node_id": found.node_id, "direction": found.direction, "max_depth": found.max_depth,
        "nodes": [{"node_id": entry.node_id, "node_name": found.names[entry.node_id].name,
                   "relation": entry.relation, "depth": entry.path.hops, "confidence": _rounded(entry.confidence)}
                  for entry in entries],
        "edges": [arc.as_dict() for arc in found.edges],
        "nodes_visited": found.nodes_visited, "truncated": found.truncated,
    }

"""The answers of Context Graph's state tools (utl_status, get_neuromodulation, homeostatic_status) as plain data,
shared by its edges: the MCP profile adds the pulse, REST serializes them as they are, the pages show them."""
from __future__ import annotations

from typing import Any

from apps.cognition import utl
from apps.cognition.selectors.state import (
    CYCLE_HOPS, SUSPECT_IMPORTANCE, SUSPECTS_LISTED, UTL_ITEM_NODES, UTL_TEXT_CHARS, VARIANCE_LIMIT, Homeostasis,
    UtlStatus,
)
from apps.cognition.services.neuromod import Levels
from apps.core.timestamps import iso_timestamp

NEUROMODULATION_METHOD = (
    "From the session's cached UTL state (dS = its entropy, dC = its coherence, L = its learning score): "
    "dopamine = 1 + 4 min(1, 1.2 dC), serotonin = min(1, 1.3 (1 - dC)), noradrenaline = 0.5 + 1.5 min(1, 1.5 dS), "
    "acetylcholine = 0.001 (1 + L). search_graph and inject_context retrieve breadth = round(2 + 6 serotonin) more "
    "candidates and order them by (1 - w) exp((score - best) / T) + w importance, with w = 0.5 (dopamine - 1) / 4 "
    "and T = 0.1 noradrenaline; learning_rate = 10 acetylcholine is the Hebbian step of a dream's replay.")
HEALTH_METHOD = (
    f"health_score = the mean of balance (1 - importance variance / {VARIANCE_LIMIT}, floored at 0), connectedness "
    "(the share of nodes with a link), consistency (1 - the share in open conflict tasks) and immunity (1 - the "
    f"share quarantined or suspect). A suspect is a node of importance >= {SUSPECT_IMPORTANCE} on a directed causal "
    f"cycle of at most {CYCLE_HOPS} links, or in an open ambiguity or semantic-cancer task.")


def _rounded(value: float, places: int = 4) -> float:
    return round(float(value), places)


def neuromodulation_answer(levels: Levels) -> dict[str, Any]:
    return {
        "dopamine": _rounded(levels.dopamine), "serotonin": _rounded(levels.serotonin),
        "noradrenaline": _rounded(levels.noradrenaline), "acetylcholine": _rounded(levels.acetylcholine, 6),
        "current_mode": levels.mode, "effects": levels.effects(),
        "basis": {"session_id": levels.session_id, "entropy": _rounded(levels.surprise),
                  "coherence": _rounded(levels.coherence), "learning_score": _rounded(levels.learning),
                  "resting": levels.resting},
        "method": NEUROMODULATION_METHOD,
    }


def utl_status_answer(status: UtlStatus) -> dict[str, Any]:
    session = status.session
    entropy_above, coherence_below = utl.THRESHOLDS[status.stage]
    return {
        "session_id": str(session.pk), "entropy": _rounded(session.entropy), "coherence": _rounded(session.coherence),
        "learning_score": _rounded(session.learning_score), "lifecycle_stage": status.stage.value,
        "interactions": session.interactions, "johari_quadrant": str(status.johari),
        "entropy_high": status.entropy_high, "coherence_low": status.coherence_low,
        "thresholds": {"entropy_high_above": entropy_above, "coherence_low_below": coherence_below},
        "recent_items": [_item(item) for item in status.items],
        "updated_at": iso_timestamp(session.updated_at),
    }


def _item(item) -> dict[str, Any]:
    text = item.text if len(item.text) <= UTL_TEXT_CHARS else item.text[:UTL_TEXT_CHARS - 1].rstrip() + "…"
    activated = item.activated or []
    return {"kind": item.kind, "text": text, "delta_s": _rounded(item.delta_s),
            "created_at": iso_timestamp(item.created_at), "activated_count": len(activated),
            "activated": [{"node_id": entry["node_id"], "score": _rounded(entry["score"])}
                          for entry in activated[:UTL_ITEM_NODES]]}


def homeostasis_answer(health: Homeostasis) -> dict[str, Any]:
    data: dict[str, Any] = {
        "mean_importance": _rounded(health.mean_importance),
        "importance_variance": _rounded(health.importance_variance),
        "quarantined_nodes": health.quarantined_nodes,
        "semantic_cancer_suspects": len(health.suspects),
        "health_score": _rounded(health.health_score),
        "health_parts": {name: _rounded(value) for name, value in health.parts.items()},
        "nodes": health.nodes, "edges": health.edges, "important_nodes": health.important_nodes,
        "conflicted_nodes": health.conflicted_nodes,
        "suspects": [{"node_id": suspect.node_id, "importance": _rounded(suspect.importance),
                      "reasons": list(suspect.reasons)} for suspect in health.suspects[:SUSPECTS_LISTED]],
        "method": HEALTH_METHOD,
    }
    # The seed's date-time has no null: never scaled, the field is left out.
    if health.last_scaling_time is not None:
        data["last_scaling_time"] = iso_timestamp(health.last_scaling_time)
    return data

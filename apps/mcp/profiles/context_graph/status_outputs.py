"""The output schemas of Context Graph's status group: the seed's where it has one, and Engram's own for
get_system_instructions, get_node_lineage and get_system_logs, which the seed only names."""
from __future__ import annotations

from apps.cognition.models import Event
from apps.cognition.selectors.lineage import LINEAGE_CHANGE_TYPES, LOG_ENTRY_ACTIONS

UUID = {"type": "string", "format": "uuid"}
STRINGS = {"type": "array", "items": {"type": "string"}}

MANIFEST_OUTPUT = {
    "type": "object",
    "properties": {
        "prompt_fragment": {"type": "string", "description": "Inject into context: explains 5-layer system, when to "
                                                             "use L2 vs L4/L5, dream triggers"},
        "layer_guidance": {"type": "object", "properties": {"high_entropy_tools": STRINGS,
                                                            "low_coherence_tools": STRINGS,
                                                            "fast_recall_tools": STRINGS}},
        "current_state_summary": {"type": "string"},
        "troubleshooting": {
            "type": "object",
            "description": "SELF-CORRECTION PROMPTS: Agent guidance when results seem wrong",
            "properties": {
                "irrelevant_results": {"type": "string", "description": "Always: 'If I return irrelevant results: 1) "
                                       "Adjust noradrenaline via get_neuromodulation, 2) Use search_graph with "
                                       "min_importance filter, 3) Try epistemic_action to clarify query'"},
                "low_recall": {"type": "string", "description": "Always: 'If recall seems incomplete: 1) Trigger "
                               "trigger_dream to consolidate, 2) Use get_neighborhood to browse locally, 3) Check if "
                               "semantic_cluster filter is too narrow'"},
                "conflicting_memories": {"type": "string", "description": "Always: 'If conflict_alert fires: 1) Use "
                                         "merge_concepts if duplicates, 2) Use annotate_node to mark one as "
                                         "deprecated, 3) Ask user for clarification'"},
                "slow_performance": {"type": "string", "description": "Always: 'If latency > 50ms: 1) Check "
                                     "homeostatic_status for graph health, 2) Use distillation_mode=structured, 3) "
                                     "Reduce include_metadata scope'"},
            },
        },
    },
}

INSTRUCTIONS_OUTPUT = {
    "type": "object",
    "properties": {
        "system_prompt_fragment": {"type": "string", "description": "Keep this in your working context."},
        "critical_behaviors": {
            "type": "array",
            "description": "When trigger happens, do action with tool.",
            "items": {"type": "object", "properties": {"trigger": {"type": "string"}, "action": {"type": "string"},
                                                       "tool": {"type": "string"}}},
        },
        "antipatterns": {**STRINGS, "description": "Mistakes agents make with this memory."},
    },
}

MEMETIC_OUTPUT = {
    "type": "object",
    "properties": {
        "coherence_score": {"type": "number", "description": "0-1: how well context fits together"},
        "entropy_level": {"type": "number", "description": "0-1: uncertainty/surprise level"},
        "top_active_concepts": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "suggested_action": {
            "type": "string", "enum": ["consolidate", "explore", "clarify", "curate", "ready"],
            "description": "consolidate=trigger_dream, explore=search_graph, clarify=epistemic_action, curate=handle "
                           "curation_tasks, ready=proceed",
        },
        "dream_available": {"type": "boolean", "description": "True if system can enter dream phase"},
        "curation_tasks": {
            "type": "array",
            "description": "PUSH-based maintenance inbox. System identifies these during Dream phase or Homeostatic "
                           "checks. Agent should process when suggested_action='curate'.",
            "items": {
                "type": "object",
                "properties": {
                    "task_type": {
                        "type": "string",
                        "enum": ["potential_merge", "ambiguity_detected", "obsolete_info", "semantic_cancer"],
                        "description": "potential_merge=duplicate nodes, ambiguity_detected=conflicting info, "
                                       "obsolete_info=stale data, semantic_cancer=circular logic",
                    },
                    "target_nodes": {"type": "array", "items": UUID,
                                     "description": "Node IDs involved in this curation task"},
                    "reason": {"type": "string", "description": "Human-readable explanation"},
                    "suggested_tool": {"type": "string", "enum": ["merge_concepts", "forget_concept", "annotate_node"],
                                       "description": "Which curation tool to use"},
                    "priority": {"type": "string", "enum": ["low", "medium", "high"]},
                },
            },
        },
    },
}

EPISTEMIC_OUTPUT = {
    "type": "object",
    "properties": {
        "action_type": {"type": "string", "enum": ["ask_user", "search_external", "clarify"]},
        "question": {"type": "string"},
        "target_nodes": {"type": "array", "items": UUID},
        "expected_entropy_reduction": {"type": "number"},
        "current_coherence": {"type": "number"},
    },
}

SCRATCHPAD_OUTPUT = {
    "type": "object",
    "properties": {
        "scratchpad_id": UUID,
        "items_count": {"type": "integer"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "content": {"type": "string"},
                    "delta_s": {"type": "number", "description": "Surprise score when stored"},
                    "created_at": {"type": "string", "format": "date-time"},
                    "tags": STRINGS,
                },
            },
        },
        "ttl_minutes": {"type": "integer", "description": "Time until auto-clear (default: 60)"},
    },
}

ACTOR = {"type": "object", "properties": {"type": {"type": "string", "enum": ["agent", "system", "user"]},
                                          "id": {"type": "string"}}}
LINEAGE_OUTPUT = {
    "type": "object",
    "properties": {
        "node_id": UUID,
        "current_content": {"type": "string"},
        "deleted": {"type": "boolean", "description": "Whether the node is deleted or forgotten now"},
        "lineage": {
            "type": "array",
            "description": "The node's changes, newest first",
            "items": {
                "type": "object",
                "properties": {
                    "timestamp": {"type": "string", "format": "date-time"},
                    "change_type": {"type": "string", "enum": list(LINEAGE_CHANGE_TYPES)},
                    "action": {"type": "string", "enum": list(Event.Action.values),
                               "description": "Engram's own name of the change"},
                    "actor": ACTOR,
                    "description": {"type": "string"},
                    "diffs": {"type": "object", "description": "Each changed field's before and after (content only "
                                                               "with include_content_diffs)",
                              "additionalProperties": {"type": "object", "properties": {"before": {}, "after": {}}}},
                    "reversal_hash": {"type": ["string", "null"], "description": "For restore_from_hash"},
                },
            },
        },
        "merged_from": {"type": "array", "items": UUID, "description": "Nodes that were merged into this one"},
        "forked_to": {"type": "array", "items": UUID,
                      "description": "Nodes made from this one (merged into, or derived from it)"},
        "total_changes": {"type": "integer"},
    },
}

LOGS_OUTPUT = {
    "type": "object",
    "properties": {
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "timestamp": {"type": "string", "format": "date-time"},
                    "action": {"type": "string", "enum": list(LOG_ENTRY_ACTIONS)},
                    "node_ids": {"type": "array", "items": UUID},
                    "reason": {"type": "string"},
                    "details": {"type": "string"},
                    "actor": ACTOR,
                    "recoverable": {"type": "boolean", "description": "Can this action be undone?"},
                    "recovery_tool": {"type": ["string", "null"], "description": "Which tool undoes it"},
                },
            },
        },
        "explanation_for_user": {"type": "string", "description": "What happened, to tell the user"},
        "since": {"type": "string", "format": "date-time"},
    },
}

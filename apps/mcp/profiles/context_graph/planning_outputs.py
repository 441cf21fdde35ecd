"""The output schemas of Context Graph's planning group: the seed's for generate_search_plan, debug_compare_retrieval
and test_recall_accuracy, as it writes them (debug_compare_retrieval's NodeSummary in ``$defs``), and Engram's own
for reflect_on_memory, which the seed does not define. Answers carry more than the seed lists (a ``method``, the run's
id and progress); the seed's schemas leave extra properties open."""
from __future__ import annotations

from apps.mcp.profiles.context_graph.outputs import output_schema

QUERY_TYPE = {"type": "string", "enum": ["semantic", "causal", "code", "temporal", "hierarchical"]}

GENERATE_SEARCH_PLAN_OUTPUT = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Optimized search query"},
                    "type": QUERY_TYPE,
                    "rationale": {"type": "string", "description": "Why this query targets different results"},
                    "expected_recall": {"type": "number", "description": "Estimated coverage (0-1)"},
                },
            },
        },
        "execution_strategy": {
            "type": "string",
            "enum": ["parallel", "sequential", "cascade"],
            "description": "parallel=run all at once, sequential=if first fails try next, cascade=combine results",
        },
        "token_estimate": {"type": "integer", "description": "Estimated tokens for all queries combined"},
    },
}

_NODES = {"type": "array", "items": {"$ref": "#/definitions/NodeSummary"}}
DEBUG_COMPARE_OUTPUT = output_schema({
    "type": "object",
    "properties": {
        "results": {
            "type": "object",
            "properties": {"cosine_baseline": _NODES, "fuse_moe": _NODES, "causal_pathfinding": _NODES},
        },
        "metrics": {
            "type": "object",
            "properties": {
                "precision": {"type": "object", "description": "Precision per method if ground_truth provided"},
                "recall": {"type": "object", "description": "Recall per method if ground_truth provided"},
                "overlap": {"type": "number",
                            "description": "% overlap between methods (high=redundant, low=complementary)"},
                "latency_ms": {"type": "object", "description": "Latency per method"},
            },
        },
        "recommendation": {"type": "string", "description": "Which method performed best for this query type"},
    },
})

TEST_RECALL_OUTPUT = {
    "type": "object",
    "properties": {
        "fuse_moe_accuracy": {"type": "number", "description": "0-1: FuseMoE retrieval accuracy"},
        "baseline_accuracy": {"type": "number", "description": "0-1: Baseline model accuracy"},
        "improvement_percent": {"type": "number", "description": "% improvement over baseline"},
        "p95_latency_ms": {"type": "integer"},
        "test_details": {
            "type": "object",
            "properties": {
                "needles_found": {"type": "integer"},
                "false_positives": {"type": "integer"},
                "semantic_drift": {"type": "number", "description": "Avg distance from expected result"},
            },
        },
        "recommendation": {"type": "string", "description": "System health assessment"},
    },
}

_NUMBER = {"type": "number"}
REFLECT_OUTPUT = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "session_id": {"type": ["string", "null"], "description": "The session whose state was read (null: none yet)."},
        "utl": {
            "type": "object",
            "properties": {"entropy": _NUMBER, "coherence": _NUMBER, "learning_score": _NUMBER,
                           "interactions": {"type": "integer"}, "lifecycle_stage": {"type": "string"}},
            "required": ["entropy", "coherence", "learning_score", "interactions", "lifecycle_stage"],
        },
        "thresholds": {
            "type": "object",
            "properties": {"entropy_high": _NUMBER, "coherence_low": _NUMBER},
            "required": ["entropy_high", "coherence_low"],
        },
        "steps": {
            "type": "array",
            "description": "The next tools to call, in order, at most max_steps.",
            "items": {
                "type": "object",
                "properties": {
                    "step": {"type": "integer"},
                    "tool": {"type": "string"},
                    "arguments": {"type": "object", "description": "The tool's arguments, ready to send."},
                    "why": {"type": "string"},
                },
                "required": ["step", "tool", "arguments", "why"],
            },
        },
        "steps_left_out": {"type": "integer", "description": "Steps beyond max_steps."},
        "notes": {"type": "array", "items": {"type": "string"}},
        "method": {"type": "string"},
    },
    "required": ["goal", "session_id", "utl", "thresholds", "steps", "steps_left_out", "notes", "method"],
}

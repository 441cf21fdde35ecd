"""The output schemas of Context Graph's reasoning group: the seed's for find_causal_path and entailment_query, as it
writes them (find_causal_path's alternatives refer to its own ``#/properties/path``, which resolves inside the
schema), and Engram's own for expand_causal_path, which the seed only names (its paths are the seed's CausalPath, in
``$defs``). query_causal has none in the seed, and is published without one."""
from __future__ import annotations

from apps.mcp.profiles.context_graph.outputs import output_schema

UUID = {"type": "string", "format": "uuid"}

FIND_CAUSAL_PATH_OUTPUT = {
    "type": "object",
    "properties": {
        "path_found": {"type": "boolean"},
        "narrative": {
            "type": "string",
            "description": "Human-readable explanation of the relationship. Example: 'UserAuth generates JWT tokens, "
                           "which are validated by Middleware, which triggers RateLimiting on authentication "
                           "failures.'",
        },
        "path": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "node_id": UUID,
                    "node_name": {"type": "string"},
                    "edge_type": {"type": "string", "enum": ["causal", "semantic", "temporal", "hierarchical"]},
                    "edge_weight": {"type": "number"},
                },
            },
        },
        "hop_count": {"type": "integer"},
        "path_confidence": {"type": "number", "description": "Product of edge weights along path"},
        "alternative_paths": {
            "type": "array",
            "items": {"$ref": "#/properties/path"},
            "description": "Other valid paths (if include_alternatives=true)",
        },
    },
}

ENTAILMENT_OUTPUT = {
    "type": "object",
    "properties": {
        "ancestors": {"type": "array", "items": UUID},
        "descendants": {"type": "array", "items": UUID},
        "entailment_confidence": {"type": "number"},
    },
}

_CONCEPT = {
    "type": "object",
    "description": "The node the concept matched: by its id, or by meaning (match_score: retrieval's relevance).",
    "properties": {"node_id": UUID, "node_name": {"type": "string"}, "match_score": {"type": "number"},
                   "matched_by": {"type": "string", "enum": ["id", "meaning"]}},
    "required": ["node_id", "node_name", "match_score", "matched_by"],
}

EXPAND_OUTPUT = output_schema({
    "type": "object",
    "properties": {
        "concept": _CONCEPT,
        "direction": {"type": "string", "enum": ["effects", "causes", "both"]},
        "paths": {
            "type": "array",
            "items": {"$ref": "#/definitions/CausalPath"},
            "description": "Each reached node's best causal chain (highest product of weights), cause first, the "
                           "strongest first; direction says which way it was walked from the concept.",
        },
        "nodes_visited": {"type": "integer"},
        "truncated": {"type": "boolean", "description": "True when a bound on the walk's work stopped it early."},
        "method": {"type": "string"},
    },
    "required": ["concept", "direction", "paths", "nodes_visited", "truncated", "method"],
})

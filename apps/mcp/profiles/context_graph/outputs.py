"""The seed's outputSchemas, published as it writes them, with what they refer to but never define
(NodeSummary, EdgeSummary, ...) in their ``$defs``: the seed's ``#/definitions/X`` refs point there as
``#/$defs/X``, so that a client validating answers resolves every ref."""
from __future__ import annotations

import copy
from typing import Any

NODE_SUMMARY = {
    "type": "object",
    "properties": {
        "node_id": {"type": "string", "format": "uuid"},
        "content": {"type": "string"},
        "kind": {"type": "string"},
        "importance": {"type": "number"},
        "score": {"type": "number"},
    },
    "required": ["node_id", "content", "kind", "importance", "score"],
}
EDGE_SUMMARY = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "format": "uuid"},
        "target": {"type": "string", "format": "uuid"},
        "edge_type": {"type": "string"},
        "weight": {"type": "number"},
    },
    "required": ["source", "target", "edge_type", "weight"],
}
_UUIDS = {"type": "array", "items": {"type": "string", "format": "uuid"}}
_EDGES = {"type": "array", "items": {"$ref": "#/definitions/EdgeSummary"}}
# inject_context's bundles. The neighbourhood is get_neighborhood's answer; a causal path runs from a cause to an
# effect along causal links (strength: the product of their weights); an entailment cone is a node's IS-A
# neighbourhood over hierarchical links (source IS-A target), the more general nodes above it and the more specific
# below.
NEIGHBORHOOD = {
    "type": "object",
    "properties": {
        "nodes": {"type": "array", "items": {"$ref": "#/definitions/NodeSummary"}},
        "edges": _EDGES,
        "focal_point": _UUIDS,
    },
    "required": ["nodes", "edges", "focal_point"],
}
CAUSAL_PATH = {
    "type": "object",
    "properties": {"nodes": _UUIDS, "edges": _EDGES, "strength": {"type": "number"}, "narrative": {"type": "string"}},
    "required": ["nodes", "edges", "strength", "narrative"],
}
ENTAILMENT_CONE = {
    "type": "object",
    "properties": {"apex": {"type": "string", "format": "uuid"}, "ancestors": _UUIDS, "descendants": _UUIDS,
                   "depth": {"type": "integer"}, "edges": _EDGES},
    "required": ["apex", "ancestors", "descendants", "depth", "edges"],
}
DEFINITIONS = {"NodeSummary": NODE_SUMMARY, "EdgeSummary": EDGE_SUMMARY, "Neighborhood": NEIGHBORHOOD,
               "CausalPath": CAUSAL_PATH, "EntailmentCone": ENTAILMENT_CONE}


def output_schema(seed: dict[str, Any]) -> dict[str, Any]:
    """The seed's outputSchema with its refs rewritten to ``#/$defs/X`` and the definitions they use added."""
    used: set[str] = set()

    def rewrite(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/definitions/"):
                name = ref.rsplit("/", 1)[-1]
                used.add(name)
                node = {**node, "$ref": f"#/$defs/{name}"}
            return {key: rewrite(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    schema = rewrite(copy.deepcopy(seed))
    definitions: dict[str, Any] = {}
    while used - set(definitions):  # a definition may refer to others (a Neighborhood to NodeSummary)
        name = min(used - set(definitions))
        definitions[name] = rewrite(DEFINITIONS[name])
    return {**schema, "$defs": dict(sorted(definitions.items()))}

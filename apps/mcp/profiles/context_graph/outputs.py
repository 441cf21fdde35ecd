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
DEFINITIONS = {"NodeSummary": NODE_SUMMARY, "EdgeSummary": EDGE_SUMMARY}


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
    return {**schema, "$defs": {name: DEFINITIONS[name] for name in sorted(used)}}

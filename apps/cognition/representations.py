"""Context Graph's shapes of a node and an edge, shared by its edges (MCP, REST): NodeSummary {node_id, content,
kind, importance, score} and EdgeSummary {source, target, edge_type, weight}."""
from __future__ import annotations

from apps.memories.models import Memory


def node_summary(memory: Memory, score: float) -> dict:
    return {"node_id": str(memory.pk), "content": memory.content, "kind": memory.kind,
            "importance": round(memory.importance, 4), "score": round(float(score), 4)}


def edge_summary(source, target, edge_type: str, weight: float) -> dict:
    return {"source": str(source), "target": str(target), "edge_type": edge_type, "weight": round(weight, 4)}

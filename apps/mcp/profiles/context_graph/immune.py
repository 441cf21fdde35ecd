"""Context Graph's immune group: check_adversarial (the seed's schemas exactly) and critique_context (which the seed
only names: its arguments are issue 20's, its output schema Engram's, with the shapes it repeats in ``$defs``). The
adapters call apps/cognition/services/immune.py and critique.py."""
from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, Field, WithJsonSchema

from apps.accounts.models import User
from apps.cognition.limits import (
    CONTRADICTION_THRESHOLD, CONTRADICTION_THRESHOLD_DEFAULT, CRITIQUE_FOCAL_NODES, CRITIQUE_SUMMARY_MAX_CHARS,
    CRITIQUE_SUMMARY_MIN_CHARS, EMBEDDING_MAX_ITEMS, STORE_CONTENT_MAX_CHARS,
)
from apps.cognition.services.critique import KINDS, critique_context
from apps.cognition.services.immune import ATTACK_TYPES, DETECTORS, adversarial_check
from apps.core.threads import run_sync
from apps.mcp.auth import READ
from apps.mcp.profile import ToolSpec
from apps.mcp.schema import SnakeCaseSeedModel


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("must be a UUID, e.g. a node_id that search_graph returned") from None


NodeId = Annotated[str, AfterValidator(_uuid), WithJsonSchema({"type": "string", "format": "uuid"})]


class CheckAdversarialInput(SnakeCaseSeedModel):
    content: str = Field(max_length=STORE_CONTENT_MAX_CHARS)
    embedding: list[float] | None = Field(None, max_length=EMBEDDING_MAX_ITEMS,
                                          description="Optional pre-computed embedding")


class CritiqueContextInput(SnakeCaseSeedModel):
    reasoning_summary: str = Field(min_length=CRITIQUE_SUMMARY_MIN_CHARS, max_length=CRITIQUE_SUMMARY_MAX_CHARS,
                                   description="Your reasoning, in sentences: each is checked against your graph")
    focal_nodes: list[NodeId] | None = Field(None, max_length=CRITIQUE_FOCAL_NODES,
                                             description="Nodes to compare every sentence with, besides its nearest")
    contradiction_threshold: float | None = Field(
        CONTRADICTION_THRESHOLD_DEFAULT, **CONTRADICTION_THRESHOLD.schema(),
        description="A finding scoring this or more is reported as a contradiction")


# The seed's outputSchema, as it writes it.
CHECK_OUTPUT = {
    "type": "object",
    "properties": {
        "safe": {"type": "boolean"},
        "attack_type": {"type": "string", "enum": list(ATTACK_TYPES)},
        "confidence": {"type": "number"},
        "details": {"type": "string"},
    },
}
_UUID = {"type": "string", "format": "uuid"}
CRITIQUE_OUTPUT = {
    "type": "object",
    "properties": {
        "consistent": {"type": "boolean", "description": "No finding reached contradiction_threshold"},
        "contradictions": {"type": "array", "items": {"$ref": "#/$defs/Contradiction"}},
        "contradiction_count": {"type": "integer"},
        "below_threshold": {"type": "integer", "description": "Findings that scored under the threshold"},
        "contradiction_threshold": {"type": "number"},
        "sentences": {"type": "array", "items": {"$ref": "#/$defs/SentenceMatch"}},
        "method": {"type": "string"},
    },
    "required": ["consistent", "contradictions", "contradiction_count", "below_threshold", "contradiction_threshold",
                 "sentences", "method"],
    "$defs": {
        "Contradiction": {
            "type": "object",
            "properties": {
                "sentence_index": {"type": "integer"},
                "sentence": {"type": "string"},
                "kind": {"type": "string", "enum": list(KINDS)},
                "node_id": _UUID,
                "node_content": {"type": "string"},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "explanation": {"type": "string"},
                "evidence": {"type": "object"},
            },
            "required": ["sentence_index", "sentence", "kind", "node_id", "node_content", "score", "explanation"],
        },
        "SentenceMatch": {
            "type": "object",
            "properties": {
                "index": {"type": "integer"},
                "text": {"type": "string"},
                "nearest_nodes": {"type": "array", "items": {"type": "object", "properties": {
                    "node_id": _UUID, "similarity": {"type": "number"}}, "required": ["node_id", "similarity"]}},
            },
            "required": ["index", "text", "nearest_nodes"],
        },
    },
}


async def check_adversarial(actor: User, params: CheckAdversarialInput) -> dict[str, Any]:
    check = await run_sync(adversarial_check)(actor=actor, content=params.content, embedding=params.embedding)
    return check.as_dict()


async def critique(actor: User, params: CritiqueContextInput) -> dict[str, Any]:
    found = await run_sync(critique_context)(
        actor=actor, reasoning_summary=params.reasoning_summary,
        focal_nodes=list(params.focal_nodes) if params.focal_nodes is not None else None,
        contradiction_threshold=params.contradiction_threshold)
    return found.as_dict()


TOOLS = (
    ToolSpec(
        name="check_adversarial",
        description="Scan content for adversarial attacks before storage. Engram runs " + ", ".join(DETECTORS)
                    + " on your own graph: injection patterns (the matched span is quoted), the content's distance "
                    "from the centroid of your nodes (over 3 standard deviations, from 30 nodes), a given "
                    "embedding's cosine to the content's own (under 0.4), and causal claims that would close a "
                    "cycle of causal links. store_memory runs the same checks and quarantines an injection or an "
                    "anomaly. The answer also lists every finding and which checks ran.",
        input_model=CheckAdversarialInput, adapter=check_adversarial, scope=READ, output_schema=CHECK_OUTPUT,
    ),
    ToolSpec(
        name="critique_context",
        description="Fact-check your reasoning against the graph: each sentence of reasoning_summary is compared "
                    "with its nearest nodes (and focal_nodes). A contradiction is a negation or a number, version or "
                    "date clash, a node carrying a correction note, a superseded decision, or a causal claim the "
                    "graph links the other way; each scores 0-1 and those at contradiction_threshold or above are "
                    "reported with the conflicting node. Rules, not a language model.",
        input_model=CritiqueContextInput, adapter=critique, scope=READ, output_schema=CRITIQUE_OUTPUT,
    ),
)

"""Context Graph's context tools: inject_context (the seed's schema) and hydrate_citation (the seed names it; its
arguments as issue 19 gives them), with their output schemas (outputs.py defines what the seed's refers to but
never defines: CausalPath, EntailmentCone, Neighborhood)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from apps.accounts.models import User
from apps.cognition.limits import (
    CITATION_HEX, CITATIONS_PER_CALL, CONTEXT_POOL, CONTEXT_QUERY_CHARS, CONTEXT_TOKENS, VERBOSITY, ContextMetadata,
    DistillationMode, Priority,
)
from apps.cognition.selectors.citations import citation_hydrate
from apps.cognition.services.context import context_inject
from apps.core.threads import run_sync
from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import ToolSpec
from apps.mcp.profiles.context_graph.outputs import output_schema
from apps.mcp.schema import SnakeCaseSeedModel, given
from apps.memories.models import MemoryLink



def _not_boolean(value):
    # JSON true would pass as the literal 1 (True == 1 in Python): a verbosity is a number.
    if isinstance(value, bool):
        raise ValueError(f"use a whole number {VERBOSITY}, not {str(value).lower()}")
    return value


Verbosity = Annotated[Literal[tuple(range(VERBOSITY.low, VERBOSITY.high + 1))], BeforeValidator(_not_boolean)]
CitationTag = Annotated[str, StringConstraints(pattern=r"^\[?node_[0-9a-fA-F]{%d}\]?$" % CITATION_HEX)]


class InjectContextInput(SnakeCaseSeedModel):
    query: str = Field(min_length=1, max_length=CONTEXT_QUERY_CHARS,
                       description="Natural language query for context retrieval")
    max_tokens: int | None = Field(CONTEXT_TOKENS.default, **CONTEXT_TOKENS.schema(),
                                   description="Maximum tokens to return")
    session_id: str | None = Field(None, json_schema_extra={"format": "uuid"},
                                   description="Session identifier for continuity")
    priority: Literal[tuple(Priority.values)] | None = Priority.NORMAL.value
    distillation_mode: Literal[tuple(DistillationMode.values)] | None = Field(
        DistillationMode.AUTO.value,
        description="TOKEN ECONOMY: How to compress retrieved context. auto=system chooses based on token count, "
                    "raw=no compression, narrative=prose summary, structured=bullet points with refs, "
                    "code_focused=preserve code blocks verbatim")
    include_metadata: list[Literal[tuple(ContextMetadata.values)]] | None = Field(
        [],
        description="PRE-EMPTIVE BUNDLING: Request mini-graph in one round trip. Reduces follow-up tool calls by 2-3 "
                    "seconds. causal_links=cause-effect paths, entailment_cones=IS-A hierarchy, neighborhood=2-hop "
                    "graph, conflicts=semantic conflicts")
    verbosity_level: Verbosity | None = Field(
        VERBOSITY.default,
        description="TOKEN ECONOMY: 0=raw text only (~100 tokens), 1=text + key IDs (~200 tokens, DEFAULT), 2=full "
                    "Bio-Nervous insights (~800 tokens). Use Level 2 ONLY when delta_c < 0.4 (low coherence).")


class HydrateCitationInput(SnakeCaseSeedModel):
    citation_tags: list[CitationTag] = Field(
        min_length=CITATIONS_PER_CALL.low, max_length=CITATIONS_PER_CALL.high,
        description="Citation tags from inject_context's text, e.g. \"[node_0123456789ab]\" (brackets optional)")
    include_neighbors: bool | None = Field(False, description="Also list the nodes linked to each, either direction")
    verbosity_level: Verbosity | None = Field(
        VERBOSITY.default,
        description="0=the raw content and node id, 1=also kind, cube, dates, importance, tags (DEFAULT), 2=also "
                    "strength, salience, access, Context Graph's profile and annotations")


async def inject_context(actor: User, params: InjectContextInput) -> dict[str, Any]:
    injected = await run_sync(context_inject)(actor=actor, query=params.query, **given(
        max_tokens=params.max_tokens, session_id=params.session_id, priority=params.priority,
        distillation_mode=params.distillation_mode, include_metadata=params.include_metadata,
        verbosity_level=params.verbosity_level))
    return injected.as_dict()


async def hydrate_citation(actor: User, params: HydrateCitationInput) -> dict[str, Any]:
    expansions = await run_sync(citation_hydrate)(actor=actor, citation_tags=list(params.citation_tags), **given(
        include_neighbors=params.include_neighbors, verbosity_level=params.verbosity_level))
    return {"expansions": expansions}


# --- output schemas ----------------------------------------------------------------------------------------------

UUID = {"type": "string", "format": "uuid"}
NUMBER, TEXT = {"type": "number"}, {"type": "string"}


def _object(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _list_of(items: dict) -> dict:
    return {"type": "array", "items": items}


# The seed's outputSchema of inject_context, as it writes it.
INJECT_CONTEXT_OUTPUT = {
    "type": "object",
    "properties": {
        "context": {"type": "string"},
        "tokens_used": {"type": "integer"},
        "tokens_before_distillation": {
            "type": "integer",
            "description": "Raw token count before compression (for transparency)",
        },
        "distillation_applied": {"type": "string", "enum": ["none", "narrative", "structured", "code_focused"]},
        "compression_ratio": {"type": "number", "description": "0-1: ratio of tokens saved via distillation"},
        "nodes_retrieved": {"type": "array", "items": {"type": "string", "format": "uuid"}},
        "utl_metrics": {
            "type": "object",
            "properties": {
                "entropy": {"type": "number"},
                "coherence": {"type": "number"},
                "learning_score": {"type": "number"},
            },
        },
        "latency_ms": {"type": "integer"},
        "bundled_metadata": {
            "type": "object",
            "description": "Pre-emptive context bundle (if requested via include_metadata)",
            "properties": {
                "causal_links": {"type": "array", "items": {"$ref": "#/definitions/CausalPath"}},
                "entailment_cones": {"type": "array", "items": {"$ref": "#/definitions/EntailmentCone"}},
                "neighborhood": {"$ref": "#/definitions/Neighborhood"},
            },
        },
        "conflict_alert": {
            "type": "object",
            "description": ("SEMANTIC CONFLICT DETECTION: Flagged when retrieved nodes have high cosine "
                            "similarity but low causal coherence"),
            "properties": {
                "has_conflict": {"type": "boolean"},
                "conflicting_nodes": {"type": "array", "items": {"type": "string", "format": "uuid"}},
                "topic": {"type": "string"},
                "message": {
                    "type": "string",
                    "description": ("e.g., 'Warning: Found conflicting memories about [Library X version]. "
                                    "Consider merge_concepts or ask user.'"),
                },
                "suggested_action": {"type": "string", "enum": ["merge_concepts", "ask_user", "ignore"]},
            },
        },
        "tool_gating_warning": {
            "type": "object",
            "description": ("TOOL GATING: Forces optimal tool usage when entropy is high. If entropy > 0.8, "
                            "retrieval quality is degraded."),
            "properties": {
                "triggered": {"type": "boolean", "description": "True when utl_metrics.entropy > 0.8"},
                "entropy_score": {"type": "number", "description": "Current entropy value that triggered warning"},
                "message": {
                    "type": "string",
                    "description": ("Warning text: 'Retrieval quality may be low due to high entropy (0.XX). "
                                    "Suggest calling generate_search_plan or epistemic_action first to reduce "
                                    "entropy before retrying.'"),
                },
                "suggested_tools": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "enum": ["generate_search_plan", "epistemic_action", "expand_causal_path"],
                    },
                    "description": ("Tools that reduce entropy: generate_search_plan (refines query), "
                                    "epistemic_action (explores unknown), expand_causal_path (finds "
                                    "connections)"),
                },
                "auto_retry_after": {
                    "type": "boolean",
                    "default": False,
                    "description": "If true, system will auto-retry inject_context after agent calls suggested tool",
                },
            },
        },
    },
}


HYDRATE_CITATION_OUTPUT = _object({"expansions": _list_of(_object({
    "citation_tag": TEXT,
    "raw_content": TEXT,
    "metadata": {**_object({"node_id": UUID}), "description": "More of the node the higher verbosity_level is"},
    "neighbours": _list_of(_object({
        "node_id": UUID, "citation_tag": TEXT, "content": TEXT, "kind": TEXT,
        "edge_type": {"type": "string", "enum": list(MemoryLink.LinkType.values)}, "weight": NUMBER,
        "direction": {"type": "string", "enum": ["outgoing", "incoming"]},
    })),
}))})

POOLS = ", ".join(f"{priority} {size}" for priority, size in CONTEXT_POOL.items())
TOOLS = (
    ToolSpec(
        name="inject_context",
        description="Inject relevant context from the knowledge graph into the conversation. Auto-distills when >2048 "
                    f"tokens unless overridden. priority sizes the retrieval ({POOLS} memories, plus as many linked "
                    "neighbours); max_tokens is counted with the embedding model's tokenizer and never exceeded; "
                    "distillation is extractive (the sentences closest to the query); each passage cites its node "
                    "as [node_<12 hex>] (verbosity_level >= 1), which hydrate_citation expands. Answers also carry "
                    "session_id.",
        input_model=InjectContextInput,
        adapter=inject_context,
        scope=WRITE,
        output_schema=output_schema(INJECT_CONTEXT_OUTPUT),
    ),
    ToolSpec(
        name="hydrate_citation",
        description="Expand any citation tag to see raw source content: the nodes behind inject_context's "
                    "[node_<12 hex>] tags, with their metadata by verbosity_level and, with include_neighbors, the "
                    "nodes linked to them.",
        input_model=HydrateCitationInput,
        adapter=hydrate_citation,
        scope=READ,
        output_schema=HYDRATE_CITATION_OUTPUT,
    ),
)

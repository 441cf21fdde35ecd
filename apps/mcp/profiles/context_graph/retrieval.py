"""Context Graph's storage and navigation tools: store_memory, search_graph, get_neighborhood and
get_recent_context. Input models are the seed's schemas (store_memory's without its top-level oneOf, which clients
refuse: the service enforces the three forms of content), plus the lower bounds Engram adds where the seed has
none; each adapter calls one service or selector of apps/cognition."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from apps.accounts.models import User
from apps.cognition.limits import (
    NEIGHBORHOOD_HOPS, NEIGHBORHOOD_NODES, RATIONALE_MAX_CHARS, RATIONALE_MIN_CHARS, RECENT_LIMIT,
    RECENT_LOOKBACK_MINUTES, SEARCH_TOP_K, STORE_CONTENT_MAX_CHARS,
)
from apps.cognition.representations import edge_summary, node_summary
from apps.cognition.selectors.graph import node_neighborhood, node_recent
from apps.cognition.services.search import node_search
from apps.cognition.services.store import EMBEDDED_FROM_RATIONALE, node_store
from apps.core.aliases import Aliases
from apps.core.limits import UNIT
from apps.core.threads import run_sync
from apps.core.timestamps import iso_timestamp
from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import ToolSpec
from apps.mcp.profiles.context_graph.outputs import output_schema
from apps.mcp.schema import SnakeCaseSeedModel
from apps.memories.validation import MAX_QUERY_CHARS

Uuid = Annotated[str, WithJsonSchema({"type": "string", "format": "uuid"})]
DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Metadata = Annotated[dict[str, Any], WithJsonSchema({"type": "object"})]
ModalityName = Literal["text", "image", "audio", "video"]
DomainName = Literal["code", "medical", "legal", "creative", "research", "general"]
JohariName = Literal["open", "blind", "hidden", "unknown"]


class StoreMemoryInput(SnakeCaseSeedModel):
    content: str | None = Field(None, min_length=1, max_length=STORE_CONTENT_MAX_CHARS,
                                description="Text content to store. For multi-modal, provide content_base64 or "
                                            "data_uri instead.")
    content_base64: str | None = Field(None, description="MULTI-MODAL: Base64-encoded binary content (images, "
                                                         "audio). Mutually exclusive with 'content'. Max 10MB decoded.")
    data_uri: str | None = Field(None, pattern=r"^data:[^;]+;base64,",
                                 description="MULTI-MODAL: Data URI with embedded content (e.g., "
                                             "'data:image/png;base64,...'). Auto-extracts modality from MIME type.")
    modality: ModalityName | None = Field("text", description="MULTI-MODAL SENSING: Content type. Images processed "
                                                              "via CLIP/SigLIP into 1536D embedding space. Audio via "
                                                              "Whisper ASR + text embedding.")
    importance: float | None = Field(0.5, **UNIT.schema())
    rationale: str = Field(min_length=RATIONALE_MIN_CHARS, max_length=RATIONALE_MAX_CHARS,
                           description="REQUIRED: Explain WHY this knowledge is worth storing. Prevents graph bloat "
                                       "and aids future retrieval. Example: 'User's preferred coding style for this "
                                       "project' or 'Critical security constraint discovered during debugging'")
    metadata: Metadata | None = Field(None, description="Additional metadata. For multi-modal: auto-populated with "
                                                        "extracted_features, dimensions, duration, etc.")
    link_to: list[Uuid] | None = None


class SearchFilters(SnakeCaseSeedModel):
    min_importance: float | None = Field(None, **UNIT.schema())
    johari_quadrants: list[JohariName] | None = None
    created_after: DateTime | None = None


class PerspectiveLock(SnakeCaseSeedModel):
    domain: DomainName | None = Field(None, description="Only retrieve nodes from this domain")
    agent_ids: list[str] | None = Field(None, description="Only retrieve nodes created by these agents")
    exclude_agent_ids: list[str] | None = Field(None, description="Exclude nodes from these agents")


class SearchGraphInput(SnakeCaseSeedModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    top_k: int | None = Field(SEARCH_TOP_K.default, **SEARCH_TOP_K.schema())
    filters: SearchFilters | None = None
    perspective_lock: PerspectiveLock | None = Field(
        None, description="MULTI-AGENT SAFETY: Filter results to nodes compatible with your perspective. Prevents "
                          "'memetic interference' where coding agents retrieve creative writing memories.")


class GetNeighborhoodInput(SnakeCaseSeedModel):
    session_id: Uuid | None = None
    focal_node_id: Uuid | None = Field(None, description="Optional: center on specific node instead of session context")
    max_hops: int | None = Field(NEIGHBORHOOD_HOPS.default, **NEIGHBORHOOD_HOPS.schema())
    max_nodes: int | None = Field(NEIGHBORHOOD_NODES.default, **NEIGHBORHOOD_NODES.schema())
    include_edges: bool | None = True


class GetRecentContextInput(SnakeCaseSeedModel):
    session_id: Uuid | None = None
    lookback_minutes: int | None = Field(RECENT_LOOKBACK_MINUTES.default, **RECENT_LOOKBACK_MINUTES.schema())
    limit: int | None = Field(RECENT_LIMIT.default, **RECENT_LIMIT.schema())
    sort_by: Literal["recency", "importance", "access_count"] | None = "recency"


# The services' argument names -> the tools', where they differ: errors name what the caller sent.
STORE_ALIASES = Aliases({"target_ids": "link_to", "agent_id": "metadata.agent_id"})
SEARCH_ALIASES = Aliases({
    "text": "query", "limit": "top_k", "min_importance": "filters.min_importance",
    "johari_quadrants": "filters.johari_quadrants", "created_after": "filters.created_after",
    "domain": "perspective_lock.domain", "agent_ids": "perspective_lock.agent_ids",
    "exclude_agent_ids": "perspective_lock.exclude_agent_ids",
})
NEIGHBORHOOD_ALIASES = Aliases({"memory_id": "focal_node_id"})


async def store_memory(actor: User, params: StoreMemoryInput) -> dict[str, Any]:
    # The seed's modality defaults to text; only one the caller gave can contradict the content's form.
    modality = params.modality if "modality" in params.model_fields_set else None
    stored = await run_sync(node_store)(
        actor=actor, rationale=params.rationale, content=params.content, content_base64=params.content_base64,
        data_uri=params.data_uri, modality=modality, importance=params.importance, metadata=params.metadata,
        link_to=params.link_to,
    )
    data: dict[str, Any] = {
        "success": True,
        "node_id": str(stored.memory.pk),
        "steering_reward": stored.reward.as_dict(),
        "session_id": str(stored.session.pk),
        "modality": stored.profile.modality,
        "delta_s": round(stored.delta_s, 4),
        "links_created": stored.links_created,
        "linked_to": stored.linked_to,
        "embedded_from": stored.embedded_from,
    }
    if stored.embedded_from == EMBEDDED_FROM_RATIONALE:
        data["extracted_features"] = stored.features
        data["note"] = ("No model reads images or audio here: the node's embedding came from its rationale and "
                        "metadata, and extracted_features holds only what the file's header says.")
    if stored.near_duplicate_of:
        data["near_duplicate_of"] = stored.near_duplicate_of
        data["curation_task_id"] = str(stored.merge_task.pk) if stored.merge_task else None
    if stored.quarantined:  # stored, but out of retrieval until reviewed: the agent should know why
        data["quarantined"] = True
        data["adversarial"] = stored.adversarial.as_dict()
    return data


async def search_graph(actor: User, params: SearchGraphInput) -> dict[str, Any]:
    filters, lock = params.filters, params.perspective_lock
    found = await run_sync(node_search)(
        actor=actor, query=params.query, top_k=params.top_k,
        min_importance=filters.min_importance if filters else None,
        johari_quadrants=filters.johari_quadrants if filters else None,
        created_after=filters.created_after if filters else None,
        domain=lock.domain if lock else None, agent_ids=lock.agent_ids if lock else None,
        exclude_agent_ids=lock.exclude_agent_ids if lock else None,
    )
    return {"results": [node_summary(item.memory, item.score) for item in found.items],
            "session_id": str(found.session.pk), "neuromodulation": found.levels.applied()}


async def get_neighborhood(actor: User, params: GetNeighborhoodInput) -> dict[str, Any]:
    found = await run_sync(node_neighborhood)(
        actor=actor, session_id=params.session_id, focal_node_id=params.focal_node_id, max_hops=params.max_hops,
        max_nodes=params.max_nodes, include_edges=params.include_edges is not False,
    )
    data: dict[str, Any] = {"nodes": [node_summary(memory, score) for memory, score in found.nodes],
                            "edges": [edge_summary(*edge) for edge in found.edges], "focal_point": found.focal_point}
    if found.note:
        data["note"] = found.note
    return data


async def get_recent_context(actor: User, params: GetRecentContextInput) -> dict[str, Any]:
    found = await run_sync(node_recent)(
        actor=actor, session_id=params.session_id, lookback_minutes=params.lookback_minutes, limit=params.limit,
        sort_by=params.sort_by,
    )
    return {"nodes": [node_summary(memory, score) for memory, score in found.nodes],
            "time_range": {"from": iso_timestamp(found.since), "to": iso_timestamp(found.until)}}


NODE_LIST = {"type": "array", "items": {"$ref": "#/definitions/NodeSummary"}}
NEIGHBORHOOD_OUTPUT = output_schema({"type": "object", "properties": {
    "nodes": NODE_LIST,
    "edges": {"type": "array", "items": {"$ref": "#/definitions/EdgeSummary"}},
    "focal_point": {"type": "array", "items": {"type": "string", "format": "uuid"}},
}})
RECENT_OUTPUT = output_schema({"type": "object", "properties": {
    "nodes": NODE_LIST,
    "time_range": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}},
}})

TOOLS = (
    ToolSpec(
        name="store_memory",
        description="Store new knowledge in the graph. Supports TEXT and MULTI-MODAL (images/audio). IMPORTANT: "
                    "Always include rationale explaining WHY this knowledge matters. Engram: give exactly one of "
                    "content, content_base64 (with modality image, audio or video) or data_uri. Text up to 65,536 "
                    "characters is embedded whole (past the model's window, as the mean of its windows). No CLIP or "
                    "Whisper runs here: binary content (at most 10 MB) is kept as a file and embedded from the "
                    "rationale and metadata; metadata.extracted_features holds only what its header says (MIME "
                    "type, byte size, image width and height, WAV duration). metadata.domain (code, medical, legal, "
                    "creative, research, general: the default), metadata.source and metadata.agent_id go to the "
                    "node's profile, for search_graph's perspective_lock. link_to links the node to yours. "
                    "steering_reward.dopamine_signal = clamp(base - penalties, -1, 1): base = ls x delta S + lc x "
                    "coherence with (ls, lc) 0.7/0.3 in infancy, 0.5/0.5 in growth, 0.3/0.7 in maturity; minus "
                    "0.4 for a near-duplicate (cosine >= 0.90 to one of your live nodes, which also opens a "
                    "potential_merge task), 0.3 when cos(rationale, content) < 0.2, 0.5 for a rationale of fewer "
                    "than 3 content words. Its rationale names each term; behavioral_hint follows the largest "
                    "penalty, or the stage when none applies.",
        input_model=StoreMemoryInput,
        adapter=store_memory,
        scope=WRITE,
        aliases=STORE_ALIASES,
    ),
    ToolSpec(
        name="search_graph",
        description="Search the knowledge graph using vector similarity. Use perspective_lock to prevent "
                    "cross-agent contamination. Engram: the memory core's fused retrieval (vector, full-text and "
                    "graph signals); score is its composite score. Nodes stored through other profiles count as "
                    "domain general and Johari quadrant open. The query is recorded in your latest session.",
        input_model=SearchGraphInput,
        adapter=search_graph,
        scope=READ,
        aliases=SEARCH_ALIASES,
    ),
    ToolSpec(
        name="get_neighborhood",
        description="Semantic navigation: Browse local graph topology around current context. For associative "
                    "leap-frogging without explicit query. Engram: best-first over links in both directions from "
                    "focal_node_id, or else from the nodes your session's latest search or store activated; a "
                    "node's score is the best product of link weights along a path to it (1 for a focal node).",
        input_model=GetNeighborhoodInput,
        adapter=get_neighborhood,
        scope=READ,
        aliases=NEIGHBORHOOD_ALIASES,
        output_schema=NEIGHBORHOOD_OUTPUT,
    ),
    ToolSpec(
        name="get_recent_context",
        description="Temporal navigation: Get recently accessed/modified nodes. Useful when agent doesn't know what "
                    "to search for. Engram: nodes retrieved or changed in the last lookback_minutes (with "
                    "session_id, only those that session's searches and stores activated); score is the node's "
                    "recency in the window (1 = just now).",
        input_model=GetRecentContextInput,
        adapter=get_recent_context,
        scope=READ,
        output_schema=RECENT_OUTPUT,
    ),
)

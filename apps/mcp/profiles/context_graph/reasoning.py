"""Context Graph's reasoning group: query_causal, find_causal_path, expand_causal_path and entailment_query, over the
caller's directed causal and hierarchical links (apps/cognition/services/causal.py, selectors/entailment.py).

Input models are the seed's schemas (expand_causal_path, which the seed only names, takes issue 20's arguments);
output schemas are in reasoning_outputs.py. A concept given as text that matches none of the caller's nodes is
-32003 with the nearest names (envelope.py)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.accounts.models import User
from apps.cognition.causal_answers import (
    causal_expansion_answer, causal_path_answer, causal_query_answer, entailment_answer,
)
from apps.cognition.limits import (
    CAUSAL_ALTERNATIVES, CAUSAL_PATH_HOPS, CONCEPT_CANDIDATES, CONCEPT_MIN_SIMILARITY, ENTAILMENT_DEPTH, EXPAND_HOPS,
    EXPAND_MIN_WEIGHT, EXPAND_MIN_WEIGHT_DEFAULT, REASONING_MAX_NODES,
)
from apps.cognition.selectors.entailment import node_entailment
from apps.cognition.services.causal import causal_expand, causal_path_find, causal_query
from apps.core.threads import run_sync
from apps.mcp.auth import READ
from apps.mcp.profile import ToolSpec
from apps.mcp.profiles.context_graph.reasoning_outputs import (
    ENTAILMENT_OUTPUT, EXPAND_OUTPUT, FIND_CAUSAL_PATH_OUTPUT,
)
from apps.mcp.profiles.context_graph.status import UUID_FORMAT, UuidText
from apps.mcp.schema import SnakeCaseSeedModel
from apps.memories.validation import MAX_QUERY_CHARS

CONCEPT_TEXT = (f"A concept given in words is matched to your own nodes by retrieval (meaning and words: the most "
                f"relevant of the best {CONCEPT_CANDIDATES} that shares a word or has cosine >= "
                f"{CONCEPT_MIN_SIMILARITY}); a node_id is taken as it is. No match: error -32003 with the nearest "
                "names.")
BOUNDS = (f"A walk reads one hop of links per query and stops at {REASONING_MAX_NODES} nodes (truncated says so); "
          f"only your live nodes and those shared with you are reached.")


# --- input models ------------------------------------------------------------------------------------------------

class QueryCausalInput(SnakeCaseSeedModel):
    action: str = Field(max_length=MAX_QUERY_CHARS)
    outcome: str | None = Field(None, max_length=MAX_QUERY_CHARS)
    intervention_type: Literal["do", "observe", "counterfactual"] | None = None


class FindCausalPathInput(SnakeCaseSeedModel):
    start_concept: str = Field(max_length=MAX_QUERY_CHARS, description="Starting concept name or node_id. Can be "
                                                                       "fuzzy—system will find best match.")
    end_concept: str = Field(max_length=MAX_QUERY_CHARS, description="Target concept name or node_id. Can be "
                                                                     "fuzzy—system will find best match.")
    max_hops: int | None = Field(CAUSAL_PATH_HOPS.default, **CAUSAL_PATH_HOPS.schema(),
                                 description="Maximum graph edges to traverse")
    path_type: Literal["causal", "semantic", "any"] | None = Field(
        "any", description="Prefer causal edges, semantic edges, or any connection")
    include_alternatives: bool | None = Field(False, description="Return multiple paths if they exist")


class ExpandCausalPathInput(SnakeCaseSeedModel):
    concept: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                         description="Where to start: a concept's name or words (matched to your nodes by meaning) or "
                                     "a node_id.")
    direction: Literal["effects", "causes", "both"] | None = Field(
        "effects", description="effects: what the concept leads to, along causal links; causes: what leads to it, "
                               "against them; both: each.")
    max_hops: int | None = Field(EXPAND_HOPS.default, **EXPAND_HOPS.schema(),
                                 description="Most causal links in a chain")
    min_weight: float | None = Field(EXPAND_MIN_WEIGHT_DEFAULT, **EXPAND_MIN_WEIGHT.schema(),
                                     description="Causal links weaker than this are not followed")


class EntailmentQueryInput(SnakeCaseSeedModel):
    node_id: UuidText = Field(json_schema_extra=UUID_FORMAT)
    direction: Literal["ancestors", "descendants", "both"] | None = "both"
    max_depth: int | None = Field(ENTAILMENT_DEPTH.default, **ENTAILMENT_DEPTH.schema())


# --- adapters ----------------------------------------------------------------------------------------------------

async def query_causal(actor: User, params: QueryCausalInput) -> dict[str, Any]:
    return causal_query_answer(await run_sync(causal_query)(
        actor=actor, action=params.action, outcome=params.outcome, intervention_type=params.intervention_type))


async def find_causal_path(actor: User, params: FindCausalPathInput) -> dict[str, Any]:
    found = await run_sync(causal_path_find)(
        actor=actor, start_concept=params.start_concept, end_concept=params.end_concept, max_hops=params.max_hops,
        path_type=params.path_type, include_alternatives=params.include_alternatives)
    return causal_path_answer(found, include_alternatives=bool(params.include_alternatives))


async def expand_causal_path(actor: User, params: ExpandCausalPathInput) -> dict[str, Any]:
    return causal_expansion_answer(await run_sync(causal_expand)(
        actor=actor, concept=params.concept, direction=params.direction, max_hops=params.max_hops,
        min_weight=params.min_weight))


async def entailment_query(actor: User, params: EntailmentQueryInput) -> dict[str, Any]:
    return entailment_answer(await run_sync(node_entailment)(
        actor=actor, node_id=params.node_id, direction=params.direction, max_depth=params.max_depth))


TOOLS = (
    ToolSpec(
        name="query_causal",
        description="Query causal relationships in the graph. Engram, over your directed causal links (cause -> "
                    "effect, weighted): intervention_type do (the default) cuts the action's own causes and lists "
                    "its effects, effect_strength = the best product of weights along a path; observe lists what is "
                    "associated with it both ways (its causes, its effects, and nodes sharing a cause with it); "
                    "counterfactual lists the effects that lose all support without it (still_supported: those "
                    "another cause still reaches). With outcome, the answer is about that node alone. "
                    + CONCEPT_TEXT + " " + BOUNDS,
        input_model=QueryCausalInput, adapter=query_causal, scope=READ,
    ),
    ToolSpec(
        name="find_causal_path",
        description="MULTI-HOP REASONING: Instead of manually browsing get_neighborhood, ask for direct path between "
                    "two concepts. Returns narrative chain showing how concepts relate through the graph. Saves 3-5 "
                    "tool calls of manual graph traversal. Engram: the path with the highest product of link "
                    "weights (path_confidence) of at most max_hops links (Dijkstra on -log weight); causal links "
                    "are followed only from cause to effect, other links either way; path_type causal or semantic "
                    "keeps only those links. Each path entry but the last carries the link to the next node. "
                    f"include_alternatives adds the next {CAUSAL_ALTERNATIVES} best loopless paths (Yen's "
                    "algorithm). " + CONCEPT_TEXT + " " + BOUNDS,
        input_model=FindCausalPathInput, adapter=find_causal_path, scope=READ, output_schema=FIND_CAUSAL_PATH_OUTPUT,
    ),
    ToolSpec(
        name="expand_causal_path",
        description="Finds connections: the causal chains from a concept (its effects), to it (its causes) or both, "
                    "best first along directed causal links of at least min_weight, at most max_hops links; each "
                    "reached node's best chain, cause first, with strength = the product of its weights and a "
                    "narrative. " + CONCEPT_TEXT + " " + BOUNDS,
        input_model=ExpandCausalPathInput, adapter=expand_causal_path, scope=READ, output_schema=EXPAND_OUTPUT,
    ),
    ToolSpec(
        name="entailment_query",
        description="Query hierarchical relationships using hyperbolic entailment cones. Engram computes no "
                    "hyperbolic embedding: the cone is the closure over your directed hierarchical links (a member "
                    "-> its summary, a kind -> its genus) up to max_depth links, ancestors along them and "
                    "descendants against them, best first; entailment_confidence is the mean over the nodes "
                    "returned of each one's best path product of weights, and method says so. " + BOUNDS,
        input_model=EntailmentQueryInput, adapter=entailment_query, scope=READ, output_schema=ENTAILMENT_OUTPUT,
    ),
)

"""Context Graph's planning group: generate_search_plan, reflect_on_memory, debug_compare_retrieval and
test_recall_accuracy (apps/cognition/services/plan.py, reflect.py, benchmark.py), and the benchmark://runs/{run_id}
resource that polls a benchmark handed to the background.

Input models are the seed's schemas (reflect_on_memory, which the seed only names, takes issue 20's arguments);
output schemas are in planning_outputs.py. The seed's descriptions promise "12 embedding formats", "12-model fusion"
and "FuseMoE": each tool's description says what Engram really runs, and the answers name it (``method``,
``methods``, ``baseline_used``)."""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from apps.accounts.models import User
from apps.cognition.limits import (
    BENCHMARK_TOP_K, COMPARE_MAX_GROUND_TRUTH, COMPARE_TOP_K, GOAL_MAX_CHARS, GOAL_MIN_CHARS, HAYSTACK_SIZE,
    NEEDLE_COUNT, PLAN_POOL, PLAN_QUERIES, REFLECT_COHERENCE_LOW, REFLECT_ENTROPY_HIGH, REFLECT_STEPS,
)
from apps.cognition.planning_answers import benchmark_answer, comparison_answer, plan_answer, reflection_answer
from apps.cognition.selectors.benchmarks import benchmark_run_get
from apps.cognition.services.benchmark import recall_test_start, retrieval_compare
from apps.cognition.services.plan import search_plan_generate
from apps.cognition.services.reflect import memory_reflect
from apps.core.threads import run_sync
from apps.mcp.auth import READ, WRITE
from apps.mcp.profile import ResourceSpec, ToolSpec
from apps.mcp.profiles.context_graph.planning_outputs import (
    DEBUG_COMPARE_OUTPUT, GENERATE_SEARCH_PLAN_OUTPUT, REFLECT_OUTPUT, TEST_RECALL_OUTPUT,
)
from apps.mcp.profiles.context_graph.retrieval import Uuid
from apps.mcp.profiles.context_graph.status import UUID_FORMAT, UuidText
from apps.mcp.schema import SnakeCaseSeedModel
from apps.memories.validation import MAX_QUERY_CHARS

QueryType = Literal["semantic", "causal", "code", "temporal", "hierarchical"]
Method = Literal["cosine_baseline", "fuse_moe", "causal_pathfinding", "hyperbolic_entailment"]


# --- input models ------------------------------------------------------------------------------------------------

class GenerateSearchPlanInput(SnakeCaseSeedModel):
    goal: str = Field(min_length=GOAL_MIN_CHARS, max_length=GOAL_MAX_CHARS,
                      description="What you're trying to find. Example: 'Find all security constraints for API "
                                  "authentication', 'Understand why X causes Y'")
    query_types: list[QueryType] | None = Field(["semantic", "causal", "code"],
                                                description="Which query perspectives to generate")
    max_queries: int | None = Field(PLAN_QUERIES.default, **PLAN_QUERIES.schema(),
                                    description="How many query variations to return")


class ReflectOnMemoryInput(SnakeCaseSeedModel):
    goal: str = Field(min_length=GOAL_MIN_CHARS, max_length=GOAL_MAX_CHARS,
                      description="What you are trying to achieve, in your own words.")
    session_id: UuidText | None = Field(None, json_schema_extra=UUID_FORMAT,
                                        description="The session whose state to reflect on (default: your latest).")
    max_steps: int | None = Field(REFLECT_STEPS.default, **REFLECT_STEPS.schema(),
                                  description="How many steps to return, most urgent first.")


class DebugCompareRetrievalInput(SnakeCaseSeedModel):
    query: str = Field(max_length=MAX_QUERY_CHARS, description="Test query to run against all methods")
    top_k: int | None = Field(COMPARE_TOP_K.default, **COMPARE_TOP_K.schema())
    methods: list[Method] | None = Field(
        ["cosine_baseline", "fuse_moe", "causal_pathfinding"],
        description="Methods to compare: cosine_baseline=standard embedding, fuse_moe=12-model fusion, "
                    "causal_pathfinding=graph traversal")
    ground_truth_node_ids: list[Uuid] | None = Field(
        None, max_length=COMPARE_MAX_GROUND_TRUTH,
        description="Optional: Known-good results for precision/recall calculation")


class TestRecallAccuracyInput(SnakeCaseSeedModel):
    __test__ = False  # a tool's input, not a pytest class

    test_type: Literal["needle_haystack", "semantic_similarity", "causal_inference", "full_suite"] | None = \
        "needle_haystack"
    needle_count: int | None = Field(NEEDLE_COUNT.default, **NEEDLE_COUNT.schema())
    haystack_size: int | None = Field(HAYSTACK_SIZE.default, **HAYSTACK_SIZE.schema())
    baseline_model: Literal["text-embedding-3-large", "text-embedding-ada-002", "none"] | None = Field(
        "text-embedding-3-large", description="Compare FuseMoE against this baseline")


# --- adapters ----------------------------------------------------------------------------------------------------

async def generate_search_plan(actor: User, params: GenerateSearchPlanInput) -> dict[str, Any]:
    return plan_answer(await run_sync(search_plan_generate)(
        actor=actor, goal=params.goal, query_types=params.query_types, max_queries=params.max_queries))


async def reflect_on_memory(actor: User, params: ReflectOnMemoryInput) -> dict[str, Any]:
    return reflection_answer(await run_sync(memory_reflect)(
        actor=actor, goal=params.goal, session_id=params.session_id, max_steps=params.max_steps))


async def debug_compare_retrieval(actor: User, params: DebugCompareRetrievalInput) -> dict[str, Any]:
    return comparison_answer(await run_sync(retrieval_compare)(
        actor=actor, query=params.query, top_k=params.top_k, methods=params.methods,
        ground_truth_node_ids=params.ground_truth_node_ids))


async def test_recall_accuracy(actor: User, params: TestRecallAccuracyInput) -> dict[str, Any]:
    return benchmark_answer(await run_sync(recall_test_start)(
        actor=actor, test_type=params.test_type, needle_count=params.needle_count, haystack_size=params.haystack_size,
        baseline_model=params.baseline_model))


test_recall_accuracy.__test__ = False  # an adapter, not a pytest test


async def benchmark_run_status(actor: User, run_id: str) -> str:
    run = await run_sync(benchmark_run_get)(actor=actor, run_id=run_id)
    return json.dumps(benchmark_answer(run), indent=2)


RESOURCES = (
    ResourceSpec(uri="benchmark://runs/{run_id}", name="benchmark-run",
                 description="A test_recall_accuracy run of yours: its status and progress (phase, items stored, "
                             "queries answered) and, once completed, its figures. Poll it after the tool answered "
                             "with a run_id and status running.",
                 read=benchmark_run_status, mime_type="application/json"),
)

TOOLS = (
    ToolSpec(
        name="generate_search_plan",
        description="QUERY SYNTHESIS: Don't write search queries yourself—provide your goal, get optimized query "
                    "variations. Uses PredictiveCoder to expand into all 12 embedding formats. Execute returned "
                    "queries in parallel for comprehensive coverage. Engram has no PredictiveCoder and one embedding "
                    "model: each query is your goal's words plus the words your own graph uses near it (by type: "
                    "distinctive keywords, causal or hierarchical neighbours, identifiers, dates), and "
                    f"expected_recall is measured, not guessed: the share of the goal's own best {PLAN_POOL} nodes "
                    f"that the query retrieves in its best {PLAN_POOL}. execution_strategy is parallel when the "
                    "queries together recover more than the best one alone, else sequential.",
        input_model=GenerateSearchPlanInput, adapter=generate_search_plan, scope=READ,
        output_schema=GENERATE_SEARCH_PLAN_OUTPUT,
    ),
    ToolSpec(
        name="reflect_on_memory",
        description="What to do next toward a goal, from your session's state: coherence below "
                    f"{REFLECT_COHERENCE_LOW} -> trigger_dream, entropy above {REFLECT_ENTROPY_HIGH} -> "
                    "epistemic_action, then the goal's own steps (generate_search_plan with the perspectives it calls "
                    "for, expand_causal_path for a why-question, inject_context), each with its arguments and why. "
                    "An unknown session_id is error -32000.",
        input_model=ReflectOnMemoryInput, adapter=reflect_on_memory, scope=READ, output_schema=REFLECT_OUTPUT,
    ),
    ToolSpec(
        name="debug_compare_retrieval",
        description="VALIDATION: Compare retrieval quality across methods. Use to verify FuseMoE complexity provides "
                    "actual improvement over baseline. Returns side-by-side results for the same query. Engram runs "
                    "no FuseMoE and no 12 models: fuse_moe is its fused dense+lexical+graph retrieval, "
                    "cosine_baseline dense cosine on the stored vectors, causal_pathfinding spreading activation "
                    "over links from the best fused hits, hyperbolic_entailment expansion along hierarchical links "
                    "(no hyperbolic embedding). precision and recall are computed only against "
                    "ground_truth_node_ids; overlap is the mean pairwise Jaccard of the results, in percent.",
        input_model=DebugCompareRetrievalInput, adapter=debug_compare_retrieval, scope=READ,
        output_schema=DEBUG_COMPARE_OUTPUT,
    ),
    ToolSpec(
        name="test_recall_accuracy",
        description="BENCHMARKING: Run 'Needle in Haystack' test to validate 12-model embedding fusion outperforms "
                    "single model. Returns accuracy metrics for system validation. Engram has one embedding model: "
                    "the test compares its fused retrieval (fuse_moe_accuracy) with dense cosine of the same model "
                    "(baseline_used names it; no hosted model is called). Seeded needles and a haystack are stored "
                    "for real in a hidden cube of yours, deleted when the run ends; each needle is asked for by a "
                    f"paraphrase, and counts as found when it ranks first (top {BENCHMARK_TOP_K} read). A run that "
                    "outlasts the call's budget answers with run_id, status running and progress; poll "
                    "benchmark://runs/{run_id}. One run at a time.",
        input_model=TestRecallAccuracyInput, adapter=test_recall_accuracy, scope=WRITE,
        output_schema=TEST_RECALL_OUTPUT,
    ),
)

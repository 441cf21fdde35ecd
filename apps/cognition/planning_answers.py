"""The answers of Context Graph's planning and benchmark tools (generate_search_plan, reflect_on_memory,
debug_compare_retrieval, test_recall_accuracy) as plain data, shared by its edges: the MCP profile adds the pulse,
REST serializes them as they are. Each ``method`` says what was computed (services/plan.py, reflect.py,
benchmark.py define it)."""
from __future__ import annotations

from typing import Any

from apps.cognition.limits import PLAN_POOL, REFLECT_COHERENCE_LOW, REFLECT_ENTROPY_HIGH
from apps.cognition.models import BenchmarkRun
from apps.cognition.representations import node_summary
from apps.cognition.services.benchmark import Comparison, progress_of
from apps.cognition.services.plan import SearchPlan
from apps.cognition.services.reflect import Reflection
from apps.core.timestamps import iso_timestamp

PLAN_METHOD = (f"Each query is the goal's content words plus words your own graph uses near the goal (by type: its "
               f"most distinctive keywords, causal or hierarchical neighbours' keywords, identifiers, dates). "
               f"expected_recall is measured: the share of the goal's own best {PLAN_POOL} nodes (fused retrieval) "
               f"that the query retrieves in its best {PLAN_POOL}, run for real without reinforcement.")
REFLECT_METHOD = (f"Steps from the session's cached UTL state (coherence < {REFLECT_COHERENCE_LOW}: trigger_dream; "
                  f"entropy > {REFLECT_ENTROPY_HIGH}: epistemic_action) and then from the goal's words "
                  "(generate_search_plan with the perspectives they call for, expand_causal_path for a causal goal, "
                  "inject_context).")


def plan_answer(plan: SearchPlan) -> dict[str, Any]:
    return {
        "queries": [{"query": query.query, "type": query.query_type, "rationale": query.rationale,
                     "expected_recall": query.expected_recall} for query in plan.queries],
        "execution_strategy": plan.execution_strategy, "token_estimate": plan.token_estimate,
        "goal_pool_size": len(plan.pool), "union_recall": plan.union_recall, "method": PLAN_METHOD,
    }


def reflection_answer(reflection: Reflection) -> dict[str, Any]:
    session = reflection.session
    return {
        "goal": reflection.goal, "session_id": str(session.pk) if session else None,
        "utl": {"entropy": round(session.entropy, 4) if session else 0.0,
                "coherence": round(session.coherence, 4) if session else 0.0,
                "learning_score": round(session.learning_score, 4) if session else 0.0,
                "interactions": session.interactions if session else 0, "lifecycle_stage": reflection.stage.value},
        "thresholds": {"entropy_high": REFLECT_ENTROPY_HIGH, "coherence_low": REFLECT_COHERENCE_LOW},
        "steps": [{"step": index, "tool": step.tool, "arguments": step.arguments, "why": step.why}
                  for index, step in enumerate(reflection.steps, start=1)],
        "steps_left_out": reflection.left_out, "notes": reflection.notes, "method": REFLECT_METHOD,
    }


def comparison_answer(comparison: Comparison) -> dict[str, Any]:
    metrics: dict[str, Any] = {"precision": comparison.precision, "recall": comparison.recall,
                               "latency_ms": comparison.latency_ms, "overlap_pairs": comparison.overlap_pairs,
                               "relevant_set": "ground_truth_node_ids" if comparison.ground_truth is not None else None}
    if comparison.overlap is not None:
        metrics["overlap"] = comparison.overlap
    return {
        "results": {method: [node_summary(entry.memory, entry.score) for entry in ranked]
                    for method, ranked in comparison.results.items()},
        "metrics": metrics, "recommendation": comparison.recommendation, "methods": comparison.method_names,
        "top_k": comparison.top_k,
    }


def benchmark_answer(run: BenchmarkRun) -> dict[str, Any]:
    """A finished run: the seed's figures (its report) and the run's id; an unfinished one: its id and progress."""
    progress = progress_of(run)
    data: dict[str, Any] = {
        "run_id": str(run.pk), "status": run.status, "test_type": run.test_type,
        "baseline_used": run.baseline_used or None,
        "progress": {"phase": progress.phase, "stored": progress.stored, "total_items": progress.total_items,
                     "queried": progress.queried, "total_queries": progress.total_queries,
                     "percent": progress.percent},
        "started_at": iso_timestamp(run.created_at),
        "finished_at": iso_timestamp(run.finished_at) if run.finished_at else None,
    }
    if run.status == BenchmarkRun.Status.COMPLETED and run.report:
        data.update(run.report)
    elif run.status == BenchmarkRun.Status.FAILED:
        data["error"] = run.error
    else:
        data["poll"] = (f"The run continues in the background: read benchmark://runs/{run.pk} or GET "
                        f"/api/v1/cognition/benchmarks/{run.pk}/ until status is completed.")
    return data

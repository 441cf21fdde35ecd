"""Context Graph's dream group: trigger_dream. Its input and output schemas are the seed's; the adapter calls
apps/cognition/services/dream (blocking: the dream runs in the call, within its budget) or hands the run to the
worker (the Celery task cognition.dream_run)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.accounts.models import User
from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.cognition.services.dream.limits import DREAM_MINUTES, SYNTHETIC_QUERIES
from apps.cognition.services.dream.report import DreamReport, dream_report
from apps.cognition.tasks import dream_queue
from apps.core.threads import run_sync
from apps.mcp.auth import WRITE
from apps.mcp.profile import ToolSpec
from apps.mcp.schema import SnakeCaseSeedModel


class TriggerDreamInput(SnakeCaseSeedModel):
    phase: Literal["nrem", "rem", "full_cycle"] | None = "full_cycle"
    duration_minutes: int | None = Field(DREAM_MINUTES.default, **DREAM_MINUTES.schema())
    synthetic_query_count: int | None = Field(SYNTHETIC_QUERIES.default, **SYNTHETIC_QUERIES.schema())
    blocking: bool | None = Field(False, description="If false (default), dream runs in background. If true, wait "
                                                     "for completion.")
    abort_on_query: bool | None = Field(True, description="Immediately abort dream and serve incoming user queries "
                                                          "(instant wake).")


DREAM_OUTPUT = {"type": "object", "properties": {
    "phase_completed": {"type": "string"},
    "edges_strengthened": {"type": "integer"},
    "blind_spots_discovered": {"type": "integer"},
    "new_edges_created": {"type": "integer"},
    "duration_ms": {"type": "integer"},
    "was_interrupted": {"type": "boolean"},
}}


def _answer(report: DreamReport) -> dict[str, Any]:
    return {"phase_completed": report.phase_completed, "edges_strengthened": report.edges_strengthened,
            "blind_spots_discovered": report.blind_spots_discovered, "new_edges_created": report.new_edges_created,
            "duration_ms": report.duration_ms, "was_interrupted": report.was_interrupted,
            "dream_run_id": str(report.run.pk), "status": report.run.status, "changes": report.changes,
            "notes": report.notes, "reversal_hash": report.reversal_hash}


async def trigger_dream(actor: User, params: TriggerDreamInput) -> dict[str, Any]:
    run = await run_sync(dream_trigger)(
        actor=actor, phase=params.phase or "full_cycle", duration_minutes=params.duration_minutes,
        synthetic_query_count=params.synthetic_query_count, abort_on_query=params.abort_on_query is not False)
    if params.blocking:
        run = await run_sync(dream_execute)(run_id=run.pk)
        return _answer(await run_sync(dream_report)(run))
    run = await run_sync(dream_queue)(run)
    return {"dream_run_id": str(run.pk), "status": run.status}


TOOLS = (
    ToolSpec(
        name="trigger_dream",
        description="Manually trigger Dream phase for memory consolidation. Non-blocking by default. Engram: a dream "
                    "works on your real graph in batches (one transaction each) until its work or duration_minutes "
                    "run out, never sleeping. NREM replays what your sessions' queries and stores activated together "
                    "(Hebbian weights, pruning at 0.05, a semantic edge for pairs co-activated 3 times), merges "
                    "near-duplicates (cosine > 0.97), proposes potential_merge tasks (0.90-0.97), writes an extractive "
                    "summary node for each cluster of 3 or more close nodes (cosine >= 0.75; its members link to it "
                    "hierarchically) and commits scratchpad thoughts whose surprise is over their "
                    "auto_commit_threshold; REM walks from "
                    "sparse regions and records blind spots. One dream per user; a query of yours wakes it "
                    "(abort_on_query) and the next trigger resumes it. Blocking answers add dream_run_id, status, "
                    "changes (every counter), notes (why nothing qualified) and reversal_hash (restore_from_hash "
                    "undoes the whole dream; null when it changed nothing); non-blocking answers are {dream_run_id, "
                    "status}.",
        input_model=TriggerDreamInput, adapter=trigger_dream, scope=WRITE, output_schema=DREAM_OUTPUT,
    ),
)

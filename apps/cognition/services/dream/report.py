"""What a dream did, as trigger_dream's answer and the pages tell it: the seed's figures from the run's counters."""
from __future__ import annotations

from dataclasses import dataclass

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream.limits import PHASES

# Counters that count changes to the graph (the others count work): a run with none of them changed nothing.
CHANGES = ("edges_strengthened", "edges_weakened", "edges_reactivated", "edges_pruned", "new_edges_created", "merges",
           "tasks_opened", "summaries_created", "summaries_updated", "summary_edges_created", "summary_edges_removed",
           "summary_edges_reweighted", "thoughts_committed", "blind_spots_discovered", "leaps_linked",
           "shortcuts_created")


@dataclass(frozen=True)
class DreamReport:
    run: ConsolidationRun
    phase_completed: str
    edges_strengthened: int
    blind_spots_discovered: int
    new_edges_created: int
    duration_ms: int
    was_interrupted: bool
    changes: dict
    notes: list[str]
    reversal_hash: str | None


def phase_completed(run: ConsolidationRun) -> str:
    """The largest phase of the seed's (full_cycle, nrem, rem) whose steps are all done, else "none"."""
    done = set(run.checkpoint.get("phases_done", []))
    for name in (run.phase, "nrem", "rem"):
        if set(PHASES[name]) <= done and set(PHASES[name]) <= set(PHASES[run.phase]):
            return name
    return "none"


def dream_report(run: ConsolidationRun) -> DreamReport:
    counters = run.checkpoint.get("counters", {})
    changed = any(counters.get(name) for name in CHANGES)
    return DreamReport(
        run=run, phase_completed=phase_completed(run), edges_strengthened=counters.get("edges_strengthened", 0),
        blind_spots_discovered=counters.get("blind_spots_discovered", 0),
        new_edges_created=sum(counters.get(name, 0) for name in ("new_edges_created", "leaps_linked",
                                                                   "shortcuts_created")),
        duration_ms=run.progress.get("last_duration_ms", 0),
        was_interrupted=run.progress.get("stop_reason") == "query", changes=dict(counters), notes=list(run.notes),
        reversal_hash=run.reversal_hash if changed and run.status != ConsolidationRun.Status.ROLLED_BACK else None)

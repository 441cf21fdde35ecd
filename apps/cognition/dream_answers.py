"""A dream run as plain data, shared by its edges: REST serializes it as it is, the dream runs page shows it and
polls it. Progress is told step by step (each step's batches and items) from the run's checkpoint and progress."""
from __future__ import annotations

from typing import Any

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream.limits import PHASES
from apps.cognition.services.dream.report import CHANGES, dream_report, phase_completed
from apps.core.timestamps import iso_or_none

STEP_LABELS = {"nrem_replay": "NREM replay", "nrem_link": "NREM link", "nrem_dedupe": "NREM dedupe",
               "nrem_summarise": "NREM cluster summaries", "nrem_commit": "NREM scratchpad commit", "rem": "REM"}


def dream_steps(run: ConsolidationRun) -> list[dict[str, Any]]:
    """Each step of the run's phase, in order: done, running (the one a worker is on), next (where a stopped run
    resumes) or pending, with the batches and items it took so far."""
    done = set(run.checkpoint.get("phases_done", []))
    current = run.checkpoint.get("phase")
    counts = run.progress.get("steps", {})
    steps = []
    for name in PHASES[run.phase]:
        state = ("done" if name in done else
                 ("running" if run.status == ConsolidationRun.Status.RUNNING else "next") if name == current else
                 "pending")
        count = counts.get(name, {})
        steps.append({"step": name, "label": STEP_LABELS[name], "state": state,
                      "batches": count.get("batches", 0), "items": count.get("items", 0)})
    return steps


def dream_list_answer(run: ConsolidationRun) -> dict[str, Any]:
    """A run in a list: what it is, where it stands and what it did, without its notes and steps."""
    return {"dream_run_id": str(run.pk), "phase": run.phase, "status": run.status,
            "phase_completed": phase_completed(run), "current_step": run.checkpoint.get("phase"),
            "batches": run.progress.get("batches", 0), "items": run.progress.get("items", 0),
            "stop_reason": run.progress.get("stop_reason"), "created_at": iso_or_none(run.created_at),
            "started_at": iso_or_none(run.started_at), "finished_at": iso_or_none(run.finished_at)}


def dream_answer(run: ConsolidationRun) -> dict[str, Any]:
    """A run in full: its budget and seed, its steps with their batches, every counter, its notes, and the
    reversal hash that undoes it (null when it changed nothing or was undone)."""
    report = dream_report(run)
    return {**dream_list_answer(run), "budget": run.budget, "seed": run.seed, "abort_on_query": run.abort_on_query,
            "steps": dream_steps(run), "counters": report.changes,
            "changes": [{"counter": name, "label": name.replace("_", " "), "value": report.changes[name]}
                        for name in CHANGES if report.changes.get(name)],
            "notes": report.notes,
            "reversal_hash": report.reversal_hash, "was_interrupted": report.was_interrupted,
            "heartbeat_at": iso_or_none(run.heartbeat_at),
            "interrupt_requested_at": iso_or_none(run.interrupt_requested_at),
            "duration_ms": run.progress.get("duration_ms", 0)}

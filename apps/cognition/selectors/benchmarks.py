"""Reads of test_recall_accuracy's runs: one of the caller's, by id, for polling, and their list for the page. Another
user's run is not found, as an unknown one is."""
from __future__ import annotations

import uuid

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.cognition.models import BenchmarkRun
from apps.core.exceptions import NotFound


def benchmark_run_get(*, actor: User, run_id) -> BenchmarkRun:
    try:
        parsed = uuid.UUID(str(run_id))
    except ValueError:
        parsed = None
    run = BenchmarkRun.objects.filter(owner=actor, pk=parsed).first() if parsed else None
    if run is None:
        raise NotFound(f"Benchmark run {str(run_id)[:80]} not found: it is not one of yours.", code="not_found",
                       extra={"field": "run_id", "suggestion": "Use the run_id test_recall_accuracy answered."})
    return run


def benchmark_runs(*, actor: User) -> QuerySet[BenchmarkRun]:
    """The actor's runs, newest first, without their per-query working state (the report holds the figures)."""
    return BenchmarkRun.objects.filter(owner=actor).defer("outcomes", "needles").order_by("-created_at", "-pk")

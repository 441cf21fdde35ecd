"""Celery tasks of Context Graph: thin wrappers that call services. Each may run twice (docs/guarantees.md)."""
import logging

from celery import shared_task

from apps.cognition.limits import BENCHMARK_LEASE_SECONDS
from apps.cognition.models import ConsolidationRun
from apps.cognition.services.benchmark import recall_test_continue
from apps.cognition.services.dream import dream_execute
from apps.cognition.services.purge import expired_purge

logger = logging.getLogger(__name__)


@shared_task(name="cognition.purge_expired", acks_late=True)
def purge_expired() -> dict:
    """Periodic (see CELERY_BEAT_SCHEDULE): remove for good what expired in the trash, the undo log and the
    scratchpad. Idempotent: a second run finds nothing left to remove."""
    report = expired_purge()
    return {"nodes_purged": report.nodes_purged, "tombstones_dropped": report.tombstones_dropped,
            "snapshots_dropped": report.snapshots_dropped, "scratchpad_dropped": report.scratchpad_dropped}


@shared_task(name="cognition.dream_run", acks_late=True)
def dream_run(run_id: str) -> dict:
    """Work one dream (trigger_dream without blocking). Idempotent by run id: a finished run, or one a live worker
    holds, is left as it is; one whose worker went silent is taken over from its checkpoint."""
    try:
        run = dream_execute(run_id=run_id)
    except ConsolidationRun.DoesNotExist:  # removed with its owner: nothing to do
        return {"dream_run_id": run_id, "status": None}
    return {"dream_run_id": str(run.pk), "status": run.status, "progress": run.progress}


def dream_queue(run: ConsolidationRun) -> ConsolidationRun:
    """Hand a triggered (queued) run to the worker; the edges that start a dream in the background call this."""
    dream_run.delay(str(run.pk))
    return ConsolidationRun.objects.get(pk=run.pk)


@shared_task(name="cognition.benchmark_run", acks_late=True, bind=True, max_retries=None)
def benchmark_run(self, run_id: str) -> str:
    """test_recall_accuracy's rest, after the call's inline budget: resume the run from its checkpoint and finish it.
    Idempotent by run id: a finished run is left alone; a run another live worker holds is retried after its lease
    could lapse (a killed worker's run is then taken over and resumed)."""
    try:
        outcome = recall_test_continue(run_id=run_id)
    except Exception:  # the run is failed and its cube deleted (services/benchmark.py): nothing to retry
        logger.exception("Benchmark run %s failed", run_id)
        return "failed"
    if outcome == "leased":
        raise self.retry(countdown=BENCHMARK_LEASE_SECONDS)
    return outcome

"""Celery tasks of Context Graph: thin wrappers that call services. Each may run twice (docs/guarantees.md)."""
from celery import shared_task

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute
from apps.cognition.services.purge import expired_purge


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

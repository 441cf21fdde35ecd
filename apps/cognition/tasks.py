"""Celery tasks of Context Graph: thin wrappers that call services. Each may run twice (docs/guarantees.md)."""
from celery import shared_task

from apps.cognition.services.purge import expired_purge


@shared_task(name="cognition.purge_expired", acks_late=True)
def purge_expired() -> dict:
    """Periodic (see CELERY_BEAT_SCHEDULE): remove for good what expired in the trash, the undo log and the
    scratchpad. Idempotent: a second run finds nothing left to remove."""
    report = expired_purge()
    return {"nodes_purged": report.nodes_purged, "tombstones_dropped": report.tombstones_dropped,
            "snapshots_dropped": report.snapshots_dropped, "scratchpad_dropped": report.scratchpad_dropped}

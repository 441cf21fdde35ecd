"""Celery tasks of the reasoning app: thin wrappers that call services. Each may run twice (docs/guarantees.md)."""
import logging

from celery import shared_task

from apps.core.exceptions import DomainError
from apps.reasoning.services.cell_runs import TASK_NAME, cell_run_execute

logger = logging.getLogger(__name__)


@shared_task(name=TASK_NAME, acks_late=True)
def cell_run(run_id: str) -> str | None:
    """Run a notebook cell that a page queued (services/cell_runs.py). Idempotent by run id: a running or finished
    run is left as it is, so a second delivery does nothing. A DomainError is the run's own failure, already
    recorded on it: final, never retried."""
    try:
        run = cell_run_execute(run_id=run_id)
    except DomainError as exc:
        logger.info("Cell run %s failed: %s", run_id, exc.message)
        return "failed"
    return run.status if run is not None else None

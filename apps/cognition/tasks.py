"""Celery tasks of Context Graph: thin wrappers that call services. Each may run twice (docs/guarantees.md)."""
import logging

from celery import shared_task

from apps.cognition.limits import BENCHMARK_LEASE_SECONDS
from apps.accounts.models import User
from apps.cognition.models import ConsolidationRun
from apps.cognition.services.benchmark import recall_test_continue
from apps.cognition.services.dream import dream_execute
from apps.cognition.services.gardener.activity import activity_tick
from apps.cognition.services.gardener.cycle import gardener_run
from apps.core.exceptions import DomainError
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


@shared_task(name="cognition.gardener_tick", acks_late=True)
def gardener_tick() -> dict:
    """Periodic (every 30 s, see CELERY_BEAT_SCHEDULE): fold every user's queries into their activity, queue the dreams
    it triggered (auto-dream) and a gardener cycle for each user due one. A second tick within 15 s changes nothing."""
    report = activity_tick()
    for run_id in report.dreams:
        dream_run.delay(run_id)
    for user_id in report.cycles:
        gardener_cycle.delay(user_id)
    return {"updated": report.updated, "cycles": report.cycles, "dreams": report.dreams}


@shared_task(name="cognition.gardener_cycle", acks_late=True)
def gardener_cycle(user_id: int, token: str | None = None, batch_size: int | None = None) -> dict:
    """One gardener cycle of a user: an automatic one (the tick's), or with ``token`` the one they asked for
    (gardener_request). A refusal (they became active, a cycle or dream of theirs is under way, another cycle took
    the queued one's place) is final: the next tick decides again. Idempotent: a queued cycle runs once (its token)."""
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return {"user_id": user_id, "status": None}
    try:
        report = gardener_run(actor=user, trigger="auto" if token is None else "manual", token=token,
                              **({} if batch_size is None else {"batch_size": batch_size}))
    except DomainError as exc:
        return {"user_id": user_id, "status": "skipped", "reason": exc.message}
    return {"user_id": user_id, "status": report.status, "counters": report.counters}


def gardener_queue(user: User, token: str, batch_size: int | None = None) -> None:
    """Hand a requested (queued) cycle of ``user``'s graph to the worker: the page's "Run a cycle now", REST's run and
    the admin's action call this after gardener_request."""
    gardener_cycle.delay(user.pk, token=token, batch_size=batch_size)

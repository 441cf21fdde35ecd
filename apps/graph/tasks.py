"""Celery tasks of the live graph: thin wrappers that call services."""
from celery import shared_task

from apps.graph.services import graph_events_prune


@shared_task(name="apps.graph.tasks.prune_graph_events")
def prune_graph_events() -> int:
    """Periodic (see CELERY_BEAT_SCHEDULE): forget events older than the retention."""
    return graph_events_prune()

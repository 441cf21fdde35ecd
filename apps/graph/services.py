"""Writes of the live graph: only the pruning of old events (services publish through events.py)."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.graph.models import GraphEvent


def graph_events_prune(*, now=None) -> int:
    """Delete events older than the retention (ENGRAM_GRAPH_EVENT_RETENTION_HOURS); returns how many.
    A client away for longer gets "reload" when it catches up, never a silent gap."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.ENGRAM_GRAPH_EVENT_RETENTION_HOURS)
    # The newest event always stays: the oldest stored id tells a catching-up client whether it missed
    # pruned events (see graph_events_since).
    newest = GraphEvent.objects.order_by("-id").values("id")[:1]
    deleted, _ = GraphEvent.objects.filter(created_at__lt=cutoff).exclude(id__in=newest).delete()
    return deleted

"""The curation inbox: tasks the system opens for a node set, one open task per type and node set, never one the
owner has rejected before; curating the nodes closes their tasks."""
from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import CurationTask


def _node_set(node_ids: Iterable) -> list[str]:
    return sorted({str(node_id) for node_id in node_ids})


def task_open(*, owner: User, task_type: str, node_ids: Iterable, reason: str, suggested_tool: str,
              priority: str = CurationTask.Priority.MEDIUM) -> CurationTask | None:
    """Open a task unless one is open for this node set already (returned then) or the owner rejected one; None
    when rejected before."""
    nodes = _node_set(node_ids)
    same = CurationTask.objects.filter(owner=owner, task_type=task_type, node_ids=nodes)
    earlier = same.filter(status__in=[CurationTask.Status.OPEN, CurationTask.Status.REJECTED]).order_by("status")
    found = earlier.first()
    if found is not None:
        return found if found.status == CurationTask.Status.OPEN else None
    try:
        with transaction.atomic():
            return CurationTask.objects.create(owner=owner, task_type=task_type, node_ids=nodes, reason=reason,
                                               suggested_tool=suggested_tool, priority=priority)
    except IntegrityError:  # a concurrent caller opened the same task first
        return same.filter(status=CurationTask.Status.OPEN).first()


def tasks_close_for(*, owner: User, node_ids: Iterable, actor: User | None) -> int:
    """Mark done the owner's open tasks about any of these nodes (they have been curated); how many."""
    return CurationTask.objects.filter(
        owner=owner, status=CurationTask.Status.OPEN, node_ids__overlap=_node_set(node_ids),
    ).update(status=CurationTask.Status.DONE, closed_at=timezone.now(), closed_by=actor, updated_at=timezone.now())


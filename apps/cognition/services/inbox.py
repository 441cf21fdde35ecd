"""The curation inbox: tasks the system opens for a node set, one open task per type and node set, never one the
owner has rejected before; curating the nodes closes their tasks."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import CurationTask


def _node_set(node_ids: Iterable) -> list[str]:
    return sorted({str(node_id) for node_id in node_ids})


@dataclass(frozen=True)
class Proposal:
    """A task the system would open: its nodes, why, and which tool would settle it."""

    node_ids: Iterable
    reason: str
    suggested_tool: str
    priority: str = CurationTask.Priority.MEDIUM


def task_open(*, owner: User, task_type: str, node_ids: Iterable, reason: str, suggested_tool: str,
              priority: str = CurationTask.Priority.MEDIUM) -> CurationTask | None:
    """Open a task unless one is open for this node set already (returned then) or the owner rejected one; None
    when rejected before."""
    [task] = tasks_open(owner=owner, task_type=task_type,
                        proposals=[Proposal(node_ids, reason, suggested_tool, priority)])
    return task


def tasks_open(*, owner: User, task_type: str, proposals: list[Proposal]) -> list[CurationTask | None]:
    """task_open for several node sets in three queries whatever their number: each proposal's open task (found or
    new), or None where the owner rejected one."""
    sets = [_node_set(proposal.node_ids) for proposal in proposals]
    if not sets:
        return []
    same = CurationTask.objects.filter(owner=owner, task_type=task_type, node_ids__in=sets)
    earlier: dict[tuple, CurationTask] = {}
    for task in same.filter(status__in=[CurationTask.Status.OPEN, CurationTask.Status.REJECTED]):
        key = tuple(_node_set(task.node_ids))
        if key not in earlier or task.status == CurationTask.Status.OPEN:  # an open task wins over a rejection
            earlier[key] = task
    new = {tuple(nodes): CurationTask(owner=owner, task_type=task_type, node_ids=nodes, reason=proposal.reason,
                                      suggested_tool=proposal.suggested_tool, priority=proposal.priority)
           for nodes, proposal in zip(sets, proposals) if tuple(nodes) not in earlier}
    if new:
        # A concurrent caller may open the same task first: its row stays, ours is skipped, and both read it back.
        CurationTask.objects.bulk_create(new.values(), ignore_conflicts=True)
        for task in same.filter(status=CurationTask.Status.OPEN, node_ids__in=[list(key) for key in new]):
            earlier[tuple(_node_set(task.node_ids))] = task
    found = [earlier.get(tuple(nodes)) for nodes in sets]
    return [task if task is not None and task.status == CurationTask.Status.OPEN else None for task in found]


def tasks_close_for(*, owner: User, node_ids: Iterable, actor: User | None) -> int:
    """Mark done the owner's open tasks about any of these nodes (they have been curated); how many."""
    return CurationTask.objects.filter(
        owner=owner, status=CurationTask.Status.OPEN, node_ids__overlap=_node_set(node_ids),
    ).update(status=CurationTask.Status.DONE, closed_at=timezone.now(), closed_by=actor, updated_at=timezone.now())


"""Deciding a curation task: approving runs the tool it suggests on its nodes (so the decision is the same whether
it comes from a page, REST or the admin); rejecting keeps its node set from being proposed again."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import CurationTask
from apps.cognition.services import curation
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.memories.models import Memory


@dataclass(frozen=True)
class Decision:
    task: CurationTask
    # What the approved tool did: the merge's, forget's or annotation's result (None for a rejection).
    outcome: object | None


def _open_task(actor: User, task_id) -> CurationTask:
    try:
        wanted = uuid.UUID(str(task_id))
    except ValueError:
        raise InvalidInput("task_id must be a curation task's UUID.", field="task_id") from None
    task = CurationTask.objects.filter(owner=actor, pk=wanted).first()
    if task is None:
        raise NotFound(f"Curation task {task_id} not found.", extra={"field": "task_id"})
    if task.status != CurationTask.Status.OPEN:
        raise Conflict(f"This task is {task.status} already: only an open task can be decided.",
                       extra={"field": "task_id"})
    return task


def task_reject(*, actor: User, task_id) -> Decision:
    """Reject an open task of the actor's: its node set is never proposed for this kind of task again."""
    with transaction.atomic():
        task = _open_task(actor, task_id)
        task.status, task.closed_at, task.closed_by = CurationTask.Status.REJECTED, timezone.now(), actor
        task.save(update_fields=["status", "closed_at", "closed_by", "updated_at"])
    return Decision(task=task, outcome=None)


def task_approve(*, actor: User, task_id, note: str = "") -> Decision:
    """Approve an open task of the actor's by running the tool it suggests on its nodes: merge_concepts (keeping
    the most important content, named after it), forget_concept (the task's type as the reason) or annotate_node
    (a correction that ``note`` writes, which it then needs)."""
    task = _open_task(actor, task_id)
    nodes = [str(node_id) for node_id in task.node_ids]
    if task.suggested_tool == CurationTask.SuggestedTool.MERGE_CONCEPTS:
        name = Memory.objects.filter(pk__in=nodes).order_by("-importance").values_list("content", flat=True).first()
        outcome = curation.nodes_merge(actor=actor, source_node_ids=nodes, target_name=(name or "Merged")[:80])
    elif task.suggested_tool == CurationTask.SuggestedTool.FORGET_CONCEPT:
        reason = "semantic_cancer" if task.task_type == CurationTask.TaskType.SEMANTIC_CANCER else "obsolete"
        outcome = [curation.node_forget(actor=actor, node_id=node, reason=reason) for node in nodes]
    else:
        if not (note or "").strip():
            raise InvalidInput("note is empty: write the correction that settles this task.", field="note")
        outcome = [curation.annotation_add(actor=actor, node_id=node, text=note, annotation_type="correction")
                   for node in nodes]
    CurationTask.objects.filter(pk=task.pk).update(status=CurationTask.Status.APPROVED, closed_by=actor,
                                                   closed_at=timezone.now(), updated_at=timezone.now())
    task.refresh_from_db()
    return Decision(task=task, outcome=outcome)

"""Deciding a curation task: approving runs the tool it suggests on its nodes (so the decision is the same whether
it comes from a page, REST or the admin); rejecting keeps its node set from being proposed again. In curator mode
(the admin's, services/curators.py) the task's owner's graph is curated and the records name the curator."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.lineage import changes_by
from apps.cognition.models import CurationTask
from apps.cognition.services import curation
from apps.cognition.services.curators import curator_scope
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.memories.models import Memory


@dataclass(frozen=True)
class Decision:
    task: CurationTask
    # What the approved tool did: the merge's, forget's or annotation's result (None for a rejection).
    outcome: object | None


def _task_id(task_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(task_id))
    except ValueError:
        raise InvalidInput("task_id must be a curation task's UUID.", field="task_id") from None


def _open_task(owner: User, task_id: uuid.UUID) -> CurationTask:
    task = CurationTask.objects.filter(owner=owner, pk=task_id).first()
    if task is None:
        raise NotFound(f"Curation task {task_id} not found.", extra={"field": "task_id"})
    if task.status != CurationTask.Status.OPEN:
        raise Conflict(f"This task is {task.status} already: only an open task can be decided.",
                       extra={"field": "task_id"})
    return task


def _owner(actor: User, task_id: uuid.UUID, curator: bool) -> User:
    return curator_scope(actor=actor, curator=curator, rows=CurationTask.objects.filter(pk=task_id))


def task_reject(*, actor: User, task_id, curator: bool = False) -> Decision:
    """Reject an open task of the actor's (``curator``: of any user's): its node set is never proposed for this kind
    of task again."""
    wanted = _task_id(task_id)
    owner = _owner(actor, wanted, curator)
    with transaction.atomic():
        task = _open_task(owner, wanted)
        task.status, task.closed_at, task.closed_by = CurationTask.Status.REJECTED, timezone.now(), actor
        task.save(update_fields=["status", "closed_at", "closed_by", "updated_at"])
    return Decision(task=task, outcome=None)


def task_approve(*, actor: User, task_id, note: str = "", curator: bool = False) -> Decision:
    """Approve an open task of the actor's (``curator``: of any user's, curating its owner's nodes) by running the
    tool it suggests on its nodes: merge_concepts (keeping the most important content, named after it),
    forget_concept (the task's type as the reason) or annotate_node (a correction that ``note`` writes, which it then
    needs)."""
    wanted = _task_id(task_id)
    owner = _owner(actor, wanted, curator)
    task = _open_task(owner, wanted)
    nodes = [str(node_id) for node_id in task.node_ids]
    # The owner's graph is curated (their access decides); every record names whoever decided.
    acting = {"actor": owner, "recorded_as": actor}
    with changes_by(actor if curator else None):
        if task.suggested_tool == CurationTask.SuggestedTool.MERGE_CONCEPTS:
            name = (Memory.objects.filter(pk__in=nodes).order_by("-importance").values_list("content", flat=True)
                    .first())
            outcome = curation.nodes_merge(**acting, source_node_ids=nodes, target_name=(name or "Merged")[:80])
        elif task.suggested_tool == CurationTask.SuggestedTool.FORGET_CONCEPT:
            reason = "semantic_cancer" if task.task_type == CurationTask.TaskType.SEMANTIC_CANCER else "obsolete"
            outcome = [curation.node_forget(**acting, node_id=node, reason=reason) for node in nodes]
        else:
            if not (note or "").strip():
                raise InvalidInput("note is empty: write the correction that settles this task.", field="note")
            outcome = [curation.annotation_add(**acting, node_id=node, text=note, annotation_type="correction")
                       for node in nodes]
    CurationTask.objects.filter(pk=task.pk).update(status=CurationTask.Status.APPROVED, closed_by=actor,
                                                   closed_at=timezone.now(), updated_at=timezone.now())
    task.refresh_from_db()
    return Decision(task=task, outcome=outcome)

"""Deciding curation tasks: approval runs the suggested tool on the task's nodes, rejection keeps the node set from
coming back, and only the owner's open tasks can be decided."""
import pytest

from apps.cognition.models import Annotation, CurationTask, Tombstone
from apps.cognition.services.decisions import task_approve, task_reject
from apps.cognition.services.inbox import task_open
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.memories.models import Memory
from tests.cognition.curation_support import nodes

pytestmark = pytest.mark.django_db

Types, Tools, Status = CurationTask.TaskType, CurationTask.SuggestedTool, CurationTask.Status


def _task(user, memories, task_type, tool):
    return task_open(owner=user, task_type=task_type, node_ids=[m.pk for m in memories], reason="found by a test",
                     suggested_tool=tool)


def test_approving_a_merge_task_merges_its_nodes(user):
    a, b = nodes(user, "The user prefers dark mode in every editor.", "Dark mode in all editors, says the user.",
                 importance=0.4)
    task = _task(user, [a, b], Types.POTENTIAL_MERGE, Tools.MERGE_CONCEPTS)
    decision = task_approve(actor=user, task_id=task.pk)
    assert decision.task.status == Status.APPROVED and decision.task.closed_by == user
    merged = Memory.objects.get(pk=decision.outcome.merged.pk)
    assert merged.deleted_at is None
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {a.pk, b.pk}


def test_approving_forgets_obsolete_nodes_and_an_ambiguity_needs_a_note(user):
    old, = nodes(user, "Deploys go out on Fridays.")
    forget = _task(user, [old], Types.OBSOLETE_INFO, Tools.FORGET_CONCEPT)
    task_approve(actor=user, task_id=forget.pk)
    assert Tombstone.objects.get(memory=old).reason == "obsolete"
    x, y = nodes(user, "The limit is 100 requests a minute.", "The limit is 1000 requests a minute.")
    ambiguity = _task(user, [x, y], Types.AMBIGUITY_DETECTED, Tools.ANNOTATE_NODE)
    with pytest.raises(InvalidInput) as empty:
        task_approve(actor=user, task_id=ambiguity.pk)
    assert empty.value.field == "note"
    task_approve(actor=user, task_id=ambiguity.pk, note="The gateway's limit is 1000; 100 was the old one.")
    assert Annotation.objects.filter(annotation_type="correction").count() == 2


def test_a_rejected_task_stays_rejected_and_never_comes_back(user):
    a, b = nodes(user, "Staging runs PostgreSQL 16.", "Staging runs PostgreSQL 16, says ops.")
    task = _task(user, [a, b], Types.POTENTIAL_MERGE, Tools.MERGE_CONCEPTS)
    assert task_reject(actor=user, task_id=task.pk).task.status == Status.REJECTED
    assert _task(user, [a, b], Types.POTENTIAL_MERGE, Tools.MERGE_CONCEPTS) is None
    with pytest.raises(Conflict):
        task_approve(actor=user, task_id=task.pk)
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 2


def test_another_users_task_cannot_be_decided(user, other_user):
    a, b = nodes(other_user, "Bob's note on deploys.", "Bob's other note on deploys.")
    task = _task(other_user, [a, b], Types.POTENTIAL_MERGE, Tools.MERGE_CONCEPTS)
    for decide in (task_approve, task_reject):
        with pytest.raises(NotFound) as missing:
            decide(actor=user, task_id=task.pk)
        assert missing.value.extra["field"] == "task_id"
    task.refresh_from_db()
    assert task.status == Status.OPEN
    with pytest.raises(InvalidInput):
        task_reject(actor=user, task_id="not-a-uuid")

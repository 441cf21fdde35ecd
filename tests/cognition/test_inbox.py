"""The curation inbox: one open task per node set, never one rejected before, closed by curating its nodes."""
import uuid

import pytest

from apps.cognition.models import CurationTask
from apps.cognition.services.inbox import Proposal, task_open, tasks_close_for, tasks_open
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

MERGE = CurationTask.TaskType.POTENTIAL_MERGE


def _open(owner, nodes):
    return task_open(owner=owner, task_type=MERGE, node_ids=nodes, reason="Near-duplicates (cos 0.93).",
                     suggested_tool="merge_concepts")


def test_one_open_task_per_node_set_in_any_order():
    user, a, b = UserFactory(), uuid.uuid4(), uuid.uuid4()
    first = _open(user, [a, b])
    assert _open(user, [b, a]) == first
    assert CurationTask.objects.count() == 1
    # Another user's identical node set is their own task.
    assert _open(UserFactory(), [a, b]) != first


def test_a_rejected_task_is_never_proposed_again_and_curation_closes_open_ones():
    user, a, b, c = UserFactory(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    rejected = _open(user, [a, b])
    rejected.status = CurationTask.Status.REJECTED
    rejected.save()
    assert _open(user, [a, b]) is None
    other = _open(user, [b, c])
    assert tasks_close_for(owner=user, node_ids=[c], actor=user) == 1
    other.refresh_from_db()
    assert (other.status, other.closed_by) == (CurationTask.Status.DONE, user)
    # Done, so a new finding about the same nodes opens a new task.
    assert _open(user, [b, c]).pk != other.pk


def test_many_node_sets_are_proposed_in_three_queries(django_assert_num_queries):
    user = UserFactory()
    sets = [[uuid.uuid4(), uuid.uuid4()] for _ in range(5)]
    rejected = _open(user, sets[0])
    rejected.status = CurationTask.Status.REJECTED
    rejected.save()
    already = _open(user, sets[1])
    proposals = [Proposal(nodes, "Similar, and no path joins them.", "merge_concepts") for nodes in sets]
    # Read the earlier ones, write the new ones, read them back.
    with django_assert_num_queries(3):
        opened = tasks_open(owner=user, task_type=MERGE, proposals=proposals)
    assert opened[0] is None and opened[1] == already
    assert all(task.status == CurationTask.Status.OPEN for task in opened[1:])
    assert CurationTask.objects.filter(owner=user, status=CurationTask.Status.OPEN).count() == 4
    with django_assert_num_queries(1):  # all open already: nothing to write
        assert tasks_open(owner=user, task_type=MERGE, proposals=proposals) == [None, *opened[1:]]

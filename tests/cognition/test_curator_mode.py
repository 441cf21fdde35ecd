"""The cognition services' curator mode (the admin's): a staff user with the model's change permission decides
another user's task, applies their undo, restores their trash and clears their pad. The data changed is the owner's
(their nodes, their undo), the records name the curator, and nobody else gets the mode."""
import pytest
from django.contrib.auth.models import Permission

from apps.cognition.models import CurationTask, Event, ScratchpadItem, Tombstone, UndoEntry
from apps.cognition.services.curation import node_forget
from apps.cognition.services.decisions import task_approve, task_reject
from apps.cognition.services.inbox import task_open
from apps.cognition.services.scratchpad import scratchpad_clear, scratchpad_store
from apps.cognition.services.undo import node_restore, undo_apply
from apps.core.exceptions import NotFound, PermissionDenied
from apps.memories.models import Memory
from tests.cognition.curation_support import graph_state, link, nodes
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

Types, Tools = CurationTask.TaskType, CurationTask.SuggestedTool


def _staff(username: str, *codenames: str):
    user = UserFactory(username=username, is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="cognition", codename__in=codenames))
    return user


@pytest.fixture
def curator(db):
    """dora: staff, not a superuser, with the change permission on the models the admin acts on."""
    return _staff("dora", "change_curationtask", "change_undoentry", "change_tombstone", "change_scratchpaditem")


@pytest.fixture
def bobs_merge(other_user):
    a, b = nodes(other_user, "Bob's editor uses dark mode.", "Dark mode in Bob's editor, always.")
    x, = nodes(other_user, "Bob configures editors through dotfiles.")
    link(other_user, a, x, 0.6)
    task = task_open(owner=other_user, task_type=Types.POTENTIAL_MERGE, node_ids=[a.pk, b.pk], reason="twins",
                     suggested_tool=Tools.MERGE_CONCEPTS)
    return {"a": a, "b": b, "x": x, "task": task}


def _actors(action: str, node) -> set:
    return set(Event.objects.filter(action=action, node_ids__contains=[node.pk]).values_list("actor__username",
                                                                                          flat=True))


def test_a_curator_approving_a_users_merge_task_changes_their_graph_and_is_the_one_recorded(
        curator, other_user, bobs_merge):
    a, b = bobs_merge["a"], bobs_merge["b"]
    decision = task_approve(actor=curator, task_id=bobs_merge["task"].pk, curator=True)
    merged = Memory.objects.get(pk=decision.outcome.merged.pk)
    # Bob's data: his merged node in his cube, his sources in his trash, his undo.
    assert merged.owner == other_user and merged.cube_id == a.cube_id
    assert set(Memory.objects.filter(pk__in=[a.pk, b.pk], deleted_at__isnull=False).values_list("pk", flat=True)) \
        == {a.pk, b.pk}
    entry = UndoEntry.objects.get(pk=decision.outcome.reversal_hash)
    assert entry.owner == other_user
    # The curator's acts: the decision, the merge's Events, the deletes and links under it, the tombstones.
    assert decision.task.status == "approved" and decision.task.closed_by == curator
    assert _actors("merged", merged) == _actors("merged", a) == {"dora"}
    assert _actors("deleted", a) == _actors("deleted", b) == {"dora"}
    assert _actors("linked", merged) == {"dora"} and _actors("created", merged) == {"dora"}
    assert set(Tombstone.objects.values_list("actor__username", "actor_label")) == {("dora", "dora")}
    # Bob can still undo his merge himself.
    assert undo_apply(actor=other_user, reversal_hash=entry.pk).plan.removed_nodes == [str(merged.pk)]


def test_a_curator_applying_a_users_undo_restores_their_rows_and_is_recorded(curator, other_user, bobs_merge):
    ids = [bobs_merge[name].pk for name in ("a", "b", "x")]
    before = graph_state(ids)
    merged = task_approve(actor=other_user, task_id=bobs_merge["task"].pk).outcome
    result = undo_apply(actor=curator, reversal_hash=merged.reversal_hash, preview=False, curator=True)
    assert result.executed and graph_state(ids) == before
    assert _actors("restored", bobs_merge["a"]) == {"dora"}
    assert _actors("purged", merged.merged) == {"dora"}
    assert UndoEntry.objects.get(pk=merged.reversal_hash).used_at is not None


def test_a_curator_restores_a_users_tombstone_and_rejects_and_clears_for_them(curator, other_user):
    gone, = nodes(other_user, "Bob's old runbook.")
    node_forget(actor=other_user, node_id=gone.pk, reason="obsolete")
    node_restore(actor=curator, node_id=gone.pk, curator=True)
    gone.refresh_from_db()
    assert gone.deleted_at is None and _actors("restored", gone) == {"dora"}
    a, b = nodes(other_user, "Bob's quota is 10 GB.", "Bob's quota is 100 GB.")
    task = task_open(owner=other_user, task_type=Types.AMBIGUITY_DETECTED, node_ids=[a.pk, b.pk], reason="quotas",
                     suggested_tool=Tools.ANNOTATE_NODE)
    rejected = task_reject(actor=curator, task_id=task.pk, curator=True).task
    assert (rejected.status, rejected.closed_by, rejected.owner) == ("rejected", curator, other_user)
    pad = scratchpad_store(actor=other_user, session_id="6b0f3c1e-8a0d-4c55-9d7e-1f2a3b4c5d6e", agent_id="planner",
                           content="Check Bob's quota.")
    cleared = scratchpad_clear(actor=curator, session_id=pad.stored.session_id, agent_id="planner", curator=True)
    assert cleared.cleared == 1 and not ScratchpadItem.objects.exists()


def test_without_staff_status_or_the_change_permission_there_is_no_curator_mode(user, other_user, bobs_merge):
    viewer = _staff("vera", "view_curationtask", "view_undoentry", "view_tombstone", "view_scratchpaditem")
    wrong_model = _staff("walt", "change_undoentry")
    plain = UserFactory(username="pat")
    plain.user_permissions.add(Permission.objects.get(codename="change_curationtask"))  # but not staff
    merged_before = graph_state([bobs_merge[name].pk for name in ("a", "b", "x")])
    for someone in (user, viewer, wrong_model, plain):
        for decide in (task_approve, task_reject):
            with pytest.raises(PermissionDenied):
                decide(actor=someone, task_id=bobs_merge["task"].pk, curator=True)
    assert CurationTask.objects.get(pk=bobs_merge["task"].pk).status == "open"
    assert graph_state([bobs_merge[name].pk for name in ("a", "b", "x")]) == merged_before
    forgotten = node_forget(actor=other_user, node_id=bobs_merge["x"].pk, reason="obsolete")
    for someone in (user, viewer, plain):
        with pytest.raises(PermissionDenied):
            undo_apply(actor=someone, reversal_hash=forgotten.reversal_hash, preview=False, curator=True)
        with pytest.raises(PermissionDenied):
            node_restore(actor=someone, node_id=bobs_merge["x"].pk, curator=True)
    # Without the mode, a staff user is any other user: Bob's undo is not theirs to find.
    with pytest.raises(NotFound):
        undo_apply(actor=wrong_model, reversal_hash=forgotten.reversal_hash, preview=False)
    assert UndoEntry.objects.get(pk=forgotten.reversal_hash).used_at is None

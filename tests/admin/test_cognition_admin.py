"""Admin of Context Graph: every changelist and change page renders read-only without vectors, each action calls its
service in curator mode (the row owner's graph, after checking the curator's staff status and permission; the
records name the curator) and reports a message, and non-staff users are refused."""
import uuid

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.models import (
    Annotation, CgSession, CurationTask, Event, NodeProfile, ScratchpadItem, SessionItem, Tombstone, UndoEntry,
)
from apps.cognition.services.curation import annotation_add, node_forget
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.inbox import task_open
from apps.cognition.services.scratchpad import scratchpad_store
from apps.cognition.services.store import node_store
from apps.cognition.services.undo import undo_apply
from apps.core.exceptions import PermissionDenied
from apps.memories.models import Memory
from tests.admin.support import changelist, run_action
from tests.cognition.curation_support import nodes

pytestmark = pytest.mark.django_db

MODELS = (CurationTask, UndoEntry, Tombstone, Event, CgSession, SessionItem, NodeProfile, Annotation, ScratchpadItem)
RATIONALE = "The team's deployment constraint found while debugging the release"


def change(model, pk) -> str:
    return reverse(f"admin:cognition_{model._meta.model_name}_change", args=[pk])


@pytest.fixture
def alices(user):
    """alice's Context Graph: a stored node (session, item, profile), an annotation, a forgotten node (undo,
    tombstone, events), two curation tasks and a scratchpad item. The admin's curator is carol, another user."""
    stored = node_store(actor=user, rationale=RATIONALE, content="Releases switch blue-green behind the balancer.")
    annotation = annotation_add(actor=user, node_id=stored.memory.pk, text="Confirmed by the platform team.")
    x, y, gone = nodes(user, "The quota is 10 GB.", "The quota is 100 GB.", "The old runbook for the vault.")
    forgotten = node_forget(actor=user, node_id=gone.pk, reason="obsolete")
    ambiguity = task_open(owner=user, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED, node_ids=[x.pk, y.pk],
                          reason="two quotas", suggested_tool=CurationTask.SuggestedTool.ANNOTATE_NODE)
    obsolete = task_open(owner=user, task_type=CurationTask.TaskType.OBSOLETE_INFO, node_ids=[x.pk],
                         reason="old quota", suggested_tool=CurationTask.SuggestedTool.FORGET_CONCEPT)
    pad = scratchpad_store(actor=user, session_id=stored.session.pk, agent_id="planner", content="Check the quota.")
    return {"stored": stored, "annotation": annotation, "gone": gone, "undo": UndoEntry.objects.get(
        pk=forgotten.reversal_hash), "ambiguity": ambiguity, "obsolete": obsolete, "pad_item": pad.stored, "x": x}


def test_every_changelist_and_change_page_renders_read_only_without_vectors(admin_client_for_staff, alices):
    client = admin_client_for_staff
    rows = {CurationTask: alices["obsolete"], UndoEntry: alices["undo"], Tombstone: Tombstone.objects.get(
        memory=alices["gone"]), Event: Event.objects.first(), CgSession: alices["stored"].session,
        SessionItem: SessionItem.objects.first(), NodeProfile: alices["stored"].profile,
        Annotation: alices["annotation"], ScratchpadItem: alices["pad_item"]}
    for model in MODELS:
        listed = client.get(changelist(model))
        assert listed.status_code == 200, model
        assert rows[model].pk in [obj.pk for obj in listed.context["cl"].result_list], model
        page = client.get(change(model, rows[model].pk))
        assert page.status_code == 200, model
        html = page.content.decode()
        assert 'name="_save"' not in html and "<textarea" not in html, model  # nothing to edit
        assert 'id="id_vector"' not in html and "field-vector" not in html and "field-snapshot" not in html, model
    assert client.get(changelist(Event), {"action__exact": "forgotten"}).context["cl"].result_count >= 1
    assert client.get(changelist(CurationTask), {"status__exact": "rejected"}).context["cl"].result_count == 0
    assert "Confirmed by the platform team" not in client.get(changelist(SessionItem)).content.decode()


def test_the_undo_page_shows_its_preview_and_the_action_applies_it(admin_client_for_staff, alices):
    client, undo = admin_client_for_staff, alices["undo"]
    page = client.get(change(UndoEntry, undo.pk)).content.decode()
    assert "What applying this undo would do" in page and str(alices["gone"].pk) in page
    assert run_action(client, UndoEntry, "apply_undo", [undo]) == ["Applied 1 undo entry."]
    undo.refresh_from_db()
    assert undo.used_at is not None and not Tombstone.objects.filter(memory=alices["gone"]).exists()
    # Used up: the page says so instead of a plan, and applying again reports why.
    assert "used already" in client.get(change(UndoEntry, undo.pk)).content.decode()
    [failed] = run_action(client, UndoEntry, "apply_undo", [undo])
    assert failed.startswith("1 failed: This reversal_hash was used already")


def test_viewing_an_undo_page_arms_nothing_but_a_preview_still_does(admin_client_for_staff, alices, user):
    """The page shows the plan without keeping a digest: a write to the node after the visit does not make the apply
    fail. A real preview (restore_from_hash's) still does."""
    client, undo = admin_client_for_staff, alices["undo"]
    assert "What applying this undo would do" in client.get(change(UndoEntry, undo.pk)).content.decode()
    undo.refresh_from_db()
    assert undo.previewed_digest == ""
    Memory.objects.filter(pk=alices["gone"].pk).update(importance=0.9, updated_at=timezone.now())
    assert run_action(client, UndoEntry, "apply_undo", [undo]) == ["Applied 1 undo entry."]
    forgotten = node_forget(actor=user, node_id=alices["x"].pk, reason="obsolete")
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=True)
    Memory.objects.filter(pk=alices["x"].pk).update(importance=0.9, updated_at=timezone.now())
    [refused] = run_action(client, UndoEntry, "apply_undo", [UndoEntry.objects.get(pk=forgotten.reversal_hash)])
    assert "changed since this undo was previewed" in refused


def test_task_actions_approve_and_reject_through_the_decision_service(admin_client_for_staff, alices, user,
                                                                     staff_user):
    client = admin_client_for_staff
    assert run_action(client, CurationTask, "reject", [alices["ambiguity"]]) == ["Rejected 1 curation task."]
    assert run_action(client, CurationTask, "approve", [alices["obsolete"]]) == ["Approved 1 curation task."]
    ambiguity, obsolete = (CurationTask.objects.get(pk=alices[name].pk) for name in ("ambiguity", "obsolete"))
    assert (ambiguity.status, obsolete.status) == ("rejected", "approved")
    assert obsolete.closed_by == ambiguity.closed_by == staff_user  # decided by the curator, in alice's graph
    tombstone = Tombstone.objects.get(memory=alices["x"])
    assert (tombstone.reason, tombstone.actor, tombstone.undo.owner) == ("obsolete", staff_user, user)
    assert Event.objects.get(action="forgotten", node_ids__contains=[alices["x"].pk]).actor == staff_user
    [failed] = run_action(client, CurationTask, "approve", [ambiguity])
    assert "only an open task can be decided" in failed


def test_tombstone_restore_and_scratchpad_clear_actions(admin_client_for_staff, alices):
    client = admin_client_for_staff
    tombstone = Tombstone.objects.get(memory=alices["gone"])
    assert run_action(client, Tombstone, "restore", [tombstone]) == ["Restored 1 tombstone."]
    alices["gone"].refresh_from_db()
    assert alices["gone"].deleted_at is None
    assert run_action(client, ScratchpadItem, "clear_pads", [alices["pad_item"]]) == [
        "Cleared the pads of 1 scratchpad item."]
    assert not ScratchpadItem.objects.exists()


def test_non_staff_are_refused_and_curating_needs_the_change_permission(client, user, alices):
    client.force_login(user)
    for model in MODELS:
        response = client.get(changelist(model))
        assert response.status_code == 302 and "/login/" in response["Location"], model
    assert CurationTask.objects.get(pk=alices["obsolete"].pk).status == "open"
    viewer = User.objects.create_user(username="dave", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_curationtask"))
    with pytest.raises(PermissionDenied):
        curator_scope(actor=viewer, curator=True, rows=CurationTask.objects.filter(pk=alices["obsolete"].pk))
    client.force_login(viewer)
    assert client.get(changelist(CurationTask)).status_code == 200
    response = client.post(changelist(CurationTask), {"action": "approve",
                                                      "_selected_action": [alices["obsolete"].pk]}, follow=True)
    assert CurationTask.objects.get(pk=alices["obsolete"].pk).status == "open"  # the action is not offered
    assert response.status_code == 200
    curator = User.objects.create_user(username="erin", is_staff=True)
    curator.user_permissions.add(Permission.objects.get(codename="change_curationtask"))
    assert curator_scope(actor=curator, curator=True, rows=CurationTask.objects.filter(
        pk=alices["obsolete"].pk)) == alices["obsolete"].owner
    # An unknown row leaves the curator as they are, so the service answers not found.
    assert curator_scope(actor=curator, curator=True, rows=CurationTask.objects.filter(pk=uuid.uuid4())) == curator


def test_dream_runs_are_listed_read_only_and_interrupted_and_undone_through_the_services(
        admin_client_for_staff, user, client, other_user):
    from apps.cognition.models import ConsolidationRun
    from apps.cognition.services.dream import dream_execute, dream_interrupt, dream_trigger
    from tests.cognition.curation_support import everything, link

    a, b = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.")
    link(user, a, b, 0.5)
    talk = CgSession.objects.create(owner=user)
    SessionItem.objects.create(session=talk, kind="query", text="billing", vector=[1.0] + [0.0] * 383, delta_s=0.5,
                               activated=[{"node_id": str(a.pk), "score": 0.9}, {"node_id": str(b.pk), "score": 0.6}])
    before = everything()
    done = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert everything() != before
    queued = dream_trigger(actor=other_user, phase="rem")
    admin = admin_client_for_staff
    listed = admin.get(changelist(ConsolidationRun))
    assert {run.pk for run in listed.context["cl"].result_list} == {done.pk, queued.pk}
    page = admin.get(change(ConsolidationRun, done.pk)).content.decode()
    assert 'name="_save"' not in page and "NREM cluster summaries: done" in page
    assert run_action(admin, ConsolidationRun, "interrupt", [queued]) == ["Interrupted 1 consolidation run."]
    assert ConsolidationRun.objects.get(pk=queued.pk).status == "interrupted"
    [refused] = run_action(admin, ConsolidationRun, "interrupt", [done])
    assert refused.startswith("1 failed:") and "only a queued or running dream" in refused
    assert run_action(admin, ConsolidationRun, "undo", [done]) == ["Undid 1 consolidation run."]
    assert everything() == before and ConsolidationRun.objects.get(pk=done.pk).status == "rolled_back"
    # Without staff status there is no admin, and no curator mode for the service either.
    client.force_login(other_user)
    assert client.get(changelist(ConsolidationRun)).status_code == 302
    with pytest.raises(PermissionDenied):
        dream_interrupt(actor=other_user, run_id=queued.pk, curator=True)

"""Admin of Mind: every changelist renders with its search and filters, change forms are read-only with a
link to the memory node, and the soft delete / restore actions call the services and say what happened."""
import pytest
from django.urls import reverse
from django.utils import timezone

from apps.core.exceptions import PermissionDenied
from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, project_create, project_delete,
)
from tests.admin.support import changelist, run_action

pytestmark = pytest.mark.django_db


def shown(client, model, **params) -> list:
    response = client.get(changelist(model), params)
    assert response.status_code == 200, params
    return [obj.pk for obj in response.context["cl"].result_list]


@pytest.fixture
def carols(staff_user):
    """carol's project with one of each entity."""
    project = project_create(actor=staff_user, name="archive", current_goal="Catalogue the ledgers")
    paused = project_create(actor=staff_user, name="museum", status="paused")
    session = Session.objects.create(project=project, owner=staff_user, started_at=timezone.now(),
                                     ended_at=timezone.now(), summary="Sorted the 1920s ledgers")
    return {
        "project": project, "paused": paused, "session": session,
        "decisions": [decision_add(actor=staff_user, project_id=project.pk, title=title).decision
                      for title in ("Scan ledgers at 600 dpi", "Store scans as TIFF")],
        "issue": issue_add(actor=staff_user, project_id=project.pk, title="Scanner jams on thin paper",
                           severity="blocking"),
        "minor": issue_add(actor=staff_user, project_id=project.pk, title="Label font too small", severity="cosmetic"),
        "edge": edge_add(actor=staff_user, project_id=project.pk, title="Old ink fades under UV light"),
        "episode": episode_create(actor=staff_user, session=session, title="The great sort",
                                  narrative="We sorted every ledger."),
    }


def test_every_changelist_renders_with_search_and_filters(admin_client_for_staff, carols):
    client, project = admin_client_for_staff, carols["project"]
    assert set(shown(client, Project)) == {project.pk, carols["paused"].pk}
    assert shown(client, Project, status__exact="paused") == [carols["paused"].pk]
    assert shown(client, Project, q="ledgers") == [project.pk]
    assert shown(client, Project, state="deleted") == []
    assert shown(client, Session, q="1920s") == [carols["session"].pk]
    assert shown(client, Decision, q="TIFF") == [carols["decisions"][1].pk]
    assert len(shown(client, Decision, status__exact="active", project__id__exact=str(project.pk))) == 2
    assert shown(client, Issue, severity__exact="cosmetic") == [carols["minor"].pk]
    assert set(shown(client, Issue, status__exact="open", state="live")) == {carols["issue"].pk, carols["minor"].pk}
    assert shown(client, SharpEdge, q="UV", share_with_community__exact="0") == [carols["edge"].pk]
    assert shown(client, Episode, q="great sort", project__id__exact=str(project.pk)) == [carols["episode"].pk]


def test_change_form_is_read_only_with_a_node_link(admin_client_for_staff, carols):
    decision = carols["decisions"][0]
    response = admin_client_for_staff.get(reverse("admin:projects_decision_change", args=[decision.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert reverse("admin:memories_memory_change", args=[decision.node_id]) in page
    assert 'name="title"' not in page
    assert admin_client_for_staff.get(reverse("admin:projects_decision_add")).status_code == 403


def test_soft_delete_and_restore_entities(admin_client_for_staff, carols):
    decisions = carols["decisions"]
    assert run_action(admin_client_for_staff, Decision, "soft_delete", decisions) == ["Soft-deleted 2 decisions."]
    assert Decision.objects.filter(deleted_at__isnull=False).count() == 2
    assert all(d.node.deleted_at for d in Decision.objects.select_related("node"))
    assert shown(admin_client_for_staff, Decision, state="live") == []
    assert run_action(admin_client_for_staff, Decision, "restore", decisions[:1]) == ["Restored 1 decision."]
    assert set(shown(admin_client_for_staff, Decision, state="live")) == {decisions[0].pk}
    assert run_action(admin_client_for_staff, Issue, "soft_delete", [carols["issue"]]) == ["Soft-deleted 1 issue."]
    assert run_action(admin_client_for_staff, SharpEdge, "soft_delete", [carols["edge"]]) == [
        "Soft-deleted 1 sharp edge."]
    assert run_action(admin_client_for_staff, Episode, "soft_delete", [carols["episode"]]) == [
        "Soft-deleted 1 episode."]


def test_soft_delete_and_restore_projects(admin_client_for_staff, carols):
    project = carols["project"]
    assert run_action(admin_client_for_staff, Project, "soft_delete", [project]) == ["Soft-deleted 1 project."]
    assert Project.objects.get(pk=project.pk).deleted_at is not None
    assert shown(admin_client_for_staff, Project, state="deleted") == [project.pk]
    assert run_action(admin_client_for_staff, Project, "restore", [project]) == ["Restored 1 project."]
    assert Project.objects.get(pk=project.pk).deleted_at is None


def test_curators_act_on_every_users_things(admin_client_for_staff, user, carols):
    """A staff curator deletes and restores alice's issue and project, and their memory-graph nodes follow."""
    alices_project = project_create(actor=user, name="alice's")
    alices = issue_add(actor=user, project_id=alices_project.pk, title="Alice's private issue")
    assert run_action(admin_client_for_staff, Issue, "soft_delete", [carols["minor"], alices]) == ["Soft-deleted 2 issues."]
    alices.refresh_from_db()
    assert alices.deleted_at is not None and alices.node.deleted_at is not None
    assert run_action(admin_client_for_staff, Issue, "restore", [alices]) == ["Restored 1 issue."]
    alices.refresh_from_db()
    assert alices.deleted_at is None and alices.node.deleted_at is None
    assert run_action(admin_client_for_staff, Project, "soft_delete", [alices_project]) == ["Soft-deleted 1 project."]
    assert Project.objects.get(pk=alices_project.pk).deleted_at is not None


def test_curator_mode_needs_staff_and_the_change_permission(user, other_user):
    """The argument alone grants nothing: bob (not staff) cannot curate alice's issue."""
    project = project_create(actor=user, name="private")
    issue = issue_add(actor=user, project_id=project.pk, title="Only alice's")
    with pytest.raises(PermissionDenied):
        entity_delete(actor=other_user, kind="issue", entity_id=issue.pk, curator=True)
    with pytest.raises(PermissionDenied):
        project_delete(actor=other_user, project_id=project.pk, curator=True)
    assert Issue.objects.get(pk=issue.pk).deleted_at is None


def test_changelist_queries_do_not_grow_with_rows(admin_client_for_staff, staff_user, carols,
                                                  django_assert_max_num_queries):
    for model in (Project, Session, Decision, Issue, SharpEdge, Episode):
        with django_assert_max_num_queries(14) as few:
            admin_client_for_staff.get(changelist(model))
        project = project_create(actor=staff_user, name=f"more {model.__name__}")
        session = Session.objects.create(project=project, owner=staff_user, started_at=timezone.now())
        for n in range(3):
            decision_add(actor=staff_user, project_id=project.pk, title=f"Extra decision {n} on {model.__name__}")
            issue_add(actor=staff_user, project_id=project.pk, title=f"Extra issue {n}")
            edge_add(actor=staff_user, project_id=project.pk, title=f"Extra edge {n}")
            episode_create(actor=staff_user, session=session, title=f"Extra episode {n}", narrative="More.")
        with django_assert_max_num_queries(len(few.captured_queries)):
            admin_client_for_staff.get(changelist(model))

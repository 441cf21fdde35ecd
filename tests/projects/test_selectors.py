import uuid

import pytest
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.models import Cube, CubeMembership
from apps.projects.models import Session
from apps.projects.selectors import (
    decision_get, decision_list, edge_list, entity_get, episode_list, issue_list, project_get, project_list,
    session_get, session_list,
)
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, issue_update, project_create,
)


@pytest.fixture
def filled(user, project):
    """alice's project with two of each kind (one decision superseded, one issue resolved), one global
    edge, two sessions; and a second project with one issue, to see that project filters narrow."""
    sessions = [Session.objects.create(project=project, owner=user, started_at=timezone.now()) for _ in range(2)]
    decision_add(actor=user, project_id=project.pk, title="Use Redis for queues")
    decision_add(actor=user, project_id=project.pk, title="Use Redis for queues", session=sessions[0])
    issue_add(actor=user, project_id=project.pk, title="Login fails", severity="blocking")
    done = issue_add(actor=user, project_id=project.pk, title="Typo", severity="cosmetic")
    issue_update(actor=user, issue_id=done.pk, status="resolved")
    for title in ("Edge crypto", "Edge env vars"):
        edge_add(actor=user, project_id=project.pk, title=title)
    edge_add(actor=user, title="Global gotcha")
    for session in sessions:
        episode_create(actor=user, session=session, title="Story", narrative="It happened.")
    other = project_create(actor=user, name="other")
    issue_add(actor=user, project_id=other.pk, title="Elsewhere")
    return {"project": project, "other": other, "sessions": sessions}


def test_decision_list_in_two_queries(user, filled, django_assert_num_queries):
    with django_assert_num_queries(2):  # the project check, then the list with its relations
        decisions = list(decision_list(actor=user, project_id=filled["project"].pk))
        shown = [(d.project.name, d.status, d.superseded_by.title if d.superseded_by else None) for d in decisions]
    assert shown == [("spawner", "active", None), ("spawner", "superseded", "Use Redis for queues")]
    assert [d.status for d in decision_list(actor=user, status="superseded")] == ["superseded"]


def test_issue_list_filters_in_one_query(user, filled, django_assert_num_queries):
    with django_assert_num_queries(1):
        everything = [(i.title, i.project.name) for i in issue_list(actor=user)]
    assert sorted(everything) == [("Elsewhere", "other"), ("Login fails", "spawner"), ("Typo", "spawner")]
    project_id = filled["project"].pk
    assert [i.title for i in issue_list(actor=user, project_id=project_id, open_only=True)] == ["Login fails"]
    assert [i.title for i in issue_list(actor=user, project_id=project_id, status="resolved")] == ["Typo"]
    assert [i.title for i in issue_list(actor=user, severity="blocking")] == ["Login fails"]


def test_edge_list_scopes(user, filled, django_assert_num_queries):
    project_id = filled["project"].pk
    with django_assert_num_queries(2):
        titles = sorted((e.title, e.project.name if e.project else None)
                        for e in edge_list(actor=user, project_id=project_id, include_global=True))
    assert titles == [("Edge crypto", "spawner"), ("Edge env vars", "spawner"), ("Global gotcha", None)]
    assert len(edge_list(actor=user, project_id=project_id)) == 2
    assert [e.title for e in edge_list(actor=user, global_only=True)] == ["Global gotcha"]
    assert len(edge_list(actor=user, project_id=filled["other"].pk, include_global=True)) == 1


def test_episode_and_session_lists(user, filled, django_assert_num_queries):
    with django_assert_num_queries(1):
        episodes = [(e.session.started_at, e.project.name) for e in episode_list(actor=user)]
    assert len(episodes) == 2
    with django_assert_num_queries(2):
        sessions = [s.project.name for s in session_list(actor=user, project_id=filled["project"].pk)]
    assert sessions == ["spawner", "spawner"]
    assert session_get(actor=user, session_id=filled["sessions"][0].pk) == filled["sessions"][0]


def test_gets_take_one_query(user, filled, django_assert_num_queries):
    decision = decision_list(actor=user).first()
    with django_assert_num_queries(1):
        got = decision_get(actor=user, decision_id=str(decision.pk))
        assert (got.project.name, got.node.kind) == ("spawner", "decision")
    with django_assert_num_queries(1):
        assert project_get(actor=user, project_id=filled["project"].pk).cube.owner_id == user.pk


def test_project_list_stays_one_query_as_projects_grow(user, filled, django_assert_num_queries):
    for index in range(5):
        project_create(actor=user, name=f"p{index}")
    with django_assert_num_queries(1):
        counts = {p.name: p.open_issue_count for p in project_list(actor=user)}
    assert counts["spawner"] == 1 and counts["other"] == 1 and counts["p4"] == 0 and len(counts) == 7


def test_deleted_entities_are_hidden_unless_asked(user, filled):
    issue = issue_list(actor=user, severity="blocking").get()
    entity_delete(actor=user, kind="issue", entity_id=issue.pk)
    assert issue.pk not in {i.pk for i in issue_list(actor=user)}
    assert issue.pk in {i.pk for i in issue_list(actor=user, include_deleted=True)}
    assert entity_get(actor=user, kind="issue", entity_id=issue.pk, include_deleted=True).deleted_at is not None


def test_bob_sees_nothing_of_alices(user, other_user, filled):
    assert list(decision_list(actor=other_user)) == [] and list(issue_list(actor=other_user)) == []
    assert list(edge_list(actor=other_user)) == [] and list(episode_list(actor=other_user)) == []
    for call in (lambda: decision_list(actor=other_user, project_id=filled["project"].pk),
                 lambda: session_list(actor=other_user, project_id=filled["project"].pk),
                 lambda: edge_list(actor=other_user, project_id=filled["project"].pk, include_global=True)):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value.code == "project_not_found"
    with pytest.raises(NotFound):
        session_get(actor=other_user, session_id=filled["sessions"][0].pk)
    with pytest.raises(NotFound):
        decision_get(actor=other_user, decision_id=decision_list(actor=user).first().pk)


def test_a_cube_member_sees_shared_projects_entities(user, other_user):
    Cube.objects.create(id="team", name="Team", owner=user)
    CubeMembership.objects.create(cube_id="team", user=other_user, role=CubeMembership.Role.READER)
    shared = project_create(actor=user, name="shared", cube_id="team")
    issue_add(actor=user, project_id=shared.pk, title="Shared bug")
    assert [i.title for i in issue_list(actor=other_user)] == ["Shared bug"]
    assert [p.open_issue_count for p in project_list(actor=other_user)] == [1]


@pytest.mark.parametrize(("call", "field"), [
    (lambda user: issue_list(actor=user, status="closed"), "status"),
    (lambda user: issue_list(actor=user, severity="critical"), "severity"),
    (lambda user: decision_list(actor=user, status="maybe"), "status"),
    (lambda user: entity_get(actor=user, kind="thought", entity_id=uuid.uuid4()), "kind"),
])
def test_bad_filters_are_refused(user, call, field):
    with pytest.raises(InvalidInput) as caught:
        call(user)
    assert caught.value.field == field


def test_unknown_session_is_not_found(user):
    with pytest.raises(NotFound) as caught:
        session_get(actor=user, session_id="sess_01HX")
    assert caught.value.extra["field"] == "session_id"

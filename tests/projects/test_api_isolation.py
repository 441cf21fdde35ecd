"""Bob cannot see or touch Alice's Mind through REST: every read and write of her projects and entities
answers "not found" (never "forbidden", which would confirm the id), and every list leaves them out."""
import pytest
from django.utils import timezone

from apps.cubes.models import Cube, CubeMembership
from apps.projects.models import Decision, Issue, Project, Session, SharpEdge
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, project_create, project_delete, project_export,
)
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

SECRET = "Alice keeps the launch codes in a Supabase table"


@pytest.fixture
def other_api(other_user, api_client_for):
    return api_client_for(other_user)



@pytest.fixture
def alices(user, project, export_dir):
    """alice's project with one of each entity (and a global edge, and an export file)."""
    session = Session.objects.create(project=project, owner=user, started_at=timezone.now(), ended_at=timezone.now())
    things = {
        "project": project,
        "decision": decision_add(actor=user, project_id=project.pk, title=SECRET, reasoning=SECRET).decision,
        "issue": issue_add(actor=user, project_id=project.pk, title=f"Issue: {SECRET}", symptoms=[SECRET]),
        "edge": edge_add(actor=user, project_id=project.pk, title=f"Edge: {SECRET}",
                         detection_patterns=[{"type": "code", "pattern": "launch", "description": SECRET}]),
        "global_edge": edge_add(actor=user, title=f"Global: {SECRET}",
                                detection_patterns=[{"type": "intent", "pattern": "launch", "description": SECRET}]),
        "episode": episode_create(actor=user, session=session, title=f"Episode: {SECRET}", narrative=SECRET),
        "session": session,
    }
    things["export"] = project_export(actor=user, format="json", project_id=project.pk).path.name
    return things


def urls(things) -> dict[str, str]:
    return {
        "project": f"/api/v1/projects/{things['project'].pk}/",
        "decision": f"/api/v1/decisions/{things['decision'].pk}/",
        "issue": f"/api/v1/issues/{things['issue'].pk}/",
        "edge": f"/api/v1/sharp-edges/{things['edge'].pk}/",
        "global_edge": f"/api/v1/sharp-edges/{things['global_edge'].pk}/",
        "episode": f"/api/v1/episodes/{things['episode'].pk}/",
    }


def assert_hidden(response) -> None:
    assert_error(response, 404)
    assert SECRET not in response.content.decode()


def test_every_read_of_alices_things_is_not_found(other_api, alices):
    for url in urls(alices).values():
        assert_hidden(other_api.get(url))
    assert_hidden(other_api.get(f"/api/v1/projects/{alices['project'].pk}/sessions/"))
    assert_hidden(other_api.get(f"/api/v1/exports/{alices['export']}/"))


def test_every_write_to_alices_things_is_not_found_and_changes_nothing(other_api, alices):
    paths = urls(alices)
    patches = {"project": {"current_goal": "hijacked"}, "decision": {"title": "hijacked"},
               "issue": {"status": "resolved"}, "edge": {"title": "hijacked"}, "global_edge": {"title": "hijacked"}}
    for name, url in paths.items():
        if name in patches:
            assert_hidden(other_api.patch(url, patches[name], format="json"))
        assert_hidden(other_api.delete(url))
        assert_hidden(other_api.post(f"{url}restore/", format="json"))
    assert_hidden(other_api.post(f"{paths['issue']}attempts/", {"what": "x", "result": "y"}, format="json"))
    project_id = str(alices["project"].pk)
    for url, body in (("/api/v1/decisions/", {"title": "planted"}), ("/api/v1/issues/", {"title": "planted"}),
                      ("/api/v1/sharp-edges/", {"title": "planted"}), ("/api/v1/exports/", {}),
                      ("/api/v1/sharp-edges/check/", {"intent": "launch"}),
                      ("/api/v1/projects/context/", {"query": "launch codes"})):
        response = other_api.post(url, {**body, "project": project_id}, format="json")
        assert_error(response, 404, code="project_not_found", field="project")

    project = Project.objects.get(pk=project_id)
    assert project.current_goal == "Implement memory MCP" and project.deleted_at is None
    assert not Decision.objects.filter(title__in=["hijacked", "planted"]).exists()
    assert not SharpEdge.objects.filter(title__in=["hijacked", "planted"]).exists()
    issue = Issue.objects.get(pk=alices["issue"].pk)
    assert issue.status == "open" and issue.attempts == [] and issue.deleted_at is None
    assert not Issue.objects.filter(title="planted").exists()


def test_restoring_alices_deleted_things_is_not_found(user, other_api, alices):
    entity_delete(actor=user, kind="decision", entity_id=alices["decision"].pk)
    assert_hidden(other_api.post(f"/api/v1/decisions/{alices['decision'].pk}/restore/", format="json"))
    project_delete(actor=user, project_id=alices["project"].pk)
    assert_hidden(other_api.post(f"/api/v1/projects/{alices['project'].pk}/restore/", format="json"))
    assert Project.objects.get(pk=alices["project"].pk).deleted_at is not None


def test_bobs_lists_leave_alices_things_out(user, other_user, other_api, other_project, alices):
    bobs = decision_add(actor=other_user, project_id=other_project.pk, title="Bob uses SQLite").decision
    listing = other_api.get("/api/v1/projects/", {"deleted": "include"}).json()
    assert [item["id"] for item in listing["results"]] == [str(other_project.pk)]
    decisions = other_api.get("/api/v1/decisions/", {"deleted": "include"}).json()
    assert [item["id"] for item in decisions["results"]] == [str(bobs.pk)]
    for url in ("/api/v1/issues/", "/api/v1/sharp-edges/", "/api/v1/episodes/"):
        body = other_api.get(url, {"deleted": "include"}).json()
        assert body["count"] == 0 and SECRET not in str(body), url
    for url in ("/api/v1/decisions/", "/api/v1/issues/", "/api/v1/sharp-edges/", "/api/v1/episodes/"):
        assert_error(other_api.get(url, {"project": str(alices["project"].pk)}), 404, field="project")
    assert other_api.get("/api/v1/exports/").json()["count"] == 0


def test_bobs_checks_and_context_never_show_alices_edges_or_entities(other_api, alices):
    check = other_api.post("/api/v1/sharp-edges/check/", {"code": "launch()", "intent": "launch"}, format="json")
    assert check.status_code == 200 and check.json() == {"warnings": []}
    context = other_api.post("/api/v1/projects/context/", {"query": "launch codes supabase"}, format="json")
    assert context.status_code == 200
    assert context.json() == {"decisions": [], "issues": [], "edges": [], "episodes": []}


def test_alice_sees_what_bob_cannot(api, alices):
    """The same requests as Alice succeed, so the 404s above are about ownership, not broken ids."""
    for url in urls(alices).values():
        assert api.get(url).status_code == 200, url
    assert api.get(f"/api/v1/exports/{alices['export']}/").status_code == 200
    check = api.post("/api/v1/sharp-edges/check/", {"code": "launch()", "intent": "launch"}, format="json").json()
    assert {warning["edge"]["id"] for warning in check["warnings"]} == {
        str(alices["edge"].pk), str(alices["global_edge"].pk)}


def test_a_reader_of_a_shared_cube_may_read_but_not_change(user, other_user, other_api):
    """Sharing is by cube: bob, a reader of alice's team cube, sees its project but changing it is forbidden."""
    cube = Cube.objects.create(id="team-mind", name="Team", owner=user)
    CubeMembership.objects.create(cube=cube, user=other_user, role=CubeMembership.Role.READER)
    shared = project_create(actor=user, name="team project", cube_id=cube.pk)
    decision = decision_add(actor=user, project_id=shared.pk, title="Deploy on Fridays never").decision
    assert other_api.get(f"/api/v1/projects/{shared.pk}/").status_code == 200
    assert [item["id"] for item in other_api.get("/api/v1/decisions/").json()["results"]] == [str(decision.pk)]
    assert_error(other_api.patch(f"/api/v1/projects/{shared.pk}/", {"status": "archived"}, format="json"), 403)
    assert_error(other_api.delete(f"/api/v1/decisions/{decision.pk}/"), 403)
    assert_error(other_api.post("/api/v1/issues/", {"project": str(shared.pk), "title": "x"}, format="json"), 403)
    assert Project.objects.get(pk=shared.pk).status == "active"
    assert Decision.objects.get(pk=decision.pk).deleted_at is None and not Issue.objects.exists()

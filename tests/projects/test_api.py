"""Contracts of Mind's REST API under /api/v1/: status codes and shapes of every endpoint, bad input
naming the field, and lists at a fixed number of queries. Everything runs through the real services,
the embedded PostgreSQL and the real embedding model."""
import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.projects.models import Decision, Episode, Issue, Project, Session, SharpEdge
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, project_create, project_delete,
)
from apps.core.validation import MAX_TITLE_CHARS
from apps.projects.validation import MAX_ITEMS, MAX_PHRASE_CHARS, MAX_TEXT_CHARS
from tests.api.envelope import assert_error
from tests.projects.seed_examples import CRYPTO_EDGE

pytestmark = pytest.mark.django_db

PROJECT_FIELDS = {
    "id", "name", "cube", "stack", "repo_path", "current_goal", "blocked_by", "open_threads", "status",
    "last_session_at", "last_session_summary", "last_session_next_steps", "created_at", "updated_at", "deleted_at",
}
SHARED = {"id", "project", "cube", "node", "session", "access_count", "last_accessed_at", "created_at", "updated_at",
          "deleted_at"}
DECISION_FIELDS = SHARED | {"title", "description", "context", "reasoning", "alternatives", "confidence",
                            "revisit_if", "trigger_phrases", "status", "superseded_by"}
ISSUE_FIELDS = SHARED | {"title", "description", "severity", "status", "symptoms", "attempts", "current_theory",
                         "blocked_by", "resolution", "trigger_phrases", "resolved_at"}
EDGE_FIELDS = SHARED | {"title", "description", "workaround", "detection_patterns", "symptoms", "root_cause",
                        "share_with_community", "is_global"}
EPISODE_FIELDS = SHARED | {"title", "narrative", "mood_arc", "lessons", "breakthroughs", "frustrations"}
SESSION_FIELDS = {"id", "project", "started_at", "ended_at", "is_active", "summary", "progress", "still_open",
                  "next_steps", "mood", "issue_updates", "created_at"}
PAGE_FIELDS = {"count", "next", "previous", "results"}



def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["results"]]


def make_session(actor, project, **fields) -> Session:
    """A session row as mind_start_session leaves it (sessions have no REST write)."""
    return Session.objects.create(project=project, owner=actor, started_at=timezone.now(), **fields)


def make_episode(actor, project, title="Shipped the memory layer"):
    session = make_session(actor, project, ended_at=timezone.now(), summary="significant progress")
    return episode_create(actor=actor, session=session, title=title, narrative="We built it and it held up.",
                          lessons=["Small steps"], mood_arc=["stuck", "relieved"])


@pytest.fixture
def decision(user, project):
    return decision_add(actor=user, project_id=project.pk, title="Use Supabase for backend",
                        reasoning="Vercel Edge timeout too short for webhooks",
                        alternatives=[{"option": "Cloudflare Workers", "rejected_because": "No native Postgres"}],
                        trigger_phrases=["why supabase"]).decision


@pytest.fixture
def issue(user, project):
    return issue_add(actor=user, project_id=project.pk, title="Safari drops the session cookie", severity="blocking",
                     symptoms=["401 after login on Safari"])


@pytest.fixture
def edge(user, project):
    return edge_add(actor=user, project_id=project.pk, **CRYPTO_EDGE)


# --- Projects ------------------------------------------------------------------------------------

def test_create_project(api, user):
    response = api.post("/api/v1/projects/", {"name": "spawner", "stack": ["django"], "repo_path": "/src/spawner",
                                              "current_goal": "Ship Mind", "status": "paused"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == PROJECT_FIELDS
    assert (body["name"], body["stack"], body["status"], body["cube"]) == ("spawner", ["django"], "paused",
                                                                           f"alice-{user.pk}")
    assert Project.objects.get(pk=body["id"]).owner == user


def test_create_project_with_a_taken_name_is_a_conflict(api, project):
    error = assert_error(api.post("/api/v1/projects/", {"name": "SPAWNER"}, format="json"), 409,
                         code="project_name_taken", field="name")
    assert "spawner" in error["message"].lower()


def test_list_projects_filters_by_status_and_deletion(api, user, project, issue):
    paused = project_create(actor=user, name="paused one", status="paused")
    gone = project_create(actor=user, name="gone")
    project_delete(actor=user, project_id=gone.pk)
    response = api.get("/api/v1/projects/")
    assert set(response.json()) == PAGE_FIELDS
    assert set(ids(response)) == {str(project.pk), str(paused.pk)}
    listed = {item["id"]: item for item in response.json()["results"]}
    assert listed[str(project.pk)]["open_issue_count"] == 1 and listed[str(paused.pk)]["open_issue_count"] == 0
    assert set(listed[str(project.pk)]) == PROJECT_FIELDS | {"open_issue_count"}
    assert ids(api.get("/api/v1/projects/", {"status": "paused"})) == [str(paused.pk)]
    assert ids(api.get("/api/v1/projects/", {"deleted": "only"})) == [str(gone.pk)]
    assert len(ids(api.get("/api/v1/projects/", {"deleted": "include"}))) == 3
    page = api.get("/api/v1/projects/", {"limit": 1}).json()
    assert page["count"] == 2 and len(page["results"]) == 1 and page["next"]


def test_get_patch_delete_restore_project(api, project):
    url = f"/api/v1/projects/{project.pk}/"
    assert api.get(url).json()["name"] == "spawner"
    response = api.patch(url, {"current_goal": "Ship REST", "blocked_by": ["review"], "open_threads": ["docs"],
                               "stack": ["django"], "add_to_stack": ["pgvector", "django"], "status": "paused",
                               "repo_path": "/src/spawner", "name": "Spawner II"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["current_goal"], body["blocked_by"], body["open_threads"]) == ("Ship REST", ["review"], ["docs"])
    assert (body["stack"], body["status"], body["repo_path"], body["name"]) == (
        ["django", "pgvector"], "paused", "/src/spawner", "Spawner II")

    response = api.delete(url)
    assert response.status_code == 204 and response.content == b""
    assert ids(api.get("/api/v1/projects/")) == []
    assert api.get(url).json()["deleted_at"] is not None
    restored = api.post(f"{url}restore/", format="json")
    assert restored.status_code == 200 and restored.json()["deleted_at"] is None
    assert ids(api.get("/api/v1/projects/")) == [str(project.pk)]


def test_restoring_a_project_whose_name_was_taken_is_a_conflict(api, user, project):
    project_delete(actor=user, project_id=project.pk)
    project_create(actor=user, name="Spawner")
    assert_error(api.post(f"/api/v1/projects/{project.pk}/restore/", format="json"), 409, field="name")


def test_project_sessions(api, user, project):
    older = make_session(user, project, ended_at=timezone.now(), summary="first")
    newer = make_session(user, project)
    response = api.get(f"/api/v1/projects/{project.pk}/sessions/")
    assert ids(response) == [str(newer.pk), str(older.pk)]
    first = response.json()["results"][0]
    assert set(first) == SESSION_FIELDS and first["is_active"] is True and first["project"] == str(project.pk)


# --- Decisions -----------------------------------------------------------------------------------

def test_add_decision_and_supersede(api, project):
    body = {"project": str(project.pk), "title": "Build Mind from scratch instead of forking VibeMemo",
            "description": "Create our own memory system", "context": "Could not access VibeMemo's source",
            "reasoning": "Full control", "alternatives": [{"option": "Fork VibeMemo",
                                                           "rejected_because": "Can't verify source quality"}],
            "confidence": 0.8, "revisit_if": "We need features VibeMemo already has",
            "trigger_phrases": ["why not vibememo", "build vs fork"]}
    response = api.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 201, response.content
    first = response.json()
    assert set(first) == {"decision", "superseded"} and first["superseded"] is None
    assert set(first["decision"]) == DECISION_FIELDS
    assert first["decision"]["alternatives"] == body["alternatives"] and first["decision"]["confidence"] == 0.8
    assert first["decision"]["node"] and first["decision"]["project"] == str(project.pk)

    again = api.post("/api/v1/decisions/", {**body, "reasoning": "Simpler architecture"}, format="json").json()
    assert again["superseded"]["id"] == first["decision"]["id"]
    assert again["superseded"]["status"] == "superseded"
    assert again["superseded"]["superseded_by"] == again["decision"]["id"]


def test_list_decisions_filters(api, user, project, decision):
    other = project_create(actor=user, name="other")
    elsewhere = decision_add(actor=user, project_id=other.pk, title="Use htmx for the dashboard").decision
    revoked = decision_add(actor=user, project_id=project.pk, title="Adopt GraphQL for the public API").decision
    Decision.objects.filter(pk=revoked.pk).update(status="revoked")
    entity_delete(actor=user, kind="decision", entity_id=elsewhere.pk)
    assert set(ids(api.get("/api/v1/decisions/"))) == {str(decision.pk), str(revoked.pk)}
    assert ids(api.get("/api/v1/decisions/", {"status": "revoked"})) == [str(revoked.pk)]
    assert ids(api.get("/api/v1/decisions/", {"project": str(other.pk)})) == []
    assert ids(api.get("/api/v1/decisions/", {"project": str(other.pk), "deleted": "only"})) == [str(elsewhere.pk)]
    assert ids(api.get("/api/v1/decisions/", {"deleted": "only"})) == [str(elsewhere.pk)]
    assert len(ids(api.get("/api/v1/decisions/", {"deleted": "include"}))) == 3


def test_get_patch_delete_restore_decision(api, decision):
    url = f"/api/v1/decisions/{decision.pk}/"
    assert set(api.get(url).json()) == DECISION_FIELDS
    response = api.patch(url, {"confidence": 0.4, "status": "revoked", "trigger_phrases": ["db choice"]},
                         format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["confidence"], response.json()["status"]) == (0.4, "revoked")
    assert response.json()["title"] == "Use Supabase for backend"
    assert api.delete(url).status_code == 204
    assert ids(api.get("/api/v1/decisions/")) == []
    assert api.post(f"{url}restore/", format="json").json()["deleted_at"] is None
    assert ids(api.get("/api/v1/decisions/")) == [str(decision.pk)]


# --- Issues --------------------------------------------------------------------------------------

def test_add_issue_defaults_to_major(api, project):
    response = api.post("/api/v1/issues/", {"project": str(project.pk), "title": "Webhooks time out",
                                            "symptoms": ["504 from Vercel"]}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == ISSUE_FIELDS
    assert (body["severity"], body["status"], body["attempts"]) == ("major", "open", [])


def test_attempts_are_appended_and_kept(api, issue):
    url = f"/api/v1/issues/{issue.pk}/attempts/"
    first = api.post(url, {"what": "Tried SameSite=None on cookies", "result": "Still failing on Safari",
                           "learned": "Not a cookie scope issue"}, format="json")
    assert first.status_code == 201, first.content
    second = api.post(url, {"what": "Disabled ITP", "result": "Works"}, format="json").json()
    assert set(second) == ISSUE_FIELDS
    assert [attempt["what"] for attempt in second["attempts"]] == ["Tried SameSite=None on cookies", "Disabled ITP"]
    assert second["attempts"][0]["learned"] == "Not a cookie scope issue" and second["attempts"][0]["at"]
    assert api.get(f"/api/v1/issues/{issue.pk}/").json()["attempts"] == second["attempts"]


def test_list_issues_filters_by_status_and_severity(api, user, project, issue):
    minor = issue_add(actor=user, project_id=project.pk, title="Typo in the footer", severity="cosmetic")
    assert set(ids(api.get("/api/v1/issues/"))) == {str(issue.pk), str(minor.pk)}
    assert ids(api.get("/api/v1/issues/", {"severity": "cosmetic"})) == [str(minor.pk)]
    api.patch(f"/api/v1/issues/{minor.pk}/", {"status": "resolved", "resolution": "Fixed"}, format="json")
    assert ids(api.get("/api/v1/issues/", {"status": "resolved"})) == [str(minor.pk)]
    assert ids(api.get("/api/v1/issues/", {"status": "open", "project": str(project.pk)})) == [str(issue.pk)]


def test_patch_delete_restore_issue(api, issue):
    url = f"/api/v1/issues/{issue.pk}/"
    response = api.patch(url, {"status": "resolved", "resolution": "Set the cookie domain",
                               "current_theory": "ITP"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "resolved" and response.json()["resolved_at"]
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["deleted_at"] is not None
    assert api.post(f"{url}restore/", format="json").json()["deleted_at"] is None


# --- Sharp edges ---------------------------------------------------------------------------------

def test_add_global_and_project_edges(api, project):
    response = api.post("/api/v1/sharp-edges/", CRYPTO_EDGE, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == EDGE_FIELDS
    assert body["is_global"] is True and body["project"] is None
    assert [pattern["type"] for pattern in body["detection_patterns"]] == ["code", "context"]
    own = api.post("/api/v1/sharp-edges/", {"project": str(project.pk), "title": "Migrations lock the table"},
                   format="json").json()
    assert own["is_global"] is False
    assert ids(api.get("/api/v1/sharp-edges/", {"project": str(project.pk)})) == [own["id"]]
    assert set(ids(api.get("/api/v1/sharp-edges/"))) == {own["id"], body["id"]}


def test_patch_delete_restore_edge(api, edge):
    url = f"/api/v1/sharp-edges/{edge.pk}/"
    response = api.patch(url, {"workaround": "Use SubtleCrypto", "detection_patterns": [
        {"type": "intent", "pattern": "hash|uuid", "description": "Hashing"}]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["workaround"] == "Use SubtleCrypto"
    assert response.json()["detection_patterns"][0]["type"] == "intent"
    assert api.delete(url).status_code == 204
    assert ids(api.get("/api/v1/sharp-edges/")) == []
    assert api.post(f"{url}restore/", format="json").status_code == 200


def test_check_edges_with_the_seed_example(api, edge):
    response = api.post("/api/v1/sharp-edges/check/", {"code": "const token = crypto.randomUUID()",
                                                        "context": {"runtime": "edge"}}, format="json")
    assert response.status_code == 200, response.content
    [warning] = response.json()["warnings"]
    assert set(warning) == {"edge", "matched_pattern", "severity", "recommendation"}
    assert warning["edge"]["id"] == str(edge.pk) and warning["severity"] == "high"
    assert warning["matched_pattern"]["type"] == "code"
    assert warning["recommendation"] == CRYPTO_EDGE["workaround"]
    quiet = api.post("/api/v1/sharp-edges/check/", {"intent": "write the README"}, format="json")
    assert quiet.json() == {"warnings": []}


def test_check_and_context_are_reads_for_a_read_token(user, api_client_for, project, edge):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post("/api/v1/sharp-edges/check/", {"code": "crypto.createHash('sha1')"},
                       format="json").status_code == 200
    assert reader.post("/api/v1/projects/context/", {"query": "crypto"}, format="json").status_code == 200
    assert_error(reader.post("/api/v1/sharp-edges/", CRYPTO_EDGE, format="json"), 403)


# --- Episodes ------------------------------------------------------------------------------------

def test_episodes_list_get_update_delete_restore(api, user, project):
    episode = make_episode(user, project)
    other = make_episode(user, project_create(actor=user, name="other"), title="Another story")
    assert ids(api.get("/api/v1/episodes/", {"project": str(project.pk)})) == [str(episode.pk)]
    url = f"/api/v1/episodes/{episode.pk}/"
    body = api.get(url).json()
    assert set(body) == EPISODE_FIELDS and body["lessons"] == ["Small steps"]
    edited = api.patch(url, {"title": "The storage day, retold", "lessons": ["Small steps", "Measure"]}, format="json")
    assert edited.status_code == 200 and edited.json()["lessons"] == ["Small steps", "Measure"]
    assert "The storage day, retold" in Episode.objects.get(pk=episode.pk).node.content
    assert_error(api.patch(url, {}, format="json"), 400)
    assert_error(api.patch(url, {"mood": "sad"}, format="json"), 400)
    assert_error(api.post("/api/v1/episodes/", {"title": "new"}, format="json"), 405)
    assert api.delete(url).status_code == 204
    assert ids(api.get("/api/v1/episodes/")) == [str(other.pk)]
    assert ids(api.get("/api/v1/episodes/", {"deleted": "only"})) == [str(episode.pk)]
    assert api.post(f"{url}restore/", format="json").json()["deleted_at"] is None


# --- Context -------------------------------------------------------------------------------------

def test_context_finds_the_decision_by_meaning(api, user, project, decision, issue, edge):
    response = api.post("/api/v1/projects/context/", {"query": "why did we choose supabase"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"decisions", "issues", "edges", "episodes"}
    assert body["decisions"][0]["id"] == str(decision.pk)
    assert set(body["decisions"][0]) == DECISION_FIELDS
    only = api.post("/api/v1/projects/context/", {"query": "supabase", "types": ["issues"],
                                                  "project": str(project.pk)}, format="json").json()
    assert only["decisions"] == [] and only["edges"] == [] and only["episodes"] == []


# --- Exports -------------------------------------------------------------------------------------


def test_export_list_and_download(api, user, project, decision, issue, export_dir):
    response = api.post("/api/v1/exports/", {"format": "json", "project": str(project.pk)}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"name", "path", "download_url", "entities"}
    assert body["entities"] == {"projects": 1, "decisions": 1, "issues": 1, "edges": 0, "episodes": 0, "sessions": 0}
    assert body["name"].startswith("mind-spawner-") and body["name"].endswith(".json")
    assert body["download_url"] == f"/api/v1/exports/{body['name']}/"

    listing = api.get("/api/v1/exports/").json()
    assert [item["name"] for item in listing["results"]] == [body["name"]]
    assert set(listing["results"][0]) == {"name", "size", "created_at", "download_url"}

    download = api.get(body["download_url"])
    assert download.status_code == 200
    assert download["Content-Disposition"].startswith("attachment") and body["name"] in download["Content-Disposition"]
    assert download["Content-Type"] == "application/json"
    assert b"Use Supabase for backend" in b"".join(download.streaming_content)


def test_markdown_export_of_everything(api, project, decision, export_dir):
    response = api.post("/api/v1/exports/", {"format": "markdown", "include_sessions": True}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["name"].startswith("mind-all-") and response.json()["name"].endswith(".md")
    assert api.get(response.json()["download_url"])["Content-Type"] == "text/markdown"


@pytest.mark.parametrize("name", ["nope.json", "..%2F..%2Fsecret", "mind-all-20260101T000000.exe"])
def test_downloading_an_unknown_export_is_not_found(api, export_dir, name):
    assert_error(api.get(f"/api/v1/exports/{name}/"), 404)


# --- Bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({}, "name"),
    ({"name": ""}, "name"),
    ({"name": 42}, "name"),
    ({"name": "x" * 201}, "name"),
    ({"name": "ok", "status": "sleeping"}, "status"),
    ({"name": "ok", "stack": "django"}, "stack"),
    ({"name": "ok", "stack": ["x"] * (MAX_ITEMS + 1)}, "stack"),
    ({"name": "ok", "cube": "no spaces"}, "cube"),
    ({"name": "ok", "owner": "bob"}, "owner"),
])
def test_create_project_refuses_bad_input(api, body, field):
    assert_error(api.post("/api/v1/projects/", body, format="json"), 400, code="invalid_input", field=field)
    assert not Project.objects.exists()


@pytest.mark.parametrize("body, field", [
    ({}, None),
    ({"status": "done"}, "status"),
    ({"blocked_by": [1, 2]}, "blocked_by"),
    ({"current_goal": "g" * (MAX_TEXT_CHARS + 1)}, "current_goal"),
    ({"add_to_stack": "pg"}, "add_to_stack"),
])
def test_patch_project_refuses_bad_input(api, project, body, field):
    assert_error(api.patch(f"/api/v1/projects/{project.pk}/", body, format="json"), 400, code="invalid_input",
                 field=field)


@pytest.mark.parametrize("body, field", [
    ({"title": "No project"}, "project"),
    ({"project": "{project}"}, "title"),
    ({"project": "{project}", "title": "t" * (MAX_TITLE_CHARS + 1)}, "title"),
    ({"project": "{project}", "title": "   "}, "title"),
    ({"project": "{project}", "title": "ok", "confidence": 1.5}, "confidence"),
    ({"project": "{project}", "title": "ok", "confidence": "high"}, "confidence"),
    ({"project": "{project}", "title": "ok", "alternatives": ["Fork it"]}, "alternatives"),
    ({"project": "{project}", "title": "ok", "alternatives": [{"option": "x", "why": "y"}]}, "alternatives"),
    ({"project": "{project}", "title": "ok", "trigger_phrases": ["p" * (MAX_PHRASE_CHARS + 1)]}, "trigger_phrases"),
    ({"project": "{project}", "title": "ok", "status": "active"}, "status"),
])
def test_add_decision_refuses_bad_input(api, project, body, field):
    body = {key: str(project.pk) if value == "{project}" else value for key, value in body.items()}
    assert_error(api.post("/api/v1/decisions/", body, format="json"), 400, code="invalid_input", field=field)
    assert not Decision.objects.exists()


@pytest.mark.parametrize("body, field", [
    ({"title": "ok", "severity": "critical"}, "severity"),
    ({"title": "ok", "severity": 1}, "severity"),
    ({"title": "ok", "symptoms": "it breaks"}, "symptoms"),
    ({"title": "ok", "status": "open"}, "status"),
])
def test_add_issue_refuses_bad_input(api, project, body, field):
    body = {"project": str(project.pk), **body}
    assert_error(api.post("/api/v1/issues/", body, format="json"), 400, code="invalid_input", field=field)
    assert not Issue.objects.exists()


@pytest.mark.parametrize("body, field", [
    ({"status": "fixed"}, "status"),
    ({"severity": "huge"}, "severity"),
    ({"title": ""}, "title"),
    ({"attempts": []}, "attempts"),
])
def test_patch_issue_refuses_bad_input(api, issue, body, field):
    assert_error(api.patch(f"/api/v1/issues/{issue.pk}/", body, format="json"), 400, code="invalid_input",
                 field=field)


@pytest.mark.parametrize("body, field", [
    ({"result": "nothing"}, "what"),
    ({"what": "x", "result": 3}, "result"),
    ({"what": "x", "result": "y", "at": "yesterday"}, "at"),
    ({"what": "   ", "result": "y"}, "what"),
])
def test_add_attempt_refuses_bad_input(api, issue, body, field):
    assert_error(api.post(f"/api/v1/issues/{issue.pk}/attempts/", body, format="json"), 400, code="invalid_input",
                 field=field)
    issue.refresh_from_db()
    assert issue.attempts == []


@pytest.mark.parametrize("patterns, field", [
    ([{"type": "code", "pattern": "(unclosed", "description": "bad"}], "detection_patterns[0].pattern"),
    ([{"type": "code", "pattern": "ok"}, {"type": "code", "pattern": "a{2,1}"}], "detection_patterns[1].pattern"),
    ([{"type": "regex", "pattern": "x"}], "detection_patterns"),
    ([{"type": "code", "pattern": "x" * 501}], "detection_patterns"),
    ([{"type": "code", "pattern": "x", "flags": "i"}], "detection_patterns"),
    ("crypto", "detection_patterns"),
])
def test_add_edge_refuses_bad_patterns(api, patterns, field):
    response = api.post("/api/v1/sharp-edges/", {"title": "Bad", "detection_patterns": patterns}, format="json")
    assert_error(response, 400, code="invalid_input", field=field)
    assert not SharpEdge.objects.exists()


@pytest.mark.parametrize("body, field", [
    ({"title": "ok", "share_with_community": "yes"}, "share_with_community"),
    ({"title": "ok", "project": 42}, "project"),
    ({"title": ["a list"]}, "title"),
])
def test_add_edge_refuses_wrong_types(api, body, field):
    assert_error(api.post("/api/v1/sharp-edges/", body, format="json"), 400, code="invalid_input", field=field)


def test_patch_edge_with_a_bad_regex_changes_nothing(api, edge):
    response = api.patch(f"/api/v1/sharp-edges/{edge.pk}/", {"detection_patterns": [
        {"type": "code", "pattern": "(?<=a+)b", "description": "variable lookbehind is fine"},
        {"type": "code", "pattern": "[z-a]", "description": "bad range"}]}, format="json")
    assert_error(response, 400, code="invalid_input", field="detection_patterns[1].pattern")
    edge.refresh_from_db()
    assert edge.detection_patterns[0]["pattern"] == CRYPTO_EDGE["detection_patterns"][0]["pattern"]


@pytest.mark.parametrize("url, body, field", [
    ("/api/v1/sharp-edges/check/", {}, None),
    ("/api/v1/sharp-edges/check/", {"code": 12}, "code"),
    ("/api/v1/sharp-edges/check/", {"context": {"os": "linux"}}, "context"),
    ("/api/v1/projects/context/", {}, "query"),
    ("/api/v1/projects/context/", {"query": "x", "types": ["memories"]}, "types"),
    ("/api/v1/projects/context/", {"query": "x", "limit": 0}, "limit"),
    ("/api/v1/projects/context/", {"query": "x", "include_global": "no"}, "include_global"),
    ("/api/v1/exports/", {"format": "pdf"}, "format"),
    ("/api/v1/exports/", {"include_sessions": 1}, "include_sessions"),
])
def test_checks_context_and_exports_refuse_bad_input(api, url, body, field):
    assert_error(api.post(url, body, format="json"), 400, code="invalid_input", field=field)


@pytest.mark.parametrize("query, field", [
    ({"status": "sleeping"}, "status"),
    ({"deleted": "maybe"}, "deleted"),
    ({"limit": 1000}, "limit"),
    ({"owner": "bob"}, "owner"),
])
def test_project_list_refuses_bad_filters(api, query, field):
    assert_error(api.get("/api/v1/projects/", query), 400, code="invalid_input", field=field)


@pytest.mark.parametrize("url, query, field", [
    ("/api/v1/issues/", {"severity": "critical"}, "severity"),
    ("/api/v1/issues/", {"status": "fixed"}, "status"),
    ("/api/v1/decisions/", {"status": "open"}, "status"),
    ("/api/v1/sharp-edges/", {"status": "open"}, "status"),
    ("/api/v1/episodes/", {"deleted": "all"}, "deleted"),
])
def test_entity_lists_refuse_bad_filters(api, url, query, field):
    assert_error(api.get(url, query), 400, code="invalid_input", field=field)


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "00000000-0000-4000-8000-000000000000"])
def test_unknown_ids_are_not_found(api, project, bad_id):
    for url, field in ((f"/api/v1/projects/{bad_id}/", "project_id"),
                       (f"/api/v1/projects/{bad_id}/sessions/", "project_id"),
                       (f"/api/v1/decisions/{bad_id}/", "decision_id"), (f"/api/v1/issues/{bad_id}/", "issue_id"),
                       (f"/api/v1/sharp-edges/{bad_id}/", "edge_id"), (f"/api/v1/episodes/{bad_id}/", "episode_id")):
        assert_error(api.get(url), 404, field=field)
    assert_error(api.post(f"/api/v1/issues/{bad_id}/attempts/", {"what": "x", "result": "y"}, format="json"), 404,
                 code="entity_not_found", field="issue_id")
    for url in ("/api/v1/decisions/", "/api/v1/issues/"):
        assert_error(api.post(url, {"project": bad_id, "title": "Orphan"}, format="json"), 404,
                     code="project_not_found", field="project")
        assert_error(api.get(url, {"project": bad_id}), 404, code="project_not_found", field="project")
    assert_error(api.post("/api/v1/exports/", {"project": bad_id}, format="json"), 404, field="project")


# --- Query counts --------------------------------------------------------------------------------

def assert_queries(api, django_assert_num_queries, url, expected: int, rows: int, params=None):
    """1 token lookup + 1 COUNT + 1 page (+ 1 to check a project filter), however many rows."""
    api.get(url, params)
    with django_assert_num_queries(expected):
        response = api.get(url, params)
    assert len(response.json()["results"]) == rows


def test_project_list_queries(api, user, django_assert_num_queries):
    for n in range(3):
        project = project_create(actor=user, name=f"project {n}")
        issue_add(actor=user, project_id=project.pk, title=f"Issue {n}")
    assert_queries(api, django_assert_num_queries, "/api/v1/projects/", 3, rows=3)


def test_session_list_queries(api, user, project, django_assert_num_queries):
    for _ in range(3):
        make_session(user, project)
    assert_queries(api, django_assert_num_queries, f"/api/v1/projects/{project.pk}/sessions/", 4, rows=3)


def test_entity_list_queries(api, user, project, django_assert_num_queries):
    for n in range(3):
        decision_add(actor=user, project_id=project.pk, title=f"Decision {n} about topic {n * 7}")
        issue_add(actor=user, project_id=project.pk, title=f"Issue {n}")
        edge_add(actor=user, project_id=project.pk if n else None, title=f"Edge {n}")
        make_episode(user, project, title=f"Episode {n}")
    for url in ("/api/v1/decisions/", "/api/v1/issues/", "/api/v1/sharp-edges/", "/api/v1/episodes/"):
        assert_queries(api, django_assert_num_queries, url, 3, rows=3)
    assert_queries(api, django_assert_num_queries, "/api/v1/issues/", 4, rows=3, params={"project": str(project.pk)})


def test_export_list_queries(api, user, project, export_dir, django_assert_num_queries):
    for _ in range(2):
        api.post("/api/v1/exports/", {"format": "markdown"}, format="json")
    api.post("/api/v1/exports/", {"format": "json"}, format="json")
    assert_queries(api, django_assert_num_queries, "/api/v1/exports/", 1, rows=len(list(export_dir.rglob("*.*"))))


# --- Schema --------------------------------------------------------------------------------------

MIND_OPERATIONS = {
    "/api/v1/projects/": {"get", "post"},
    "/api/v1/projects/context/": {"post"},
    "/api/v1/projects/{project_id}/": {"get", "patch", "delete"},
    "/api/v1/projects/{project_id}/restore/": {"post"},
    "/api/v1/projects/{project_id}/sessions/": {"get"},
    "/api/v1/decisions/": {"get", "post"},
    "/api/v1/decisions/{decision_id}/": {"get", "patch", "delete"},
    "/api/v1/decisions/{decision_id}/restore/": {"post"},
    "/api/v1/issues/": {"get", "post"},
    "/api/v1/issues/{issue_id}/": {"get", "patch", "delete"},
    "/api/v1/issues/{issue_id}/restore/": {"post"},
    "/api/v1/issues/{issue_id}/attempts/": {"post"},
    "/api/v1/sharp-edges/": {"get", "post"},
    "/api/v1/sharp-edges/check/": {"post"},
    "/api/v1/sharp-edges/{edge_id}/": {"get", "patch", "delete"},
    "/api/v1/sharp-edges/{edge_id}/restore/": {"post"},
    "/api/v1/episodes/": {"get"},
    "/api/v1/episodes/{episode_id}/": {"get", "patch", "delete"},
    "/api/v1/episodes/{episode_id}/restore/": {"post"},
    "/api/v1/exports/": {"get", "post"},
    "/api/v1/exports/{name}/": {"get"},
}


def test_schema_documents_every_mind_operation(client, tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operations in MIND_OPERATIONS.items():
        assert set(schema["paths"][path]) == operations, path
        for method in operations:
            responses = schema["paths"][path][method]["responses"]
            assert responses["404" if "{" in path else "401"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorEnvelope"}, (path, method)
    enums = schema["components"]["schemas"]
    assert enums["IssueSeverityEnum"]["enum"] == ["blocking", "major", "minor", "cosmetic"]
    assert enums["ProjectStatusEnum"]["enum"] == ["active", "paused", "archived"]

"""The Mind pages (/projects/) through Django's test client: each page renders for its owner and is the
404 page for anybody else, the forms create and update through the services and show the services'
errors next to the field they name, the check-edges page warns, exports download."""
import pytest
from django.urls import reverse
from django.utils import timezone

from apps.projects.models import Decision, Issue, Project, Session, SharpEdge
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, issue_update, project_create,
)

pytestmark = pytest.mark.django_db

CRYPTO_EDGE = {
    "title": "Node crypto not available in Edge", "workaround": "Use the Web Crypto API",
    "detection_patterns": [{"type": "code", "pattern": r"crypto\.randomUUID", "description": "Node crypto"}],
}






@pytest.fixture
def filled(user, project):
    """alice's project with one of everything: issues of two severities (one with an attempt), an active
    and a superseded decision, a project and a global sharp edge, an ended session and its episode."""
    blocking = issue_add(actor=user, project_id=project.pk, title="Safari drops the session cookie",
                         severity="blocking")
    issue_update(actor=user, issue_id=blocking.pk, add_attempt={"what": "SameSite=None", "result": "Still fails"})
    minor = issue_add(actor=user, project_id=project.pk, title="Logo is blurry", severity="minor")
    old = decision_add(actor=user, project_id=project.pk, title="Use SQLite for storage",
                       alternatives=[{"option": "Postgres", "rejected_because": "Too heavy"}]).decision
    new = decision_add(actor=user, project_id=project.pk, title="Use Postgres for storage",
                       reasoning="We need concurrent writers",
                       alternatives=[{"option": "SQLite", "rejected_because": "One writer at a time"}]).decision
    Decision.objects.filter(pk=old.pk).update(status=Decision.Status.SUPERSEDED, superseded_by=new)
    edge = edge_add(actor=user, project_id=project.pk, **CRYPTO_EDGE)
    global_edge = edge_add(actor=user, title="Timezones are UTC in the database")
    now = timezone.now()
    session = Session.objects.create(project=project, owner=user, started_at=now, ended_at=now,
                                     summary="Designed the storage layer", next_steps=["Write the migrations"])
    episode = episode_create(actor=user, session=session, title="The storage day", narrative="We argued, then chose.",
                             lessons=["Measure first"])
    Project.objects.filter(pk=project.pk).update(last_session_at=now, last_session_summary=session.summary,
                                                 last_session_next_steps=session.next_steps)
    return {"blocking": blocking, "minor": minor, "old": old, "new": new, "edge": edge, "global_edge": global_edge,
            "session": session, "episode": episode}


def url(name, *args):
    return reverse(f"projects:{name}", args=args)


# Login and isolation

def test_pages_require_login(client, project):
    for address in (url("project-list"), url("project-detail", project.pk), url("check-edges"), url("export-list")):
        response = client.get(address)
        assert response.status_code == 302 and response["Location"].startswith(reverse("dashboard:login"))


def test_another_users_project_and_entities_are_the_404_page(bob, filled, project):
    issue, decision, edge = filled["blocking"], filled["new"], filled["edge"]
    for address in (
        url("project-detail", project.pk), url("project-edit", project.pk), url("project-delete", project.pk),
        url("decision-create", project.pk), url("issue-create", project.pk), url("edge-create", project.pk),
        url("decision-edit", decision.pk), url("issue-detail", issue.pk), url("edge-edit", edge.pk),
        url("decision-delete", decision.pk), url("episode-delete", filled["episode"].pk),
    ):
        assert bob.get(address).status_code == 404, address
    for address in (url("project-delete", project.pk), url("issue-delete", issue.pk), url("edge-edit", edge.pk),
                    url("issue-attempt", issue.pk), url("decision-restore", decision.pk)):
        assert bob.post(address, {"title": "mine now", "what": "x", "result": "y"}).status_code == 404, address
    issue.refresh_from_db()
    assert issue.deleted_at is None and len(issue.attempts) == 1
    assert Project.objects.get(pk=project.pk).deleted_at is None
    assert "spawner" not in bob.get(url("project-list")).content.decode()


def test_an_unknown_project_id_is_the_404_page(alice):
    assert alice.get(url("project-detail", "00000000-0000-0000-0000-000000000000")).status_code == 404


# The list

def test_list_shows_name_status_goal_open_issues_and_last_session(alice, filled, project, user):
    project_create(actor=user, name="garden", status="paused")
    response = alice.get(url("project-list"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "spawner" in html and "Implement memory MCP" in html and "garden" in html
    rows = {p.name: p for p in response.context["projects"]}
    assert rows["spawner"].open_issue_count == 2 and rows["garden"].open_issue_count == 0
    assert "ago</time>" in html and "never" in html

    paused = alice.get(url("project-list"), {"status": "paused"})
    assert [p.name for p in paused.context["projects"]] == ["garden"]


def test_list_queries_do_not_grow_with_projects(alice, user, django_assert_max_num_queries):
    for index in range(6):
        project = project_create(actor=user, name=f"project {index}")
        issue_add(actor=user, project_id=project.pk, title="An issue")
    # Session, user, and the projects with their open issue counts.
    with django_assert_max_num_queries(3):
        response = alice.get(url("project-list"))
    assert len(response.context["projects"]) == 6


def test_new_project_form_creates_and_shows_field_errors(alice, user, project):
    response = alice.post(url("project-list"), {"name": "mind", "status": "active", "stack": "django, postgres",
                                                "current_goal": "Ship the dashboard"})
    created = Project.objects.get(owner=user, name="mind")
    assert response.status_code == 302 and response["Location"] == url("project-detail", created.pk)
    assert created.stack == ["django", "postgres"] and created.current_goal == "Ship the dashboard"

    taken = alice.post(url("project-list"), {"name": "SPAWNER", "status": "active"})
    assert taken.status_code == 200
    assert "already have a project named" in taken.context["form"].errors["name"][0]
    assert 'id="id_name_error"' in taken.content.decode()

    empty = alice.post(url("project-list"), {"name": "  ", "status": "active"})
    assert "cannot be empty" in empty.context["form"].errors["name"][0]
    assert Project.objects.filter(owner=user).count() == 2


# The project page

def test_project_page_shows_everything_about_the_project(alice, filled, project):
    response = alice.get(url("project-detail", project.pk))
    assert response.status_code == 200
    html = response.content.decode()
    groups = response.context["issue_groups"]
    assert [group["severity"] for group in groups] == ["blocking", "minor"]
    assert groups[0]["issues"][0] == filled["blocking"]
    assert "1 attempt" in html and "SameSite=None" in html
    assert "Use Postgres for storage" in html and "rejected because One writer at a time" in html
    assert "entity-superseded" in html and "by “Use Postgres for storage”" in html
    assert "Node crypto not available in Edge" in html and "Timezones are UTC in the database" in html
    assert "badge-global" in html
    assert "Designed the storage layer" in html and "Write the migrations" in html
    assert "The storage day" in html and "Measure first" in html


def test_project_page_queries_are_bounded(alice, filled, project, user, django_assert_max_num_queries):
    for index in range(5):
        issue_add(actor=user, project_id=project.pk, title=f"Another issue {index}")
        decision_add(actor=user, project_id=project.pk, title=f"Decision about topic {index} of many")
    # Session, user, the project (once per list: each selector checks access), one query a list, and
    # the primer's (last session, open issues, active decisions, edges in scope).
    with django_assert_max_num_queries(21):
        assert alice.get(url("project-detail", project.pk)).status_code == 200


def test_edit_project(alice, project):
    page = alice.get(url("project-edit", project.pk))
    assert page.status_code == 200 and "Implement memory MCP" in page.content.decode()
    response = alice.post(url("project-edit", project.pk), {
        "name": "spawner", "status": "paused", "current_goal": "Ship it", "stack": "",
        "repo_path": "", "blocked_by": "Waiting on review\n\nDesign sign-off", "open_threads": "",
    })
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.status, project.current_goal) == ("paused", "Ship it")
    assert project.blocked_by == ["Waiting on review", "Design sign-off"]

    bad = alice.post(url("project-edit", project.pk), {"name": "x" * 201, "status": "active"})
    assert bad.status_code == 200 and bad.context["form"].errors["name"]


def test_delete_project_asks_first_then_restores(alice, project):
    confirm = alice.get(url("project-delete", project.pk))
    assert confirm.status_code == 200 and "Delete the project" in confirm.content.decode()
    assert Project.objects.get(pk=project.pk).deleted_at is None
    assert alice.post(url("project-delete", project.pk)).status_code == 302
    deleted = alice.get(url("project-detail", project.pk)).content.decode()  # its page, read only, to restore it
    assert "This project was deleted on" in deleted and f'action="{url("project-restore", project.pk)}"' in deleted
    assert url("project-edit", project.pk) not in deleted
    listed = alice.get(url("project-list"), {"deleted": "on"}).content.decode()
    assert url("project-restore", project.pk) in listed
    assert alice.get(url("project-restore", project.pk)).status_code == 405
    assert alice.post(url("project-restore", project.pk)).status_code == 302
    assert alice.get(url("project-detail", project.pk)).status_code == 200


# Decisions

def test_decision_form_records_alternatives_one_a_line(alice, project):
    response = alice.post(url("decision-create", project.pk), {
        "title": "Build Mind from scratch", "reasoning": "Full control",
        "alternatives": "Fork VibeMemo: Can't verify source quality\nUse mem0", "confidence": "0.8",
        "trigger_phrases": "build vs fork, why not vibememo",
    })
    assert response.status_code == 302
    decision = Decision.objects.get(project=project)
    assert decision.alternatives == [
        {"option": "Fork VibeMemo", "rejected_because": "Can't verify source quality"},
        {"option": "Use mem0", "rejected_because": ""},
    ]
    assert decision.confidence == 0.8 and decision.trigger_phrases == ["build vs fork", "why not vibememo"]


def test_decision_form_errors_go_next_to_the_field(alice, project):
    response = alice.post(url("decision-create", project.pk), {"title": "Pick a queue", "confidence": "5"})
    assert response.status_code == 200
    assert "confidence" in response.context["form"].errors
    empty_option = alice.post(url("decision-create", project.pk), {"title": "Pick a queue", "alternatives": ": why"})
    assert empty_option.context["form"].errors["alternatives"][0].startswith("Line 1: option")
    assert not Decision.objects.filter(project=project).exists()


def test_edit_decision_and_mark_it_revoked(alice, filled):
    decision = filled["new"]
    page = alice.get(url("decision-edit", decision.pk))
    assert "SQLite: One writer at a time" in page.content.decode()
    response = alice.post(url("decision-edit", decision.pk), {
        "title": decision.title, "reasoning": "We need many concurrent writers", "status": "revoked",
        "alternatives": "SQLite: One writer at a time", "confidence": "0.7",
    })
    assert response.status_code == 302
    decision.refresh_from_db()
    assert decision.status == "revoked" and decision.reasoning == "We need many concurrent writers"


def test_edit_episode(alice, bob, filled):
    episode = filled["episode"]
    page = alice.get(url("episode-edit", episode.pk))
    assert page.status_code == 200 and "We argued, then chose." in page.content.decode()
    assert bob.get(url("episode-edit", episode.pk)).status_code == 404
    response = alice.post(url("episode-edit", episode.pk), {
        "title": "The storage day", "narrative": "We argued, then chose Postgres.", "mood_arc": "tense\nrelieved",
        "lessons": "Measure first", "breakthroughs": "", "frustrations": "",
    })
    assert response.status_code == 302
    episode.refresh_from_db()
    assert episode.narrative == "We argued, then chose Postgres." and episode.mood_arc == ["tense", "relieved"]
    assert "chose Postgres" in episode.node.content
    blank = alice.post(url("episode-edit", episode.pk), {"title": "", "narrative": "x"})
    assert blank.status_code == 200 and 'id="id_title_error"' in blank.content.decode()
    episode.refresh_from_db()
    assert episode.title == "The storage day" and episode.narrative == "We argued, then chose Postgres."


def test_delete_asks_first_and_restore_brings_it_back(alice, filled, project):
    decision = filled["new"]
    confirm = alice.get(url("decision-delete", decision.pk), {"project": project.pk})
    assert confirm.status_code == 200 and "Use Postgres for storage" in confirm.content.decode()
    assert Decision.objects.get(pk=decision.pk).deleted_at is None
    assert alice.get(url("decision-delete", decision.pk), {"project": "not-an-id"}).status_code == 200

    assert alice.post(url("decision-delete", decision.pk)).status_code == 302
    assert Decision.objects.get(pk=decision.pk).deleted_at is not None
    assert decision not in alice.get(url("project-detail", project.pk)).context["decisions"]
    with_deleted = alice.get(url("project-detail", project.pk), {"deleted": "1"})
    assert url("decision-restore", decision.pk) in with_deleted.content.decode()

    assert alice.post(url("decision-restore", decision.pk)).status_code == 302
    assert Decision.objects.get(pk=decision.pk).deleted_at is None


# Issues

def test_issue_form_opens_an_issue_and_validates(alice, project):
    response = alice.post(url("issue-create", project.pk), {
        "title": "Webhooks time out", "severity": "major",
        "symptoms": "504 Gateway Timeout\n\nFUNCTION_INVOCATION_TIMEOUT",
    })
    assert response.status_code == 302
    issue = Issue.objects.get(project=project)
    assert issue.symptoms == ["504 Gateway Timeout", "FUNCTION_INVOCATION_TIMEOUT"]
    assert "Webhooks time out" in alice.get(url("project-detail", project.pk)).content.decode()

    too_long = alice.post(url("issue-create", project.pk), {"title": "x" * 301, "severity": "major"})
    assert too_long.status_code == 200 and too_long.context["form"].errors["title"]
    bad_severity = alice.post(url("issue-create", project.pk), {"title": "Another", "severity": "apocalyptic"})
    assert bad_severity.context["form"].errors["severity"]
    assert Issue.objects.filter(project=project).count() == 1


def test_issue_page_updates_status_theory_resolution_and_adds_attempts(alice, filled):
    issue = filled["blocking"]
    page = alice.get(url("issue-detail", issue.pk))
    assert page.status_code == 200 and "SameSite=None" in page.content.decode()

    alice.post(url("issue-attempt", issue.pk), {"what": "Partitioned cookies", "result": "Works in Safari 17",
                                                "learned": "ITP is the cause"})
    response = alice.post(url("issue-detail", issue.pk), {
        "title": issue.title, "description": "", "severity": "blocking", "status": "resolved",
        "current_theory": "Safari ITP blocks third-party cookies", "blocked_by": "",
        "resolution": "Use partitioned cookies",
    })
    assert response.status_code == 302
    issue.refresh_from_db()
    assert [a["what"] for a in issue.attempts] == ["SameSite=None", "Partitioned cookies"]
    assert issue.attempts[1]["learned"] == "ITP is the cause"
    assert (issue.status, issue.resolution) == ("resolved", "Use partitioned cookies")
    assert issue.current_theory == "Safari ITP blocks third-party cookies"


def test_an_attempt_without_what_was_tried_is_refused_next_to_the_field(alice, filled):
    issue = filled["blocking"]
    response = alice.post(url("issue-attempt", issue.pk), {"what": "", "result": "Nothing"})
    assert response.status_code == 200
    assert response.context["attempt_form"].errors["what"][0].startswith("What was tried")
    issue.refresh_from_db()
    assert len(issue.attempts) == 1


# Sharp edges

def edge_post(title, rows, **fields):
    data = {"title": title, "patterns-TOTAL_FORMS": str(len(rows)), "patterns-INITIAL_FORMS": "0", **fields}
    for index, row in enumerate(rows):
        data.update({f"patterns-{index}-{name}": value for name, value in row.items()})
    return data


def test_edge_form_adds_patterns_rows_and_a_global_edge(alice, project, user):
    rows = [{"type": "code", "pattern": r"crypto\.randomUUID", "description": "Node crypto", "file_glob": "*.ts"},
            {"type": "code", "pattern": "", "description": "", "file_glob": ""},
            {"type": "intent", "pattern": "edge|serverless", "description": "Edge runtime", "file_glob": ""}]
    response = alice.post(url("edge-create", project.pk), edge_post("No Node crypto on the edge", rows,
                                                                    workaround="Use Web Crypto"))
    assert response.status_code == 302
    edge = SharpEdge.objects.get(title="No Node crypto on the edge")
    assert edge.project == project
    assert [(p["type"], p["pattern"], p.get("file_glob")) for p in edge.detection_patterns] == [
        ("code", r"crypto\.randomUUID", "*.ts"), ("intent", "edge|serverless", None)]

    alice.post(url("edge-create", project.pk), edge_post("Dates are UTC", [], is_global="on"))
    assert SharpEdge.objects.get(title="Dates are UTC").project is None


def test_a_bad_regex_is_shown_on_its_row(alice, project):
    rows = [{"type": "code", "pattern": "fine", "description": "", "file_glob": ""},
            {"type": "code", "pattern": "(unclosed", "description": "", "file_glob": ""}]
    response = alice.post(url("edge-create", project.pk), edge_post("Broken", rows))
    assert response.status_code == 200
    row_errors = [row.errors for row in response.context["rows"].forms]
    assert not row_errors[0] and row_errors[1]["pattern"]
    assert not SharpEdge.objects.filter(title="Broken").exists()


def test_edit_edge_keeps_untouched_patterns_and_removes_checked_ones(alice, filled, project):
    edge = filled["edge"]
    form = alice.get(url("edge-edit", edge.pk)).context["rows"]
    assert form.forms[0].initial["pattern"] == r"crypto\.randomUUID"
    data = edge_post(edge.title, [
        {"type": "code", "pattern": r"crypto\.randomUUID", "description": "Node crypto", "file_glob": ""},
        {"type": "context", "pattern": "edge", "description": "", "file_glob": ""},
    ], workaround="Use self.crypto")
    data["patterns-INITIAL_FORMS"] = "1"
    assert alice.post(url("edge-edit", edge.pk), data).status_code == 302
    edge.refresh_from_db()
    assert [p["pattern"] for p in edge.detection_patterns] == [r"crypto\.randomUUID", "edge"]
    assert edge.workaround == "Use self.crypto"

    data.update({"patterns-0-DELETE": "on", "patterns-INITIAL_FORMS": "2"})
    alice.post(url("edge-edit", edge.pk), data)
    edge.refresh_from_db()
    assert [p["pattern"] for p in edge.detection_patterns] == ["edge"]


# The check-edges page

def test_check_edges_page_warns_for_a_matching_code_pattern(alice, filled, project):
    page = alice.get(url("check-edges"), {"project": project.pk})
    assert page.status_code == 200 and page.context["form"]["project"].value() == str(project.pk)
    response = alice.post(url("check-edges"), {"code": "const token = crypto.randomUUID()", "runtime": "edge"})
    html = response.content.decode()
    assert [w.edge for w in response.context["warnings"]] == [filled["edge"]]
    assert "Node crypto not available in Edge" in html and r"crypto\.randomUUID" in html
    assert "Use the Web Crypto API" in html

    quiet = alice.post(url("check-edges"), {"code": "print('hello')"})
    assert quiet.context["warnings"] == [] and "No sharp edges match" in quiet.content.decode()


def test_check_edges_page_does_not_see_other_users_edges(bob, filled, other_project):
    response = bob.post(url("check-edges"), {"code": "crypto.randomUUID()"})
    assert response.context["warnings"] == []
    mine = bob.post(url("check-edges"), {"code": "x", "project": str(filled["edge"].project_id)})
    assert mine.context["form"].errors["project"]


# Exports

def test_export_writes_lists_and_downloads_only_for_the_owner(alice, bob, filled, project, export_dir):
    response = alice.post(url("export-list"), {"format": "json", "project": project.pk})
    assert response.status_code == 302
    listing = alice.get(url("export-list"))
    files = list(listing.context["files"])
    assert len(files) == 1
    name = files[0]["name"]
    assert name.startswith("mind-") and name.endswith(".json")
    download = alice.get(url("export-download", name))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    assert b"Safari drops the session cookie" in b"".join(download.streaming_content)

    assert bob.get(url("export-download", name)).status_code == 404
    assert alice.get(url("export-download", "..%2F..%2Fsettings.py")).status_code == 404
    assert list(bob.get(url("export-list")).context["files"]) == []

    markdown = alice.post(url("export-list"), {"format": "markdown"}, follow=True)
    assert any(m.message.startswith("Exported mind-all-") for m in markdown.context["messages"])


def test_an_unknown_export_format_is_refused(alice, export_dir):
    response = alice.post(url("export-list"), {"format": "xml"}, follow=True)
    assert response.status_code == 200
    assert any("xml" in m.message for m in response.context["messages"])


def test_deleted_entities_of_the_project_stay_hidden_by_default(alice, filled, user, project):
    entity_delete(actor=user, kind="issue", entity_id=filled["minor"].pk)
    response = alice.get(url("project-detail", project.pk))
    assert "Logo is blurry" not in response.content.decode()
    assert response.context["open_issue_count"] == 1


def test_restoring_a_project_whose_name_was_taken_says_why(alice, user, project):
    alice.post(url("project-delete", project.pk))
    project_create(actor=user, name="Spawner")
    response = alice.post(url("project-restore", project.pk), follow=True)
    assert response.status_code == 200
    assert any("already named" in m.message for m in response.context["messages"])
    assert Project.objects.get(pk=project.pk).deleted_at is not None

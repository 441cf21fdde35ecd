"""project_export, export_list, export_path: contents and counts of JSON and Markdown, the per-user folder,
safe names, isolation."""
import json
import shutil

import pytest
from django.conf import settings
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound
from apps.projects.models import Session
from apps.projects.services import (
    decision_add, edge_add, entity_delete, episode_create, issue_add, issue_update, project_create,
)
from apps.projects.services.export import export_dir, export_list, export_path, project_export


@pytest.fixture(autouse=True)
def clean_exports():
    shutil.rmtree(settings.ENGRAM_EXPORT_DIR, ignore_errors=True)
    yield
    shutil.rmtree(settings.ENGRAM_EXPORT_DIR, ignore_errors=True)


@pytest.fixture
def filled(user, project):
    """spawner with one of everything (and a deleted issue), a second project, and a global edge."""
    session = Session.objects.create(project=project, owner=user, started_at=timezone.now(), summary="Designed")
    decision_add(actor=user, project_id=project.pk, title="Use Supabase for backend", reasoning="Edge timeouts",
                 alternatives=[{"option": "Cloudflare Workers", "rejected_because": "No native Postgres"}])
    issue = issue_add(actor=user, project_id=project.pk, title="Safari login", severity="blocking")
    issue_update(actor=user, issue_id=issue.pk, add_attempt={"what": "SameSite=None", "result": "Still failing",
                                                             "learned": "Not a cookie scope issue"})
    gone = issue_add(actor=user, project_id=project.pk, title="Deleted issue")
    entity_delete(actor=user, kind="issue", entity_id=gone.pk)
    edge_add(actor=user, project_id=project.pk, title="Node crypto in Edge", workaround="Use Web Crypto",
             detection_patterns=[{"type": "code", "pattern": "crypto\\.randomUUID", "file_glob": "*.ts"}])
    episode_create(actor=user, session=session, title="The cookie hunt", narrative="We chased cookies.",
                   lessons=["Check ITP first"])
    other = project_create(actor=user, name="Other Project")
    decision_add(actor=user, project_id=other.pk, title="Tabs")
    edge_add(actor=user, title="Global gotcha")
    return project


def test_json_export_of_everything(user, filled):
    result = project_export(actor=user, include_sessions=True)
    assert result.entities == {"projects": 2, "decisions": 2, "issues": 1, "edges": 2, "episodes": 1, "sessions": 1}
    assert result.path.parent == export_dir(user) == settings.ENGRAM_EXPORT_DIR / str(user.pk)
    assert result.path.name.startswith("mind-all-") and result.path.suffix == ".json"
    document = json.loads(result.path.read_text())
    assert document["entities"] == result.entities
    by_name = {p["name"]: p for p in document["projects"]}
    spawner = by_name["spawner"]
    assert spawner["decisions"][0]["alternatives"] == [
        {"option": "Cloudflare Workers", "rejected_because": "No native Postgres"}]
    assert spawner["issues"][0]["attempts"][0]["learned"] == "Not a cookie scope issue"
    assert [i["title"] for i in spawner["issues"]] == ["Safari login"]
    assert spawner["edges"][0]["detection_patterns"][0]["file_glob"] == "*.ts"
    assert spawner["episodes"][0]["lessons"] == ["Check ITP first"]
    assert spawner["sessions"][0]["summary"] == "Designed"
    assert [e["title"] for e in document["global_edges"]] == ["Global gotcha"]
    assert not list(result.path.parent.glob(".partial-*"))


def test_one_project_without_sessions(user, filled):
    result = project_export(actor=user, project_id=str(filled.pk))
    assert result.entities == {"projects": 1, "decisions": 1, "issues": 1, "edges": 1, "episodes": 1, "sessions": 0}
    assert result.path.name.startswith("mind-spawner-")
    document = json.loads(result.path.read_text())
    assert "sessions" not in document["projects"][0] and document["global_edges"] == []


def test_markdown_export_reads_like_a_document(user, filled):
    result = project_export(actor=user, format="markdown", include_sessions=True)
    assert result.path.suffix == ".md"
    text = result.path.read_text()
    assert text.startswith("# Mind export\n")
    for part in ("## spawner", "## Other Project", "### Decisions", "#### Use Supabase for backend",
                 "- Cloudflare Workers (rejected because: No native Postgres)", "#### [blocking] Safari login",
                 "- SameSite=None -> Still failing (learned: Not a cookie scope issue)",
                 "**Workaround:** Use Web Crypto",
                 "- code: `crypto\\.randomUUID` in `*.ts`", "#### The cookie hunt", "We chased cookies.",
                 "### Sessions", "## Global sharp edges", "#### Global gotcha"):
        assert part in text
    assert "Deleted issue" not in text


def test_two_exports_in_one_second_keep_both(user, project):
    first = project_export(actor=user)
    second = project_export(actor=user)
    assert first.path != second.path and first.path.exists() and second.path.exists()


def test_list_and_path_are_per_user(user, other_user, filled):
    path = project_export(actor=user).path
    [listed] = export_list(actor=user)
    assert (listed["name"], listed["size"]) == (path.name, path.stat().st_size)
    assert listed["created_at"] == listed["modified_at"]
    assert export_path(actor=user, name=path.name) == path
    assert export_list(actor=other_user) == []
    with pytest.raises(NotFound):
        export_path(actor=other_user, name=path.name)


@pytest.mark.parametrize("name", [
    "../1/mind-all-20260101T000000.json", "mind-all-20260101T000000.json/..", "/etc/passwd", "mind-all.json",
    "mind-all-20260101T000000.exe", None, 5,
])
def test_export_path_refuses_unsafe_or_unknown_names(user, name):
    with pytest.raises(NotFound) as caught:
        export_path(actor=user, name=name)
    assert caught.value.extra["field"] == "name"


def test_isolation_of_the_export(user, other_user, filled, other_project):
    theirs = project_export(actor=other_user)
    assert theirs.entities == {"projects": 1, "decisions": 0, "issues": 0, "edges": 0, "episodes": 0, "sessions": 0}
    assert "Supabase" not in theirs.path.read_text()
    with pytest.raises(NotFound) as caught:
        project_export(actor=other_user, project_id=filled.pk)
    assert caught.value.code == "project_not_found"


@pytest.mark.parametrize("arguments, field", [
    ({"format": "csv"}, "format"),
    ({"include_sessions": "yes"}, "include_sessions"),
])
def test_bad_input(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        project_export(actor=user, **arguments)
    assert caught.value.field == field


def test_export_reads_a_fixed_number_of_queries(user, filled, django_assert_max_num_queries):
    for index in range(3):
        project_create(actor=user, name=f"extra {index}")
    with django_assert_max_num_queries(8):
        project_export(actor=user, include_sessions=True)

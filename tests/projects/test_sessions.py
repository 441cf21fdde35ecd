"""Sessions: finding or creating the project, the primer and its ranking, pending decisions, relevant edges,
the current session, ending, and the episode rules."""
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.projects.models import Episode, Project, Session
from apps.projects.services import decision_add, edge_add, issue_add, issue_update, project_create, project_update
from apps.projects.services.check import edges_check
from apps.projects.services.sessions import (
    Situation, condition_holds, issue_points, names_issue, project_primer, session_current, session_end,
    session_start,
)


def started(session, minutes):
    """Pretend the session began ``minutes`` ago."""
    Session.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(minutes=minutes))
    return session


# Finding the project

def test_a_new_name_creates_the_project(user):
    result = session_start(actor=user, project_name="spawner", client_key="k")
    assert result.project_created
    assert result.project.name == "spawner" and result.project.owner == user
    assert result.session.project == result.project and result.session.client_key == "k"
    assert result.primer.startswith("First session on spawner.")


def test_a_known_name_finds_the_project_ignoring_case(user, project):
    result = session_start(actor=user, project_name="SPAWNER")
    assert (result.project, result.project_created) == (project, False)


def test_project_id_finds_the_project(user, project):
    assert session_start(actor=user, project_id=str(project.pk)).project == project


def test_a_path_finds_the_deepest_project_containing_it(user):
    outer = project_create(actor=user, name="mono", repo_path="/src/mono")
    inner = project_create(actor=user, name="lib", repo_path="/src/mono/lib")
    assert session_start(actor=user, detect_from_path="/src/mono").project == outer
    assert session_start(actor=user, detect_from_path="/src/mono/lib/utils/x.py").project == inner
    assert session_start(actor=user, detect_from_path="/src/mono/app").project == outer


def test_an_unknown_path_creates_a_project_named_after_it(user):
    result = session_start(actor=user, detect_from_path="/home/me/code/spawner/")
    assert result.project_created
    assert (result.project.name, result.project.repo_path) == ("spawner", "/home/me/code/spawner")


def test_no_argument_takes_the_latest_active_project(user, project):
    newer = project_create(actor=user, name="newer")
    project_create(actor=user, name="paused", status="paused")
    assert session_start(actor=user).project == newer


def test_no_argument_and_no_project_says_what_to_pass(user):
    with pytest.raises(InvalidInput) as caught:
        session_start(actor=user)
    assert caught.value.field == "project_name"
    assert "project_id, project_name or detect_from_path" in caught.value.message


@pytest.mark.parametrize("arguments, field", [
    ({"project_name": "x" * 201}, "project_name"),
    ({"project_name": ""}, "project_name"),
    ({"detect_from_path": "/"}, "detect_from_path"),
    ({"detect_from_path": 5}, "detect_from_path"),
])
def test_bad_start_input(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        session_start(actor=user, **arguments)
    assert caught.value.field == field


def test_isolation_of_start(user, other_user, project):
    with pytest.raises(NotFound) as caught:
        session_start(actor=other_user, project_id=project.pk)
    assert caught.value.code == "project_not_found"
    with pytest.raises(NotFound):
        session_start(actor=other_user, project_id="not-a-uuid")
    theirs = session_start(actor=other_user, project_name="spawner")
    assert theirs.project_created and theirs.project.owner == other_user
    assert session_start(actor=other_user, detect_from_path="/nowhere/spawner2").project.owner == other_user


# Current session

def test_starting_ends_the_clients_earlier_session_only(user, project):
    first = session_start(actor=user, project_id=project.pk, client_key="a").session
    other_client = session_start(actor=user, project_id=project.pk, client_key="b").session
    second = session_start(actor=user, project_id=project.pk, client_key="a").session
    first.refresh_from_db()
    other_client.refresh_from_db()
    assert first.ended_at is not None and first.summary == ""
    assert other_client.ended_at is None
    assert session_current(actor=user, client_key="a") == second
    assert not Episode.objects.exists()


def test_current_session_is_per_user_and_client(user, other_user, project):
    session = session_start(actor=user, project_id=project.pk, client_key="a").session
    assert session_current(actor=user, client_key="a") == session
    assert session_current(actor=user, client_key="b") is None
    assert session_current(actor=other_user, client_key="a") is None


# Primer

def test_names_issue_and_conditions():
    assert names_issue("Fix the VibeMemo source access first", "VibeMemo source access")
    assert names_issue("investigate safari login cookies", "Safari login cookie")
    assert not names_issue("write the docs", "Safari login cookie")
    assert condition_holds("We need features VibeMemo already has", {"port", "vibememo", "features", "lack"})
    assert not condition_holds("We need features VibeMemo already has", {"vibememo"})
    assert not condition_holds("", {"vibememo"})


def test_a_blocking_issue_outranks_a_minor_one(user, project):
    minor = issue_add(actor=user, project_id=project.pk, title="Typo in footer", severity="minor")
    blocking = issue_add(actor=user, project_id=project.pk, title="Database down", severity="blocking")
    result = session_start(actor=user, project_id=project.pk)
    assert result.open_issues == [blocking, minor]
    assert result.primer.index("Database down") < result.primer.index("Typo in footer")


def test_an_issue_named_in_the_next_steps_gets_80_points(user, project):
    named = issue_add(actor=user, project_id=project.pk, title="Flaky upload test", severity="minor")
    major = issue_add(actor=user, project_id=project.pk, title="Slow dashboard", severity="major")
    now = timezone.now()
    before = issue_points(named, Situation.of(project, None, now))
    project_update(actor=user, project_id=project.pk, current_goal="")
    session_start(actor=user, project_id=project.pk, client_key="k")
    session_end(actor=user, client_key="k", summary="Chased uploads", next_steps=["Fix the flaky upload test"])
    project.refresh_from_db()
    assert issue_points(named, Situation.of(project, None, now)) - before == pytest.approx(80)
    result = session_start(actor=user, project_id=project.pk)
    assert result.open_issues == [named, major]


def test_goal_related_issues_rank_higher(user, project):
    unrelated = issue_add(actor=user, project_id=project.pk, title="Logo too small", severity="major")
    related = issue_add(actor=user, project_id=project.pk, title="Memory MCP crashes on start", severity="major")
    assert session_start(actor=user, project_id=project.pk).open_issues == [related, unrelated]


def test_closed_and_deleted_issues_are_not_open(user, project):
    closed = issue_add(actor=user, project_id=project.pk, title="Fixed thing")
    issue_update(actor=user, issue_id=closed.pk, status="resolved")
    assert session_start(actor=user, project_id=project.pk).open_issues == []


def test_the_primer_tells_where_the_last_session_ended(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="VibeMemo source access")
    issue_update(actor=user, issue_id=issue.pk, status="investigating")
    session_start(actor=user, project_id=project.pk, client_key="k")
    session_end(actor=user, client_key="k", summary="Designed memory architecture", still_open=["Sync logic"],
                next_steps=["Implement storage layer"])
    primer = session_start(actor=user, project_id=project.pk, client_key="k").primer
    assert primer.startswith("Last session: Today ")
    assert "\nEnded with: Designed memory architecture\n" in primer
    for line in ("Goal: Implement memory MCP", "- Implement storage layer", "- Sync logic",
                 "- [major] VibeMemo source access (investigating)"):
        assert line in primer


def test_pending_decisions_are_those_whose_revisit_condition_holds(user, project):
    pending = decision_add(actor=user, project_id=project.pk, title="Build Mind from scratch",
                           revisit_if="We need features VibeMemo already has").decision
    decision_add(actor=user, project_id=project.pk, title="Use Postgres", revisit_if="Traffic exceeds one server")
    assert session_start(actor=user, project_id=project.pk).pending_decisions == []
    project_update(actor=user, project_id=project.pk, current_goal="Port the VibeMemo features we lack")
    result = session_start(actor=user, project_id=project.pk)
    assert result.pending_decisions == [pending]
    assert "Decisions to revisit:\n- Build Mind from scratch (revisit if: We need features VibeMemo already has)" \
        in result.primer


def test_relevant_edges_count_as_warned(user, project):
    edge = edge_add(actor=user, project_id=project.pk, title="MCP stdio buffering", workaround="Flush stdout",
                    detection_patterns=[{"type": "intent", "pattern": "mcp"}])
    result = session_start(actor=user, project_id=project.pk)
    assert result.relevant_edges == [edge]
    assert "- MCP stdio buffering: Flush stdout" in result.primer
    assert edges_check(actor=user, intent="an mcp tool", session=result.session) == []


def test_project_primer_previews_the_next_start_without_starting(user, other_user, project):
    """The dashboard's primer: what session_start would say, with no session made and nothing warned."""
    edge = edge_add(actor=user, project_id=project.pk, title="MCP stdio buffering", workaround="Flush stdout",
                    detection_patterns=[{"type": "intent", "pattern": "mcp"}])
    issue_add(actor=user, project_id=project.pk, title="VibeMemo source access", severity="blocking")
    preview = project_primer(actor=user, project_id=project.pk)
    assert Session.objects.count() == 0
    assert preview.relevant_edges == [edge] and [i.title for i in preview.open_issues] == ["VibeMemo source access"]
    started_primer = session_start(actor=user, project_id=project.pk).primer
    assert preview.primer == started_primer
    with pytest.raises(NotFound):
        project_primer(actor=other_user, project_id=project.pk)


def test_start_reads_a_fixed_number_of_queries(user, project, django_assert_max_num_queries):
    for index in range(4):
        issue_add(actor=user, project_id=project.pk, title=f"Issue {index}")
        decision_add(actor=user, project_id=project.pk, title=f"Decision {index} on topic {index}")
    with django_assert_max_num_queries(16):
        result = session_start(actor=user, project_id=project.pk)
    assert len(result.open_issues) == 4


# Ending and episodes

def test_end_captures_on_the_session_and_the_project(user, project):
    session = session_start(actor=user, project_id=project.pk, client_key="k").session
    ended = session_end(actor=user, client_key="k", summary="Implemented core data models for Mind",
                        progress=["Created models"], still_open=["Sync logic"], next_steps=["Storage layer"],
                        mood="Productive, clear direction")
    assert ended.session == session and ended.episode is None
    session.refresh_from_db()
    project.refresh_from_db()
    assert session.ended_at is not None and session.progress == ["Created models"]
    assert session.mood == "Productive, clear direction"
    assert project.last_session_summary == "Implemented core data models for Mind"
    assert project.last_session_next_steps == ["Storage layer"]
    assert project.last_session_at == session.ended_at
    assert session_current(actor=user, client_key="k") is None


def test_end_without_a_session_is_session_not_active(user, project):
    with pytest.raises(Conflict) as caught:
        session_end(actor=user, client_key="k", summary="x")
    assert caught.value.code == "session_not_active"


def test_end_by_id_and_twice(user, other_user, project):
    session = session_start(actor=user, project_id=project.pk, client_key="k").session
    with pytest.raises(NotFound):
        session_end(actor=other_user, session_id=session.pk, summary="x")
    session_end(actor=user, session_id=session.pk, summary="done")
    with pytest.raises(Conflict) as caught:
        session_end(actor=user, session_id=session.pk, summary="again")
    assert caught.value.code == "session_not_active"


@pytest.mark.parametrize("arguments, field", [
    ({"summary": ""}, "summary"),
    ({"summary": None}, "summary"),
    ({"summary": "x" * 20001}, "summary"),
    ({"summary": "x", "progress": "one"}, "progress"),
    ({"summary": "x", "next_steps": ["a" * 1001]}, "next_steps[0]"),
    ({"summary": "x", "mood": "m" * 501}, "mood"),
])
def test_bad_end_input(user, project, arguments, field):
    session_start(actor=user, project_id=project.pk, client_key="k")
    with pytest.raises(InvalidInput) as caught:
        session_end(actor=user, client_key="k", **arguments)
    assert caught.value.field == field


def test_a_trivial_short_session_writes_no_episode(user, project):
    session = session_start(actor=user, project_id=project.pk, client_key="k").session
    started(session, 10)
    issue = issue_add(actor=user, project_id=project.pk, title="Old issue")
    issue_update(actor=user, issue_id=issue.pk, current_theory="maybe", session=session)
    ended = session_end(actor=user, client_key="k", summary="Looked around", mood="calm")
    assert (ended.episode, ended.episode_reasons) == (None, [])


def start(user, project, minutes=0):
    return started(session_start(actor=user, project_id=project.pk, client_key="k").session, minutes)


def test_artifacts_make_an_episode(user, project):
    session = start(user, project)
    decision_add(actor=user, project_id=project.pk, title="Use pgvector", session=session)
    ended = session_end(actor=user, client_key="k", summary="Chose the vector store\nmore", progress=["Chose"])
    episode = ended.episode
    assert ended.episode_reasons == ["recorded 1 decisions"]
    assert (episode.title, episode.session, episode.project) == ("Chose the vector store", session, project)
    assert "Chose the vector store" in episode.narrative and "- Chose" in episode.narrative
    assert episode.node is not None


def test_fifteen_minutes_with_issue_activity_make_an_episode(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Safari login")
    session = start(user, project, minutes=20)
    issue_update(actor=user, issue_id=issue.pk, session=session,
                 add_attempt={"what": "SameSite=None", "result": "still failing",
                              "learned": "Not a cookie scope issue"})
    issue_update(actor=user, issue_id=issue.pk, status="resolved", session=session)
    ended = session_end(actor=user, client_key="k", summary="Safari login")
    assert ended.episode_reasons == ["20 minutes with issue activity"]
    assert ended.episode.lessons == ["Not a cookie scope issue"]
    assert ended.episode.breakthroughs == ["Resolved: Safari login"]


def test_three_issue_updates_make_an_episode(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Flaky")
    session = start(user, project)
    for theory in ("a", "b", "c"):
        issue_update(actor=user, issue_id=issue.pk, current_theory=theory, session=session)
    assert "3 issue updates" in session_end(actor=user, client_key="k", summary="x").episode_reasons


def test_a_long_session_makes_an_episode(user, project):
    start(user, project, minutes=50)
    assert session_end(actor=user, client_key="k", summary="x").episode_reasons == ["lasted 50 minutes"]


@pytest.mark.parametrize("mood", ["Frustrated by Safari", "stuck on cookies", "Breakthrough at last"])
def test_a_struggle_mood_makes_an_episode(user, project, mood):
    start(user, project)
    ended = session_end(actor=user, client_key="k", summary="x", still_open=["cookies"], mood=mood)
    assert ended.episode_reasons == [f"mood: {mood}"]
    assert ended.episode.mood_arc == [mood]
    assert ended.episode.frustrations == ([] if mood.startswith("Break") else ["cookies"])


def test_a_significant_summary_makes_an_episode(user, project):
    start(user, project)
    ended = session_end(actor=user, client_key="k", summary="A Significant redesign")
    assert ended.episode_reasons == ["summary says significant"]
    assert Episode.objects.filter(project=project).count() == 1
    assert Project.objects.get(pk=project.pk).last_session_summary == "A Significant redesign"

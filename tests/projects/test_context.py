"""context_get: semantic + lexical similarity, the Mind formula with decay and trigger phrases, scope, types,
access counts, isolation."""
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound
from apps.projects.models import Decision, Issue, Session
from apps.projects.services import decision_add, edge_add, episode_create, issue_add, project_create
from apps.projects.services.context import Candidate, context_get, context_score, trigger_matches

SUPABASE = {
    "title": "Use Supabase for backend", "reasoning": "Vercel Edge timeout too short for webhooks",
    "alternatives": [{"option": "Cloudflare Workers", "rejected_because": "No native Postgres"}],
}


def aged(entity, days, **fields):
    """Pretend the entity last changed and was last read ``days`` ago."""
    moment = timezone.now() - timedelta(days=days)
    type(entity).objects.filter(pk=entity.pk).update(updated_at=moment, last_accessed_at=moment, **fields)


def candidate(**fields):
    now = timezone.now()
    values = {"pk": 1, "dense": 0.5, "lexical": 1.0, "status": "active", "trigger_phrases": [], "updated_at": now,
              "last_accessed_at": None, "access_count": 0}
    return Candidate(**{**values, **fields})


# The formula

def test_the_formula_on_a_fresh_entity():
    now = timezone.now()
    # sim = 0.6 x 0.5 + 0.4 x 1.0 = 0.7; recency 0.3, freq 0.1 x log2(2) = 0.1, no decay.
    assert context_score(candidate(access_count=1, updated_at=now), kind="decision", query="q", now=now) == \
        pytest.approx(0.7 * 1.4)


def test_frequency_is_capped_and_decay_follows_half_life_and_status():
    now = timezone.now()
    fresh = context_score(candidate(access_count=1000, updated_at=now), kind="issue", query="q", now=now)
    assert fresh == pytest.approx(0.7 * 1.5)
    old = now - timedelta(days=15)
    resolved = context_score(candidate(status="resolved", updated_at=old), kind="issue", query="q", now=now)
    open_issue = context_score(candidate(status="open", updated_at=old), kind="issue", query="q", now=now)
    recency = 0.3 * 0.5 ** (15 / 7)
    assert resolved == pytest.approx(0.7 * (1 + recency) * 0.5)  # 15 days over 30 x 0.5
    assert open_issue == pytest.approx(0.7 * (1 + recency) * 0.5 ** 0.5)


def test_a_trigger_phrase_adds_0_2():
    now = timezone.now()
    plain = context_score(candidate(updated_at=now), kind="decision", query="build vs fork?", now=now)
    boosted = context_score(candidate(updated_at=now, trigger_phrases=["build vs fork"]), kind="decision",
                            query="build vs fork?", now=now)
    assert boosted - plain == pytest.approx(0.7 * 0.2)


def test_trigger_matching():
    assert trigger_matches(["why not vibememo"], "Why didn't we use VibeMemo?")
    assert trigger_matches(["build vs fork"], "so, BUILD VS FORK again")
    assert not trigger_matches(["build vs fork"], "why build this")
    assert not trigger_matches([], "anything")


# Ranking over stored entities

def test_the_seed_example_finds_the_supabase_decision(user, project):
    wanted = decision_add(actor=user, project_id=project.pk, **SUPABASE).decision
    decision_add(actor=user, project_id=project.pk, title="Tabs over spaces in the editor config")
    result = context_get(actor=user, query="why did we choose supabase")
    assert result.decisions[0] == wanted
    assert result.scores[wanted.pk] > 0.5


def test_an_old_superseded_decision_ranks_below_a_fresh_active_one(user, project):
    old = decision_add(actor=user, project_id=project.pk, title="Store sessions in Redis",
                       reasoning="Fast session storage").decision
    fresh = decision_add(actor=user, project_id=project.pk, title="Store sessions in Postgres",
                         reasoning="One less service for session storage").decision
    Decision.objects.filter(pk=old.pk).update(status="superseded", superseded_by=fresh)
    aged(old, 30)
    result = context_get(actor=user, query="where do we store sessions", types=["decision"])
    assert result.decisions[0] == fresh
    assert result.scores.get(old.pk, 0) < result.scores[fresh.pk] / 4


def test_status_alone_ranks_a_superseded_decision_lower(user, project):
    first = decision_add(actor=user, project_id=project.pk, title="Queue jobs with Celery").decision
    second = decision_add(actor=user, project_id=project.pk, title="Queue jobs with Celery beat").decision
    aged(first, 20, status="superseded")
    aged(second, 20)
    result = context_get(actor=user, query="queue jobs with celery")
    assert result.decisions[0] == second
    assert result.scores[second.pk] > result.scores.get(first.pk, 0)


def test_a_trigger_phrase_lifts_a_decision(user, project):
    plain = decision_add(actor=user, project_id=project.pk, title="Write our own memory system").decision
    triggered = decision_add(actor=user, project_id=project.pk, title="Write our own memory server",
                             trigger_phrases=["build vs fork"]).decision
    result = context_get(actor=user, query="build vs fork")
    assert result.decisions == [triggered, plain]
    assert result.scores[triggered.pk] > result.scores[plain.pk]


def test_long_unread_entities_decay_out(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Safari drops the login cookie")
    assert context_get(actor=user, query="safari login cookie").issues == [issue]
    aged(issue, 400)
    assert context_get(actor=user, query="safari login cookie").issues == []


def test_returned_entities_are_accessed_once_each(user, project, django_assert_max_num_queries):
    session = Session.objects.create(project=project, owner=user, started_at=timezone.now())
    for index in range(3):
        decision_add(actor=user, project_id=project.pk, title=f"Cookie decision {index}: SameSite {index}")
        issue_add(actor=user, project_id=project.pk, title=f"Cookie issue {index}")
        edge_add(actor=user, project_id=project.pk, title=f"Cookie edge {index}")
        episode_create(actor=user, session=session, title=f"Cookie hunt {index}", narrative="Cookies")
    with django_assert_max_num_queries(14):
        result = context_get(actor=user, query="cookie", project_id=project.pk)
    assert [len(result.decisions), len(result.issues), len(result.edges), len(result.episodes)] == [3, 3, 3, 3]
    issue = result.issues[0]
    issue.refresh_from_db()
    assert issue.access_count == 1 and issue.last_accessed_at is not None
    assert Issue.objects.filter(access_count=0).count() == 0


def test_types_limit_and_names(user, project):
    decision_add(actor=user, project_id=project.pk, title="Cookie storage choice")
    edge = edge_add(actor=user, project_id=project.pk, title="Cookie size limit is 4KB")
    result = context_get(actor=user, query="cookie", types=["edges"])
    assert (result.decisions, result.edges) == ([], [edge])
    assert context_get(actor=user, query="cookie", types=["sharp_edge", "decision"], limit=1).edges == [edge]


def test_scope_project_and_global_edges(user, project):
    other = project_create(actor=user, name="other")
    mine = issue_add(actor=user, project_id=project.pk, title="Cookie banner overlaps footer")
    issue_add(actor=user, project_id=other.pk, title="Cookie banner missing")
    global_edge = edge_add(actor=user, title="Cookie banners break Safari")
    scoped = context_get(actor=user, query="cookie banner", project_id=project.pk)
    assert (scoped.issues, scoped.edges) == ([mine], [global_edge])
    assert context_get(actor=user, query="cookie banner", project_id=project.pk, include_global=False).edges == []
    assert len(context_get(actor=user, query="cookie banner").issues) == 2


def test_a_session_scopes_to_its_project_and_checks_edges(user, project):
    edge = edge_add(actor=user, project_id=project.pk, title="Webhooks time out",
                    detection_patterns=[{"type": "intent", "pattern": "webhook"}])
    session = Session.objects.create(project=project, owner=user, started_at=timezone.now())
    result = context_get(actor=user, query="how do webhooks retry", session=session)
    assert [w.edge for w in result.warnings] == [edge]
    session.refresh_from_db()
    assert session.warned_edges == [edge.pk]
    assert context_get(actor=user, query="how do webhooks retry", session=session).warnings == []


def test_isolation(user, other_user, project, other_project):
    issue_add(actor=user, project_id=project.pk, title="Alice's cookie issue")
    edge_add(actor=user, title="Alice's global cookie edge")
    result = context_get(actor=other_user, query="cookie issue edge")
    assert (result.issues, result.edges) == ([], [])
    with pytest.raises(NotFound) as caught:
        context_get(actor=other_user, query="cookie", project_id=project.pk)
    assert caught.value.code == "project_not_found"
    session = Session.objects.create(project=project, owner=user, started_at=timezone.now())
    with pytest.raises(NotFound):
        context_get(actor=other_user, query="cookie", session=session)


@pytest.mark.parametrize("arguments, field", [
    ({"query": ""}, "query"),
    ({"query": None}, "query"),
    ({"query": "x" * 2001}, "query"),
    ({"query": "x", "types": "decision"}, "types"),
    ({"query": "x", "types": ["decisions", "bugs"]}, "types"),
    ({"query": "x", "limit": 0}, "limit"),
    ({"query": "x", "limit": 51}, "limit"),
    ({"query": "x", "include_global": "yes"}, "include_global"),
])
def test_bad_input(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        context_get(actor=user, **arguments)
    assert caught.value.field == field

"""edges_check: each detection pattern type, file globs, symptoms, scope, warn once a session, isolation."""
import pytest
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound
from apps.projects.models import Session
from apps.projects.services import edge_add, entity_delete, project_update
from apps.projects.services.check import edges_check
from tests.projects.seed_examples import CRYPTO_EDGE as SEED_EDGE



def make_session(project, user):
    return Session.objects.create(project=project, owner=user, started_at=timezone.now())


@pytest.fixture
def seed_edge(user, project):
    return edge_add(actor=user, project_id=project.pk, **SEED_EDGE)


def test_a_code_pattern_warns_high_with_the_workaround(user, project, seed_edge):
    [warning] = edges_check(actor=user, code="const token = crypto.randomUUID()", project_id=project.pk)
    assert warning.edge == seed_edge
    assert warning.matched_pattern["type"] == "code"
    assert warning.severity == "high"
    assert warning.recommendation == SEED_EDGE["workaround"]
    assert warning.as_dict()["edge"]["title"] == SEED_EDGE["title"]


def test_unrelated_code_does_not_warn(user, project, seed_edge):
    assert edges_check(actor=user, code="const x = Math.random()", project_id=project.pk) == []


def test_the_strongest_match_is_the_one_reported(user, project, seed_edge):
    # Both the code pattern and the context pattern match: one warning, the code one.
    [warning] = edges_check(actor=user, code="crypto.createHash('sha1')", context={"runtime": "edge crypto"},
                            project_id=project.pk)
    assert (warning.matched_pattern["type"], warning.severity) == ("code", "high")


def test_a_context_pattern_matches_runtime_and_the_project_stack(user, project, seed_edge):
    assert edges_check(actor=user, context={"runtime": "edge"}, project_id=project.pk) == []
    project_update(actor=user, project_id=project.pk, add_to_stack=["crypto"])
    [warning] = edges_check(actor=user, context={"runtime": "edge"}, project_id=project.pk)
    assert (warning.matched_pattern["type"], warning.severity) == ("context", "medium")


def test_a_context_pattern_matches_the_goal(user, project, seed_edge):
    project_update(actor=user, project_id=project.pk, current_goal="Sign webhooks with crypto on the edge")
    [warning] = edges_check(actor=user, project_id=project.pk)
    assert warning.matched_pattern["pattern"] == "edge.*crypto|crypto.*edge"


def test_an_intent_pattern_warns_high(user, project):
    edge = edge_add(actor=user, project_id=project.pk, title="Webhooks time out on Vercel", workaround="Use a queue",
                    detection_patterns=[{"type": "intent", "pattern": "webhook|long running", "description": ""}])
    [warning] = edges_check(actor=user, intent="Add a Stripe WEBHOOK handler", project_id=project.pk)
    assert (warning.edge, warning.severity, warning.matched_pattern["type"]) == (edge, "high", "intent")
    assert edges_check(actor=user, intent="Add a login form", project_id=project.pk) == []


def test_file_globs_limit_code_patterns(user, project):
    edge_add(actor=user, project_id=project.pk, title="print in tests", workaround="Use logging",
             detection_patterns=[{"type": "code", "pattern": "print\\(", "file_glob": "*.py"}])
    code = "print('x')"
    assert len(edges_check(actor=user, code=code, context={"file_path": "app/views.py"}, project_id=project.pk)) == 1
    assert edges_check(actor=user, code=code, context={"file_path": "app/page.ts"}, project_id=project.pk) == []
    assert len(edges_check(actor=user, code=code, project_id=project.pk)) == 1


def test_symptoms_match_issue_text(user, project, seed_edge):
    [warning] = edges_check(actor=user, symptom_text="Deploy fails:\nReferenceError: Crypto   is not defined",
                            project_id=project.pk)
    assert warning.matched_pattern == {"type": "symptom", "pattern": "crypto is not defined",
                                       "description": "Known symptom"}
    assert warning.severity == "medium"


def test_without_a_workaround_the_recommendation_names_the_edge(user, project):
    edge_add(actor=user, project_id=project.pk, title="Old Safari", root_cause="No BigInt",
             detection_patterns=[{"type": "code", "pattern": "BigInt"}])
    [warning] = edges_check(actor=user, code="BigInt(3)", project_id=project.pk)
    assert warning.recommendation == "Known sharp edge: Old Safari. No BigInt"


def test_a_catastrophic_pattern_is_no_match_and_other_edges_still_warn(user, project, seed_edge):
    edge_add(actor=user, project_id=project.pk, title="bad",
             detection_patterns=[{"type": "code", "pattern": "(a|aa)+$"}])
    warnings = edges_check(actor=user, code="a" * 50 + "b crypto.randomUUID()", project_id=project.pk)
    assert [w.edge for w in warnings] == [seed_edge]


def test_each_edge_warns_once_a_session(user, project, seed_edge):
    session = make_session(project, user)
    code = "crypto.randomUUID()"
    assert len(edges_check(actor=user, code=code, session=session)) == 1
    assert edges_check(actor=user, code=code, session=session) == []
    session.refresh_from_db()
    assert session.warned_edges == [seed_edge.pk]
    newer = edge_add(actor=user, project_id=project.pk, title="randomUUID needs a secure context",
                     detection_patterns=[{"type": "code", "pattern": "randomUUID"}])
    assert [w.edge for w in edges_check(actor=user, code=code, session=session)] == [newer]
    # Another session, and no session at all, warn again.
    assert len(edges_check(actor=user, code=code, session=make_session(project, user))) == 2
    assert len(edges_check(actor=user, code=code)) == 2


def test_the_session_scopes_the_check_to_its_project(user, project, seed_edge):
    from apps.projects.services import project_create

    other = project_create(actor=user, name="other")
    session = make_session(other, user)
    assert edges_check(actor=user, code="crypto.randomUUID()", session=session) == []


def test_global_edges_apply_to_every_project_and_come_after_the_projects_own(user, project, seed_edge):
    global_edge = edge_add(actor=user, title="Node crypto in workers",
                           detection_patterns=[{"type": "code", "pattern": "crypto\\."}])
    warnings = edges_check(actor=user, code="crypto.randomUUID()", project_id=project.pk)
    assert [w.edge for w in warnings] == [seed_edge, global_edge]


def test_deleted_edges_do_not_warn(user, project, seed_edge):
    entity_delete(actor=user, kind="sharp_edge", entity_id=seed_edge.pk)
    assert edges_check(actor=user, code="crypto.randomUUID()", project_id=project.pk) == []


def test_without_project_or_session_every_readable_edge_is_checked(user, project, seed_edge):
    assert len(edges_check(actor=user, code="crypto.randomUUID()")) == 1


def test_isolation(user, other_user, project, other_project, seed_edge):
    edge_add(actor=other_user, title="bob's global", detection_patterns=[{"type": "code", "pattern": "crypto"}])
    edge_add(actor=other_user, project_id=other_project.pk, title="bob's",
             detection_patterns=[{"type": "code", "pattern": "crypto"}])
    assert [w.edge for w in edges_check(actor=user, code="crypto.randomUUID()")] == [seed_edge]
    assert edges_check(actor=other_user, code="const a = 1") == []
    with pytest.raises(NotFound) as caught:
        edges_check(actor=other_user, code="crypto.x", project_id=project.pk)
    assert caught.value.code == "project_not_found"
    with pytest.raises(NotFound):
        edges_check(actor=other_user, code="crypto.x", session=make_session(project, user))


@pytest.mark.parametrize("arguments, field", [
    ({"context": "edge"}, "context"),
    ({"context": {"runtime": "edge", "os": "linux"}}, "context.os"),
    ({"context": {"runtime": 3}}, "context.runtime"),
    ({"code": "x" * 100_001}, "code"),
    ({"intent": 5}, "intent"),
])
def test_bad_input_names_the_field(user, project, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        edges_check(actor=user, project_id=project.pk, **arguments)
    assert caught.value.field == field


def test_checking_many_edges_takes_a_fixed_number_of_queries(user, project, django_assert_max_num_queries):
    for index in range(6):
        edge_add(actor=user, project_id=project.pk if index % 2 else None, title=f"edge {index}",
                 detection_patterns=[{"type": "context", "pattern": "nextjs"}])
    session = make_session(project, user)
    project_update(actor=user, project_id=project.pk, stack=["nextjs"])
    with django_assert_max_num_queries(6):
        assert len(edges_check(actor=user, project_id=project.pk, session=session)) == 6

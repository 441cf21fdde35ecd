"""Context Graph's state reads (apps/cognition/selectors/state.py) and their REST endpoints: a session's UTL status,
its neuromodulation, and the homeostasis of a hand-built graph (a directed causal cycle, an open conflict task) with
its figures worked by hand; alice against bob on each; errors naming the field."""
import statistics
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition.limits import Johari, Stage
from apps.cognition.models import CurationTask, Event, SessionItem
from apps.cognition.selectors.state import (
    SCALING_OPERATION,
    homeostasis_get,
    johari_of,
    neuromodulation_get,
    utl_status_get,
)
from apps.cognition.services.inbox import task_open
from apps.cognition.state_answers import homeostasis_answer, neuromodulation_answer, utl_status_answer
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.services import memory_delete
from tests.cognition.state_support import IMPORTANCE, graph
from tests.cognition.support import new_session, set_state, staging_graph

pytestmark = pytest.mark.django_db

BASE = "/api/v1/cognition"


# --- utl_status -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("surprise", "coherence", "quadrant"), [
    (0.2, 0.8, Johari.OPEN), (0.8, 0.2, Johari.BLIND), (0.2, 0.2, Johari.HIDDEN), (0.8, 0.8, Johari.UNKNOWN),
    (0.5, 0.5, Johari.HIDDEN),  # 0.5 is not above the split
])
def test_johari_quadrant_by_surprise_and_coherence(surprise, coherence, quadrant):
    assert johari_of(surprise=surprise, coherence=coherence) == quadrant


def test_utl_status_gives_the_sessions_state_and_latest_items(user):
    graph = staging_graph(user)
    session = graph["session"]
    session.refresh_from_db()
    answer = utl_status_answer(utl_status_get(actor=user, session_id=str(session.pk)))
    assert answer["session_id"] == str(session.pk)
    assert (answer["entropy"], answer["coherence"], answer["learning_score"]) == (
        round(session.entropy, 4), round(session.coherence, 4), round(session.learning_score, 4))
    assert (answer["lifecycle_stage"], answer["interactions"]) == ("infancy", 1)
    assert answer["johari_quadrant"] == johari_of(surprise=session.entropy, coherence=session.coherence)
    assert answer["thresholds"] == {"entropy_high_above": 0.9, "coherence_low_below": 0.2}
    [item] = answer["recent_items"]
    assert (item["kind"], item["text"], item["activated_count"]) == ("query", "what runs on the staging cluster", 2)
    assert [entry["node_id"] for entry in item["activated"]] == [str(graph["kube"].pk), str(graph["helm"].pk)]


def test_utl_status_lists_the_20_latest_items_newest_first(user):
    session = set_state(new_session(user), entropy=0.75, coherence=0.3, interactions=60)
    SessionItem.objects.bulk_create([SessionItem(session=session, kind="query", text=f"question {n}",
                                                 vector=[0.01] * 384, delta_s=0.5) for n in range(25)])
    status = utl_status_get(actor=user, session_id=session.pk)
    assert [item.text for item in status.items] == [f"question {n}" for n in range(24, 4, -1)]
    assert (status.stage, status.johari, status.entropy_high, status.coherence_low) == (
        Stage.GROWTH, Johari.BLIND, True, True)


def test_utl_status_refuses_unknown_foreign_and_malformed_sessions(user, other_user):
    theirs = new_session(other_user)
    for session_id in (uuid.uuid4(), theirs.pk):
        with pytest.raises(NotFound) as raised:
            utl_status_get(actor=user, session_id=session_id)
        assert raised.value.code == "session_not_found"
    for session_id in ("not-a-uuid", None):
        with pytest.raises(InvalidInput) as raised:
            utl_status_get(actor=user, session_id=session_id)
        assert raised.value.field == "session_id"


def test_utl_status_is_two_queries_and_the_levels_one(user, django_assert_num_queries):
    session = set_state(new_session(user), entropy=0.4, coherence=0.5, interactions=3)
    SessionItem.objects.bulk_create([SessionItem(session=session, kind="query", text=f"question {n}",
                                                 vector=[0.01] * 384, delta_s=0.5) for n in range(30)])
    with django_assert_num_queries(2):
        utl_status_get(actor=user, session_id=session.pk)
    with django_assert_num_queries(1):
        neuromodulation_get(actor=user)


# --- neuromodulation ----------------------------------------------------------------------------------------------

def test_neuromodulation_reads_the_latest_or_named_session_and_rests_without_one(user, other_user):
    rest = neuromodulation_answer(neuromodulation_get(actor=user))
    assert (rest["dopamine"], rest["serotonin"], rest["noradrenaline"], rest["acetylcholine"]) == (1, 1, 0.5, 0.001)
    assert rest["current_mode"] == "explore" and rest["basis"]["session_id"] is None and rest["basis"]["resting"]
    assert rest["effects"] == {"importance_weight": 0.0, "breadth": 8, "temperature": 0.05, "learning_rate": 0.01,
                               "reorders": False}
    older = set_state(new_session(user), entropy=0.1, coherence=0.6, interactions=5)
    latest = set_state(new_session(user, uuid.uuid4()), entropy=0.8, coherence=0.2, interactions=5)
    set_state(new_session(other_user), entropy=0.0, coherence=1.0, interactions=5)
    assert neuromodulation_get(actor=user).session_id == str(latest.pk)
    named = neuromodulation_answer(neuromodulation_get(actor=user, session_id=str(older.pk)))
    # coherence 0.6, entropy 0.1: 1 + 4 x 0.72; 1.3 x 0.4; 0.5 + 1.5 x 0.15
    assert (named["dopamine"], named["serotonin"], named["noradrenaline"]) == (3.88, 0.52, 0.725)
    assert named["current_mode"] == "exploit" and named["effects"]["reorders"] is True
    with pytest.raises(NotFound):
        neuromodulation_get(actor=other_user, session_id=str(older.pk))


# --- homeostasis --------------------------------------------------------------------------------------------------

def test_homeostasis_of_a_hand_built_graph(user):
    nodes = graph(user)
    health = homeostasis_get(actor=user)
    answer = homeostasis_answer(health)
    values = list(IMPORTANCE.values())
    assert answer["mean_importance"] == round(statistics.fmean(values), 4)
    assert answer["importance_variance"] == round(statistics.pvariance(values), 4)
    assert (health.nodes, health.edges, health.important_nodes, health.linked_nodes) == (6, 4, 4, 4)
    assert (health.conflicted_nodes, health.quarantined_nodes) == (2, 0)
    assert [(suspect.node_id, suspect.reasons) for suspect in health.suspects] == [
        (str(nodes["a"].pk), ("causal_cycle",)), (str(nodes["b"].pk), ("causal_cycle",)),
        (str(nodes["e"].pk), ("conflict",))]
    assert answer["semantic_cancer_suspects"] == 3
    parts = {"balance": 1 - statistics.pvariance(values) / 0.15, "connectedness": 4 / 6,
             "consistency": 1 - 2 / 6, "immunity": 1 - 3 / 6}
    assert health.parts == pytest.approx(parts)
    assert answer["health_score"] == round(sum(parts.values()) / 4, 4)
    assert "last_scaling_time" not in answer


def test_a_node_on_a_cycle_and_in_a_conflict_has_both_reasons_and_a_broken_cycle_clears(user):
    nodes = graph(user)
    task_open(owner=user, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED, node_ids=[nodes["a"].pk, nodes["d"].pk],
              reason="Deploys and alerts disagree.", suggested_tool="annotate_node")
    suspects = {suspect.node_id: suspect.reasons for suspect in homeostasis_get(actor=user).suspects}
    assert suspects[str(nodes["a"].pk)] == ("causal_cycle", "conflict")
    assert suspects[str(nodes["d"].pk)] == ("conflict",)
    memory_delete(actor=user, memory_id=nodes["c"].pk)  # the cycle's only way back to a
    suspects = {suspect.node_id: suspect.reasons for suspect in homeostasis_get(actor=user).suspects}
    assert str(nodes["b"].pk) not in suspects and suspects[str(nodes["a"].pk)] == ("conflict",)


def test_last_scaling_time_is_the_latest_scaling_event(user, other_user):
    nodes = graph(user)
    Event.objects.create(owner=other_user, action=Event.Action.UPDATED, node_ids=[nodes["a"].pk],
                         detail={"operation": SCALING_OPERATION})
    assert homeostasis_get(actor=user).last_scaling_time is None
    event = Event.objects.create(owner=user, action=Event.Action.UPDATED, node_ids=[nodes["a"].pk],
                                 detail={"operation": SCALING_OPERATION})
    health = homeostasis_get(actor=user)
    assert health.last_scaling_time == event.created_at
    assert homeostasis_answer(health)["last_scaling_time"].endswith("Z")


def test_an_empty_graph_is_healthy(user):
    answer = homeostasis_answer(homeostasis_get(actor=user))
    assert (answer["mean_importance"], answer["importance_variance"], answer["health_score"]) == (0, 0, 1.0)
    assert (answer["nodes"], answer["semantic_cancer_suspects"], answer["suspects"]) == (0, 0, [])


def test_homeostasis_sees_only_what_the_caller_may_read(user, other_user):
    graph(user)
    theirs = graph(other_user, prefix="Bob's. ")
    mine = homeostasis_get(actor=user)
    assert mine.nodes == 6 and len(mine.suspects) == 3
    assert not {suspect.node_id for suspect in mine.suspects} & {str(memory.pk) for memory in theirs.values()}
    # Bob's own graph, with no task of alice's counted in it.
    CurationTask.objects.filter(owner=other_user).delete()
    bob = homeostasis_get(actor=other_user)
    assert (bob.nodes, bob.conflicted_nodes, len(bob.suspects)) == (6, 0, 2)


def test_homeostasis_runs_four_queries_whatever_the_graph(user):
    graph(user)
    with CaptureQueriesContext(connection) as small:
        homeostasis_get(actor=user)
    graph(user, prefix="Again. ")
    graph(user, prefix="Once more. ")
    with CaptureQueriesContext(connection) as bigger:
        health = homeostasis_get(actor=user)
    assert health.nodes == 18 and len(small) == len(bigger) == 4


# --- REST ---------------------------------------------------------------------------------------------------------

def _error(response, status, field):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    details = error["details"]
    assert details.get("field") == field if "field" in details else field in details, error
    return error


def test_the_operations_are_in_the_schema(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]
    for path, operation_id in ((f"{BASE}/sessions/{{session_id}}/utl/", "cognition_sessions_utl"),
                               (f"{BASE}/neuromodulation/", "cognition_neuromodulation"),
                               (f"{BASE}/homeostasis/", "cognition_homeostasis")):
        assert paths[path]["get"]["operationId"] == operation_id and set(paths[path]) == {"get"}


def test_rest_answers_the_tools_data(api, user):
    session = set_state(new_session(user), entropy=0.1, coherence=0.6, interactions=5)
    graph(user)
    utl = api.get(f"{BASE}/sessions/{session.pk}/utl/")
    assert utl.status_code == 200, utl.content
    assert utl.json()["johari_quadrant"] == "open" and utl.json()["lifecycle_stage"] == "infancy"
    levels = api.get(f"{BASE}/neuromodulation/", {"session_id": str(session.pk)})
    assert levels.status_code == 200, levels.content
    assert levels.json()["current_mode"] == "exploit" and levels.json()["effects"]["breadth"] == 5
    health = api.get(f"{BASE}/homeostasis/")
    assert health.status_code == 200, health.content
    assert health.json()["semantic_cancer_suspects"] == 3 and len(health.json()["suspects"]) == 3


def test_rest_refuses_bad_input_and_other_users_sessions(api, bob_api, user):
    session = new_session(user)
    _error(api.get(f"{BASE}/sessions/not-a-uuid/utl/"), 400, "session_id")
    _error(api.get(f"{BASE}/neuromodulation/", {"session_id": "nope"}), 400, "session_id")
    _error(api.get(f"{BASE}/neuromodulation/", {"session": str(session.pk)}), 400, "session")
    assert bob_api.get(f"{BASE}/sessions/{session.pk}/utl/").status_code == 404
    assert bob_api.get(f"{BASE}/neuromodulation/", {"session_id": str(session.pk)}).status_code == 404
    graph(user)
    assert bob_api.get(f"{BASE}/homeostasis/").json()["nodes"] == 0


# --- the pulse page's panel ---------------------------------------------------------------------------------------

def test_the_pulse_page_shows_the_latest_sessions_levels_and_only_the_callers(alice, bob, user):
    set_state(new_session(user), entropy=0.1, coherence=0.6, interactions=5)
    page = alice.get("/cognition/").content.decode()
    assert 'id="neuromodulation"' in page and ">exploit</span>" in page
    assert ">3.88</dd>" in page and ">0.52</dd>" in page and ">+5</dd>" in page and ">0.36</dd>" in page
    theirs = bob.get("/cognition/").content.decode()
    assert ">explore</span>" in theirs and "At rest" in theirs and ">3.88</dd>" not in theirs

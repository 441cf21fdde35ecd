"""Context Graph's status reads and epistemic_action's question, on real sessions (MiniLM vectors, session_record),
real links and the real curation inbox."""
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition import utl
from apps.cognition.limits import Stage
from apps.cognition.mermaid import escape_label, flowchart
from apps.cognition.models import CurationTask, NodeProfile
from apps.cognition.selectors.status import (
    graph_state_get, memetic_status_get, node_neighbourhood_map, pulse_state_get, topic_map,
)
from apps.cognition.services.epistemic import epistemic_question
from apps.cognition.services.inbox import task_open
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import MemoryLink
from apps.memories.services import memory_delete
from tests.cognition.support import link, new_session, node, record, set_state, staging_graph, unlinked
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

AMBIGUITY = CurationTask.TaskType.AMBIGUITY_DETECTED


@pytest.fixture
def alice():
    return UserFactory()


@pytest.fixture
def bob():
    return UserFactory()


def _task(owner, nodes, *, task_type=AMBIGUITY, priority=CurationTask.Priority.MEDIUM, reason="They disagree."):
    return task_open(owner=owner, task_type=task_type, node_ids=[n.pk for n in nodes], reason=reason,
                     suggested_tool="annotate_node", priority=priority)


# graph_state_get

def test_graph_state_counts_the_callers_live_nodes_links_tasks_and_latest_session(alice, bob):
    a = node(alice, "The staging cluster runs Kubernetes 1.30 on three nodes.", "kubernetes")
    b = node(alice, "Helm charts deploy every service to the staging cluster.", "helm")
    c = node(alice, "Grafana dashboards watch the staging cluster's load.", "grafana")
    node(bob, "Bob keeps his own notes about sourdough starters.", "sourdough")
    unlinked(alice)
    link(alice, a, b)
    link(alice, b, c)
    _task(alice, [a, c], priority=CurationTask.Priority.HIGH)
    session = new_session(alice)
    state = graph_state_get(actor=alice)
    assert (state.nodes, state.edges, state.cubes, state.open_tasks, state.urgent_tasks) == (3, 2, 1, 1, 1)
    assert state.session == session
    memory_delete(actor=alice, memory_id=c.pk)
    state = graph_state_get(actor=alice)
    assert (state.nodes, state.edges) == (2, 1)  # a deleted node and its link are out of the graph
    other = graph_state_get(actor=bob)
    assert (other.nodes, other.edges, other.open_tasks, other.session) == (1, 0, 0, None)


# memetic_status_get

def test_memetic_status_is_the_sessions_cached_state_with_its_most_activated_concepts(alice):
    deploy = node(alice, "Deploys go out from the release branch every Friday afternoon.", "release")
    rollback = node(alice, "A failed deploy is rolled back with the previous Helm revision.", "rollback")
    alerts = node(alice, "PagerDuty pages the on-call engineer when error rates double.", "pagerduty")
    NodeProfile.objects.create(memory=deploy, name="Friday releases")
    session = new_session(alice)
    record(session, "how do we release and roll back", [(deploy, 0.9), (rollback, 0.5)])
    record(session, "who gets paged on errors", [(alerts, 0.8), (rollback, 0.1)])
    session.refresh_from_db()
    status = memetic_status_get(actor=alice, session_id=str(session.pk))
    assert status.session == session
    assert (status.pulse.entropy, status.pulse.coherence) == (session.entropy, session.coherence)
    # Newest item counts fully, the one before 0.7 as much: alerts 0.8, deploy 0.63, rollback 0.1 + 0.35.
    assert status.concepts == ["pagerduty", "Friday releases", "rollback"]
    assert status.stage == Stage.INFANCY
    memory_delete(actor=alice, memory_id=alerts.pk)
    assert memetic_status_get(actor=alice, session_id=str(session.pk)).concepts == ["Friday releases", "rollback"]


def test_memetic_status_of_another_users_session_is_not_found_and_latest_is_the_default(alice, bob):
    session = new_session(alice)
    with pytest.raises(NotFound) as refused:
        memetic_status_get(actor=bob, session_id=str(session.pk))
    assert refused.value.code == "session_not_found"
    with pytest.raises(NotFound):
        memetic_status_get(actor=alice, session_id=str(uuid.uuid4()))
    with pytest.raises(InvalidInput):
        memetic_status_get(actor=alice, session_id="not-a-uuid")
    assert memetic_status_get(actor=alice).session == session
    nothing = memetic_status_get(actor=bob)
    assert (nothing.session, nothing.concepts, nothing.suggested_action) == (None, [], "ready")


@pytest.mark.parametrize(("entropy", "coherence", "interactions", "urgent", "expected"), [
    (0.95, 0.1, 10, False, "consolidate"),   # infancy: entropy > 0.9 and coherence < 0.2
    (0.95, 0.5, 10, False, "clarify"),
    (0.5, 0.1, 10, False, "explore"),
    (0.5, 0.5, 10, True, "curate"),          # a high-priority task waits
    (0.5, 0.5, 10, False, "curate"),         # an open task waits, the pulse has nothing more pressing
    (0.75, 0.5, 100, False, "clarify"),      # growth: entropy > 0.7
    (0.5, 0.5, 600, False, "curate"),
])
def test_suggested_action_follows_the_pulse_then_the_inbox(alice, entropy, coherence, interactions, urgent,
                                                           expected):
    a = node(alice, "Postgres backups run nightly at two.", "backups")
    b = node(alice, "Backups are kept for thirty days.", "retention")
    session = set_state(new_session(alice), entropy=entropy, coherence=coherence, interactions=interactions)
    _task(alice, [a, b], priority=CurationTask.Priority.HIGH if urgent else CurationTask.Priority.LOW)
    status = memetic_status_get(actor=alice, session_id=str(session.pk))
    assert status.suggested_action == expected
    assert status.stage == utl.stage_of(interactions)
    assert [task.node_ids for task in status.tasks] == [sorted([a.pk, b.pk])]


def test_ready_when_the_pulse_is_quiet_and_the_inbox_empty(alice):
    session = set_state(new_session(alice), entropy=0.3, coherence=0.8, interactions=10)
    assert memetic_status_get(actor=alice, session_id=str(session.pk)).suggested_action == "ready"


def test_tasks_are_the_callers_most_urgent_first(alice, bob):
    a, b, c = (node(alice, f"Fact number {n} about the billing service.", f"billing{n}") for n in range(3))
    low = _task(alice, [a, b], priority=CurationTask.Priority.LOW)
    high = _task(alice, [b, c], priority=CurationTask.Priority.HIGH)
    done = _task(alice, [a, c])
    done.status = CurationTask.Status.DONE
    done.save()
    assert memetic_status_get(actor=alice).tasks == [high, low]
    assert memetic_status_get(actor=bob).tasks == []


def test_dream_is_available_from_two_writable_live_nodes(alice, bob):
    assert memetic_status_get(actor=alice).dream_available is False
    node(alice, "One node alone gives a dream nothing to link.", "alone")
    node(bob, "Bob's node is not alice's to dream about.", "bob")
    assert memetic_status_get(actor=alice).dream_available is False
    node(alice, "A second node gives it a pair.", "pair")
    assert memetic_status_get(actor=alice).dream_available is True


def test_two_graph_states_give_two_statuses(alice):
    graph = staging_graph(alice)
    kube, soup, session = graph["kube"], graph["soup"], graph["session"]
    before = memetic_status_get(actor=alice, session_id=str(session.pk))
    record(session, "how is the tomato soup made", [(soup, 0.9)])
    after = memetic_status_get(actor=alice, session_id=str(session.pk))
    assert after.pulse.coherence < before.pulse.coherence  # an unlinked, unrelated node joined the active set
    assert after.concepts[0] == "soup" and before.concepts[0] == "kubernetes"
    # Both items were all surprise; a question close to the first one is not, and entropy falls.
    record(session, "what runs on the staging Kubernetes cluster", [(kube, 0.9)])
    assert memetic_status_get(actor=alice, session_id=str(session.pk)).pulse.entropy < after.pulse.entropy == 1.0


def test_memetic_status_runs_as_many_queries_for_fifty_nodes_and_tasks_as_for_one(alice):
    nodes = [node(alice, f"Runbook step {n}: restart worker pool {n} after the deploy.", f"step{n}")
             for n in range(51)]
    session = new_session(alice)
    record(session, "runbook", [(nodes[0], 0.9)])
    _task(alice, nodes[:2])
    with CaptureQueriesContext(connection) as one:
        memetic_status_get(actor=alice, session_id=str(session.pk))
    record(session, "runbook steps", [(memory, 0.5) for memory in nodes[1:50]])
    for n in range(2, 40):
        _task(alice, [nodes[0], nodes[n]])
    with CaptureQueriesContext(connection) as fifty:
        status = memetic_status_get(actor=alice, session_id=str(session.pk))
    assert len(status.concepts) == 5 and len(status.tasks) == 20 and status.open_tasks == 39
    assert len(fifty) <= len(one) + 1  # the inbox's total is counted once it is longer than what is shown


# pulse_state_get

def test_the_pulse_resource_state_is_the_latest_sessions(alice, bob):
    a = node(alice, "The API gateway terminates TLS.", "tls")
    b = node(alice, "Certificates renew every sixty days.", "certificates")
    set_state(new_session(alice), entropy=0.95, coherence=0.1, interactions=3)
    latest = set_state(new_session(alice, uuid.uuid4()), entropy=0.4, coherence=0.1, interactions=60)
    _task(alice, [a, b])
    state = pulse_state_get(actor=alice)
    assert (state.session, state.stage, state.pending_tasks, state.urgent_tasks) == (latest, Stage.GROWTH, 1, 0)
    assert state.pulse == utl.Pulse(0.4, 0.1, "search_graph")
    empty = pulse_state_get(actor=bob)
    assert (empty.session, empty.pending_tasks, empty.pulse.suggested) == (None, 0, None)


# epistemic_question

def test_no_question_when_the_session_is_coherent_unless_forced(alice):
    a = node(alice, "Invoices are emailed on the first of the month.", "invoices")
    b = node(alice, "Invoices are emailed on the fifth of the month.", "invoice")
    session = set_state(new_session(alice), entropy=0.2, coherence=0.9, interactions=10)
    _task(alice, [a, b])
    quiet = epistemic_question(actor=alice, session_id=str(session.pk))
    assert quiet.question is None and quiet.action_type is None and quiet.target_nodes == []
    assert "force=true" in quiet.reason and quiet.current_coherence == 0.9
    forced = epistemic_question(actor=alice, session_id=str(session.pk), force=True)
    assert forced.action_type == "ask_user" and forced.question


def test_an_open_ambiguity_task_is_asked_about_first(alice, bob):
    first = node(alice, "Invoices are emailed on the first of the month.", "invoices")
    fifth = node(alice, "Invoices are emailed on the fifth of the month.", "invoice")
    task = _task(alice, [first, fifth], reason="Two dates for the same invoice run.")
    session = new_session(alice)
    record(session, "when are invoices sent", [(first, 0.9), (fifth, 0.85)])
    record(session, "what is the weather", [])
    session = set_state(session, entropy=0.95, coherence=0.1, interactions=2)
    asked = epistemic_question(actor=alice, session_id=str(session.pk))
    assert asked.action_type == "ask_user" and asked.task == task
    assert set(asked.target_nodes) == {str(first.pk), str(fifth.pk)}
    assert "first of the month" in asked.question and "fifth of the month" in asked.question
    # One of the two latest items touched the pair: settling it settles half the entropy.
    assert asked.expected_entropy_reduction == pytest.approx(0.95 * 0.5, abs=1e-4)
    # Bob has no such task and no session: nothing to ask, even forced.
    assert epistemic_question(actor=bob, force=True).question is None


def test_the_closest_unlinked_pair_opens_an_ambiguity_task_and_a_rejected_pair_is_not_asked_again(alice):
    first = node(alice, "The quarterly report is due on March 31.", "report")
    second = node(alice, "The quarterly report is due on April 15.", "deadline")
    soup = node(alice, "Tomato soup needs a pinch of sugar.", "soup")
    unlinked(alice)
    session = new_session(alice)
    record(session, "when is the quarterly report due", [(first, 0.9), (second, 0.9), (soup, 0.1)])
    session = set_state(session, entropy=0.95, coherence=0.1, interactions=1)
    asked = epistemic_question(actor=alice, session_id=str(session.pk))
    assert asked.action_type == "clarify" and set(asked.target_nodes) == {str(first.pk), str(second.pk)}
    assert "March 31" in asked.question and "April 15" in asked.question
    task = CurationTask.objects.get(owner=alice, task_type=AMBIGUITY)
    assert asked.task == task and task.priority == CurationTask.Priority.LOW
    # Asked again, the question comes from the inbox: the same pair, not a second task.
    again = epistemic_question(actor=alice, session_id=str(session.pk))
    assert again.task == task and CurationTask.objects.filter(owner=alice).count() == 1
    task.status = CurationTask.Status.REJECTED
    task.save()
    after = epistemic_question(actor=alice, session_id=str(session.pk))
    assert (after.task, after.question, after.target_nodes) == (None, None, [])


def test_the_least_coherent_cluster_when_no_pair_is_close(alice):
    kube = node(alice, "The staging cluster runs Kubernetes 1.30.", "kubernetes")
    helm = node(alice, "Helm deploys services to the staging Kubernetes cluster.", "helm")
    soup = node(alice, "Tomato soup needs a pinch of sugar.", "soup")
    tax = node(alice, "The tax return is filed in May by the accountant.", "tax")
    unlinked(alice)
    link(alice, kube, helm)
    link(alice, soup, tax)  # linked, though far apart in meaning
    session = new_session(alice)
    record(session, "everything", [(kube, 0.5), (helm, 0.5), (soup, 0.5), (tax, 0.5)])
    session = set_state(session, entropy=0.5, coherence=0.1, interactions=1)
    asked = epistemic_question(actor=alice, session_id=str(session.pk))
    assert asked.action_type == "clarify" and asked.task is None
    assert set(asked.target_nodes) == {str(soup.pk), str(tax.pk)}
    assert "tomato soup" in asked.question.lower() and "cluster" in asked.reason


def test_a_query_that_found_nothing_asks_for_an_outside_source(alice):
    session = new_session(alice)
    record(session, "what is the capital of Mongolia", [])
    session.refresh_from_db()
    asked = epistemic_question(actor=alice, session_id=str(session.pk), force=True)
    assert asked.action_type == "search_external" and asked.target_nodes == []
    assert "capital of Mongolia" in asked.question
    assert asked.expected_entropy_reduction == pytest.approx(session.entropy, abs=1e-4)


def test_epistemic_action_on_another_users_session_is_not_found(alice, bob):
    session = new_session(alice)
    with pytest.raises(NotFound):
        epistemic_question(actor=bob, session_id=str(session.pk), force=True)


# maps

def test_a_node_map_reaches_two_links_either_way_and_escapes_labels(alice, bob):
    a, b, c, d = (node(alice, f"Service {name} calls the next one in the chain.", name)
                  for name in ("alpha", "beta", "gamma", "delta"))
    unlinked(alice)
    link(alice, a, b, 0.9)
    link(alice, c, b, 0.6)  # incoming to b: still one hop
    link(alice, c, d, 0.7)  # three hops from a
    NodeProfile.objects.create(memory=a, name='Evil"] --> x[click n0 call alert()]\n%% done; #1 <b>')
    graph = node_neighbourhood_map(actor=alice, node_id=a.pk)
    assert list(graph.nodes) == [str(a.pk), str(b.pk), str(c.pk)] and graph.focal == str(a.pk)
    assert {(s, t) for s, t, _, _ in graph.edges} == {(str(a.pk), str(b.pk)), (str(c.pk), str(b.pk))}
    chart = flowchart(graph)
    lines = chart.splitlines()
    assert lines[0] == "flowchart LR" and len(lines) == 1 + 3 + 2 + 2
    assert lines[1] == ('    n0["Evil#quot;#93; --#gt; x#91;click n0 call alert#40;#41;#93; %% done#59; #35;1 '
                        '#lt;b#gt;"]')
    assert '    n0 -->|"semantic 0.90"| n1' in lines and lines[-1] == "    class n0 focal"
    with pytest.raises(NotFound):
        node_neighbourhood_map(actor=bob, node_id=a.pk)


def test_escape_label_flattens_every_line_break():
    assert escape_label("one\ntwo\r\nthree\u2028four\x00") == "one two three four"


def test_a_topic_map_matches_full_text_in_one_cube_or_all(alice, bob):
    lamp = node(alice, "The lighthouse lamp is checked every evening.", "lighthouse")
    keeper = node(alice, "The lighthouse keeper logs the weather.", "keeper")
    node(alice, "Tomato soup needs a pinch of sugar.", "soup")
    unlinked(alice)
    link(alice, lamp, keeper)
    graph = topic_map(actor=alice, scope="all", topic="lighthouse")
    assert set(graph.nodes) == {str(lamp.pk), str(keeper.pk)} and len(graph.edges) == 1
    assert set(topic_map(actor=alice, scope=str(lamp.cube_id), topic="lighthouse").nodes) == set(graph.nodes)
    assert topic_map(actor=bob, scope="all", topic="lighthouse").nodes == {}
    with pytest.raises(NotFound):
        topic_map(actor=bob, scope=str(lamp.cube_id), topic="lighthouse")
    with pytest.raises(InvalidInput):
        topic_map(actor=alice, scope="all", topic="   ")


def test_a_node_map_runs_the_same_queries_for_fifty_neighbours_as_for_one(alice):
    hub = node(alice, "The hub service routes every request.", "hub")
    spokes = [node(alice, f"Spoke service {n} answers the hub.", f"spoke{n}") for n in range(50)]
    unlinked(alice)
    link(alice, hub, spokes[0])
    with CaptureQueriesContext(connection) as one:
        assert len(node_neighbourhood_map(actor=alice, node_id=hub.pk).nodes) == 2
    for spoke in spokes[1:]:
        MemoryLink.objects.create(source=hub, target=spoke, weight=0.6)
    with CaptureQueriesContext(connection) as fifty:
        assert len(node_neighbourhood_map(actor=alice, node_id=hub.pk).nodes) == 40
    assert len(fifty) == len(one)

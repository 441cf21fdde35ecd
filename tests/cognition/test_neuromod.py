"""Neuromodulation (apps/cognition/services/neuromod.py): the levels and the mode from UTL figures worked by hand, the
re-rank on a hand-built pool (three UTL states, three orders), and search_graph and inject_context ranking real
retrieval with the levels of the caller's session, at rest exactly as retrieval ranks."""
import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition.models import CgSession
from apps.cognition.services.context import context_inject
from apps.cognition.services.neuromod import (
    BALANCED, EXPLOIT, EXPLORE, Levels, candidates, levels_from, levels_of, rank_key, rerank,
)
from apps.cognition.services.search import node_search
from apps.memories.models import Memory
from apps.memories.services import memory_store
from tests.cognition.support import new_session, set_state

pytestmark = pytest.mark.django_db


def levels(dopamine, serotonin, noradrenaline, acetylcholine=0.001) -> Levels:
    return Levels(dopamine, serotonin, noradrenaline, acetylcholine, surprise=0.0, coherence=0.0, learning=0.0)


# --- the levels ---------------------------------------------------------------------------------------------------

def test_levels_follow_the_formulas_worked_by_hand():
    found = levels_from(surprise=0.2, coherence=0.5, learning=0.4)
    # 1 + 4 min(1, 0.6); min(1, 0.65); 0.5 + 1.5 min(1, 0.3); 0.001 x 1.4
    assert found.dopamine == pytest.approx(3.4)
    assert found.serotonin == pytest.approx(0.65)
    assert found.noradrenaline == pytest.approx(0.95)
    assert found.acetylcholine == pytest.approx(0.0014)
    # w = 0.5 x 2.4 / 4; breadth = round(2 + 3.9); T = 0.1 x 0.95; eta = 10 x 0.0014
    assert found.importance_weight == pytest.approx(0.3)
    assert found.breadth == 6
    assert found.temperature == pytest.approx(0.095)
    assert found.learning_rate == pytest.approx(0.014)
    assert found.mode == EXPLORE


def test_levels_stay_in_the_reference_ranges():
    top = levels_from(surprise=0.9, coherence=0.9, learning=1.0)
    assert (top.dopamine, top.noradrenaline, top.acetylcholine) == (5.0, 2.0, 0.002)
    assert top.serotonin == pytest.approx(0.13)
    bottom = levels_from(surprise=0.0, coherence=1.0, learning=0.0)
    assert (bottom.dopamine, bottom.serotonin, bottom.noradrenaline, bottom.acetylcholine) == (5.0, 0.0, 0.5, 0.001)
    # Out-of-range or missing figures are clamped, never extrapolated.
    odd = levels_from(surprise=7.0, coherence=-3.0, learning=float("nan"))
    assert (odd.dopamine, odd.serotonin, odd.noradrenaline, odd.acetylcholine) == (1.0, 1.0, 2.0, 0.001)


def test_rest_is_no_session_or_an_empty_one_and_keeps_retrievals_order():
    for rest in (levels_of(None), levels_of(CgSession(entropy=0.0, coherence=0.0, learning_score=0.0))):
        assert (rest.dopamine, rest.serotonin, rest.noradrenaline, rest.acetylcholine) == (1.0, 1.0, 0.5, 0.001)
        assert rest.resting and rest.importance_weight == 0.0
        assert (rest.breadth, rest.temperature, rest.learning_rate) == (8, 0.05, 0.01)
    assert levels_of(None).session_id is None


def test_the_levels_of_a_session_are_its_cached_state():
    session = CgSession(entropy=0.2, coherence=0.5, learning_score=0.4)
    assert levels_of(session) == levels_from(surprise=0.2, coherence=0.5, learning=0.4, session_id=str(session.pk))


@pytest.mark.parametrize(("dopamine", "serotonin", "noradrenaline", "mode"), [
    (3.5, 0.6, 1.0, EXPLOIT),        # each exploit bound met exactly; serotonin not above 0.6
    (3.5, 0.6001, 1.0, EXPLORE),     # serotonin above 0.6 explores, whatever the rest
    (5.0, 0.61, 0.5, EXPLORE),       # both hold: explore is checked first
    (3.4999, 0.6, 1.0, BALANCED),    # dopamine short of 3.5
    (3.5, 0.6, 1.0001, BALANCED),    # noradrenaline above 1
    (1.0, 0.0, 2.0, BALANCED),
])
def test_mode_thresholds(dopamine, serotonin, noradrenaline, mode):
    assert levels(dopamine, serotonin, noradrenaline).mode == mode


def test_modes_from_utl_states():
    assert levels_from(surprise=0.1, coherence=0.6, learning=0.0).mode == EXPLOIT   # D 3.88, S 0.52, N 0.725
    assert levels_from(surprise=0.1, coherence=0.53, learning=0.0).mode == EXPLORE  # S 0.611 > 0.6 though D 3.54
    assert levels_from(surprise=0.5, coherence=0.6, learning=0.0).mode == BALANCED  # N 1.625 > 1


def test_candidates_add_the_breadth_within_the_page_limit():
    assert candidates(10, levels_of(None)) == 18
    assert candidates(10, levels_from(surprise=0.0, coherence=1.0, learning=0.0)) == 12  # serotonin 0: breadth 2
    assert candidates(99, levels_of(None)) == 100


# --- the re-rank, by hand -------------------------------------------------------------------------------------------

POOL = [("A", 0.80, 0.2), ("B", 0.75, 0.9), ("C", 0.60, 1.0)]  # (name, score, importance), retrieval's order


def ranked(found: Levels) -> list[str]:
    return [name for name, _, _ in rerank(POOL, levels=found, score=lambda item: item[1],
                                          importance=lambda item: item[2])]


def test_three_utl_states_order_the_same_pool_three_ways():
    rest = levels_of(CgSession(entropy=0.0, coherence=0.0, learning_score=0.0))
    calm = levels_of(CgSession(entropy=0.0, coherence=1.0, learning_score=0.0))     # w 0.5, T 0.05
    aroused = levels_of(CgSession(entropy=1.0, coherence=1.0, learning_score=0.0))  # w 0.5, T 0.2
    # calm: A 0.5 + 0.1 = 0.6; B 0.5 e^-1 + 0.45 = 0.6339; C 0.5 e^-4 + 0.5 = 0.5092
    assert rank_key(0.75, 0.9, best=0.8, levels=calm) == pytest.approx(0.5 * math.exp(-1) + 0.45)
    assert rank_key(0.60, 1.0, best=0.8, levels=calm) == pytest.approx(0.5 * math.exp(-4) + 0.5)
    # aroused: A 0.6; B 0.5 e^-0.25 + 0.45 = 0.8394; C 0.5 e^-1 + 0.5 = 0.6839
    assert rank_key(0.60, 1.0, best=0.8, levels=aroused) == pytest.approx(0.5 * math.exp(-1) + 0.5)
    assert ranked(rest) == ["A", "B", "C"]
    assert ranked(calm) == ["B", "A", "C"]
    assert ranked(aroused) == ["B", "C", "A"]


def test_at_rest_equal_scores_keep_their_given_order_and_the_limit_cuts():
    pool = [("x", 0.5, 0.0), ("y", 0.5, 1.0), ("z", 0.7, 0.0)]
    assert [name for name, _, _ in rerank(pool, levels=levels_of(None), score=lambda item: item[1],
                                          importance=lambda item: item[2], limit=2)] == ["z", "x"]
    assert rerank([], levels=levels_of(None), score=float, importance=float) == []


# --- search_graph and inject_context rank with the caller's session -----------------------------------------------

TEXTS = [
    ("The staging cluster runs Kubernetes 1.30 on three nodes.", 0.0),
    ("Kubernetes on the staging cluster was upgraded last week.", 1.0),
    ("The staging cluster's Kubernetes nodes are patched on Mondays.", 0.5),
]


@pytest.fixture
def cluster_nodes(user):
    """The nodes, their importance set after the store (a store's importance also raises salience, which retrieval
    scores)."""
    nodes = [memory_store(actor=user, content=content).memory for content, _ in TEXTS]
    for memory, (_, importance) in zip(nodes, TEXTS):
        Memory.objects.filter(pk=memory.pk).update(importance=importance)
    return nodes


def by_hand(results: list[tuple[str, float, float]], found: Levels) -> list[str]:
    """The rank keys written out: (1 - w) exp((s - best) / T) + w importance."""
    best = max(score for _, score, _ in results)
    weight, temperature = 0.5 * (found.dopamine - 1) / 4, 0.1 * found.noradrenaline
    keys = {node: (1 - weight) * math.exp((score - best) / temperature) + weight * importance
            for node, score, importance in results}
    return sorted(keys, key=lambda node: -keys[node])


def searched(user, *, top_k=10):
    found = node_search(actor=user, query="staging cluster kubernetes", top_k=top_k)
    return found, [(str(item.memory.pk), item.score, item.memory.importance) for item in found.items]


def test_search_graph_ranks_with_the_levels_of_the_callers_session(user, cluster_nodes):
    session = new_session(user)
    set_state(session, entropy=0.0, coherence=0.0, interactions=0)
    found, at_rest = searched(user)
    assert found.levels.resting and len(at_rest) == 3
    assert [score for _, score, _ in at_rest] == sorted((score for _, score, _ in at_rest), reverse=True)
    assert at_rest[0][2] == 0.0  # retrieval puts the unimportant node first

    set_state(session, entropy=0.0, coherence=1.0, interactions=5)
    found, coherent = searched(user)
    assert found.levels.importance_weight == 0.5
    assert [node for node, _, _ in coherent] == by_hand(at_rest, found.levels)
    assert [node for node, _, _ in coherent] != [node for node, _, _ in at_rest]
    assert coherent[0][2] > 0.0  # importance weighs half: the unimportant node is first no longer


def test_breadth_lets_an_important_candidate_into_top_k(user, cluster_nodes):
    session = new_session(user)
    set_state(session, entropy=0.0, coherence=0.0, interactions=0)
    _, [best] = searched(user, top_k=1)
    set_state(session, entropy=0.0, coherence=1.0, interactions=5)
    _, [promoted] = searched(user, top_k=1)
    assert best[2] == 0.0 and promoted[2] == 1.0
    # Only what was returned counts as accessed: the candidates left out were not reinforced.
    counts = dict(Memory.objects.filter(owner=user).values_list("pk", "access_count"))
    assert counts[cluster_nodes[0].pk] == 1 and counts[cluster_nodes[1].pk] == 1
    assert counts[cluster_nodes[2].pk] == 0


def test_inject_context_ranks_with_the_levels_of_its_session(user, cluster_nodes):
    session = new_session(user)
    set_state(session, entropy=0.0, coherence=0.0, interactions=0)
    rest = context_inject(actor=user, query="staging cluster kubernetes", session_id=session.pk, priority="low")
    at_rest = [(node.node_id, node.score, node.importance) for node in rest.nodes]
    assert [score for _, score, _ in at_rest] == sorted((score for _, score, _ in at_rest), reverse=True)
    assert rest.as_dict()["neuromodulation"]["reorders"] is False

    set_state(session, entropy=1.0, coherence=1.0, interactions=5)
    aroused = context_inject(actor=user, query="staging cluster kubernetes", session_id=session.pk, priority="low")
    assert aroused.levels.temperature == pytest.approx(0.2)
    assert [node.node_id for node in aroused.nodes] == by_hand(at_rest, aroused.levels)
    assert aroused.as_dict()["nodes_retrieved"] != [node for node, _, _ in at_rest]
    assert aroused.as_dict()["neuromodulation"]["current_mode"] == BALANCED


def test_the_levels_cost_no_query(user, cluster_nodes):
    session = new_session(user)
    counts = []
    for coherence in (0.0, 1.0):
        set_state(session, entropy=0.3, coherence=coherence, interactions=3)
        with CaptureQueriesContext(connection) as queries:
            searched(user)
        counts.append(len(queries))
    assert counts[0] == counts[1]

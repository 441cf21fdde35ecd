"""Causal reasoning (apps/cognition/services/causal.py) on hand-built graphs with known weights: do against observe on
a confounded graph, counterfactual support, best-product paths and Yen's alternatives, direction and hop bounds,
fuzzy concepts that resolve among the caller's own nodes only, bad input naming its field, and query counts that do
not grow with the graph."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition.services.causal import causal_expand, causal_path_find, causal_query
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import MemoryLink
from apps.memories.services import memory_delete
from tests.cognition.causal_graphs import (
    CAUSAL, CHAIN, CHAIN_LINKS, CONFOUNDED, CONFOUNDED_LINKS, ROUTE_LINKS, ROUTES, SEMANTIC, SUPPORT, SUPPORT_LINKS,
    TEMPORAL, draw,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return UserFactory()


@pytest.fixture
def bob():
    return UserFactory()


def ids(nodes, *names) -> list[str]:
    return [str(nodes[name].pk) for name in names]


def by_node(results) -> dict[str, object]:
    return {entry.node_id: entry for entry in results}


# --- query_causal -------------------------------------------------------------------------------------------------

def test_do_and_observe_differ_on_a_confounded_graph(alice):
    g = draw(alice, CONFOUNDED, CONFOUNDED_LINKS)
    c, x, y, z = ids(g, "C", "X", "Y", "Z")

    done = causal_query(actor=alice, action=x, intervention_type="do")
    # do(X) cuts C -> X: only X's own effect is left; Y, which merely shares the cause, is not an effect.
    assert [(entry.node_id, entry.relation, entry.strength) for entry in done.results] == [(z, "effect", 0.7)]

    seen = by_node(causal_query(actor=alice, action=x, intervention_type="observe").results)
    assert set(seen) == {c, y, z}
    assert (seen[c].relation, seen[c].strength) == ("cause", 0.9)
    assert (seen[y].relation, seen[y].via) == ("common_cause", c)
    assert seen[y].strength == pytest.approx(0.9 * 0.8)  # the trek X <- C -> Y
    assert seen[y].nodes == [x, c, y]
    assert (seen[z].relation, seen[z].strength) == ("effect", 0.7)

    # With an outcome: about that node alone.
    assert causal_query(actor=alice, action=x, outcome=y, intervention_type="do").effect_strength == 0.0
    observed = causal_query(actor=alice, action=x, outcome=y, intervention_type="observe")
    assert observed.effect_strength == pytest.approx(0.72) and [e.node_id for e in observed.results] == [y]
    assert "shares the cause" in observed.narrative
    assert causal_query(actor=alice, action=x, outcome=z).effect_strength == 0.7  # do is the default


def test_effect_strength_is_the_best_path_product(alice):
    g = draw(alice, ROUTES, ROUTE_LINKS)
    s, t = ids(g, "S", "T")
    answer = causal_query(actor=alice, action=s, outcome=t)
    assert answer.effect_strength == pytest.approx(0.81)
    assert answer.results[0].nodes == ids(g, "S", "A", "T")


def test_counterfactual_lists_the_effects_that_lose_all_support(alice):
    g = draw(alice, SUPPORT, SUPPORT_LINKS)
    x, a, b, d, w, e = ids(g, "X", "A", "B", "D", "W", "E")
    answer = causal_query(actor=alice, action=x, intervention_type="counterfactual")
    # A and B feed each other, but nothing outside X's effects reaches them: both lose all support.
    lost = by_node(answer.results)
    assert set(lost) == {a, b} and all(entry.loses_support for entry in lost.values())
    assert (lost[a].strength, lost[b].strength) == (0.9, pytest.approx(0.72))
    kept = by_node(answer.still_supported)
    assert set(kept) == {d, e}
    assert (kept[d].remaining_support, kept[d].supported_by) == (0.5, w)
    assert (kept[e].remaining_support, kept[e].supported_by) == (pytest.approx(0.45), w)
    assert "lose all support" in answer.narrative

    assert causal_query(actor=alice, action=x, outcome=b, intervention_type="counterfactual").outcome_loses_support
    keeps = causal_query(actor=alice, action=x, outcome=e, intervention_type="counterfactual")
    assert keeps.outcome_loses_support is False and keeps.effect_strength == pytest.approx(0.54)


def test_counterfactual_without_the_second_cause_loses_everything(alice):
    g = draw(alice, SUPPORT, SUPPORT_LINKS)
    memory_delete(actor=alice, memory_id=g["W"].pk)  # a deleted node supports nothing
    answer = causal_query(actor=alice, action=str(g["X"].pk), intervention_type="counterfactual")
    assert set(by_node(answer.results)) == set(ids(g, "A", "B", "D", "E")) and answer.still_supported == []


def test_a_concept_in_words_resolves_to_the_callers_node_by_meaning(alice):
    g = draw(alice, CONFOUNDED, CONFOUNDED_LINKS)
    answer = causal_query(actor=alice, action="ice cream selling well at the beach")
    assert (answer.action.node_id, answer.action.matched_by) == (str(g["X"].pk), "meaning")
    assert answer.action.name == "Ice cream sales rise sharply at the seaside kiosks"


def test_an_unresolvable_concept_names_the_nearest_nodes(alice):
    draw(alice, CONFOUNDED, CONFOUNDED_LINKS)
    with pytest.raises(NotFound) as raised:
        causal_query(actor=alice, action="quantum chromodynamics lattice gauge")
    error = raised.value
    assert (error.code, error.extra["field"]) == ("concept_unresolved", "action")
    assert error.extra["nearest"] and "nearest" in error.message
    with pytest.raises(NotFound) as raised:
        causal_query(actor=alice, action="0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a")  # an id: never a text search
    assert (raised.value.code, raised.value.extra["field"]) == ("concept_unresolved", "action")


@pytest.mark.parametrize("arguments, field", [
    ({"action": ""}, "action"),
    ({"action": "   "}, "action"),
    ({"action": 12}, "action"),
    ({"action": "x" * 2001}, "action"),
    ({"action": "heat", "intervention_type": "maybe"}, "intervention_type"),
    ({"action": "heat", "outcome": ""}, "outcome"),
])
def test_query_causal_bad_input_names_the_field(alice, arguments, field):
    draw(alice, CONFOUNDED, CONFOUNDED_LINKS)
    with pytest.raises(InvalidInput) as raised:
        causal_query(actor=alice, **arguments)
    assert raised.value.field == field


# --- find_causal_path --------------------------------------------------------------------------------------------

def test_dijkstra_picks_the_best_product_and_yen_the_next_best(alice):
    g = draw(alice, ROUTES, ROUTE_LINKS)
    s, t = ids(g, "S", "T")
    found = causal_path_find(actor=alice, start_concept=s, end_concept=t, include_alternatives=True)
    assert found.path.nodes == ids(g, "S", "A", "T") and found.path.strength == pytest.approx(0.81)
    assert [(path.nodes, round(path.strength, 4)) for path in found.alternatives] == [
        (ids(g, "S", "B", "C", "T"), 0.648), (ids(g, "S", "D", "T"), 0.57), (ids(g, "S", "T"), 0.5)]
    assert "Path confidence 0.81" in found.narrative(found.path)
    assert found.narrative(found.path).startswith("The payment gateway starts timing out under load leads to")

    # Two links at most: the three-link path drops out of the alternatives.
    short = causal_path_find(actor=alice, start_concept=s, end_concept=t, max_hops=2, include_alternatives=True)
    assert [path.nodes for path in short.paths] == [ids(g, "S", "A", "T"), ids(g, "S", "D", "T"), ids(g, "S", "T")]
    # One link: only the direct one.
    assert [p.nodes for p in causal_path_find(actor=alice, start_concept=s, end_concept=t, max_hops=1).paths] == [
        ids(g, "S", "T")]
    # Without include_alternatives, only the best.
    assert len(causal_path_find(actor=alice, start_concept=s, end_concept=t).paths) == 1


def test_causal_links_are_walked_only_forward_and_path_type_filters(alice):
    g = draw(alice, ROUTES, [("T", "S", CAUSAL, 0.99), ("S", "A", CAUSAL, 0.5), ("A", "T", CAUSAL, 0.5),
                             ("D", "S", SEMANTIC, 0.9), ("D", "T", TEMPORAL, 0.9), ("B", "C", SEMANTIC, 0.8)])
    s, t, d, a = ids(g, "S", "T", "D", "A")
    # T -> S is strong, but against its direction: the causal path is S -> A -> T.
    causal = causal_path_find(actor=alice, start_concept=s, end_concept=t, path_type="causal")
    assert causal.path.nodes == ids(g, "S", "A", "T") and causal.path.strength == pytest.approx(0.25)
    # any: other links either way, so S <- D (semantic, walked backward) -> T (temporal) beats it.
    anyway = causal_path_find(actor=alice, start_concept=s, end_concept=t, path_type="any")
    assert anyway.path.nodes == [s, d, t] and anyway.path.strength == pytest.approx(0.81)
    assert [step.forward for step in anyway.path.steps] == [False, True]
    # semantic: only semantic links, and there is no semantic route from S to T.
    assert causal_path_find(actor=alice, start_concept=s, end_concept=t, path_type="semantic").path is None
    semantic = causal_path_find(actor=alice, start_concept=s, end_concept=d, path_type="semantic")
    assert semantic.path.nodes == [s, d]
    # Never against a causal link, whatever the path type: from T to A, the link A -> T (0.5) would be the best
    # path walked backward; forward, T -> S -> A (0.495) is.
    back = causal_path_find(actor=alice, start_concept=t, end_concept=a, path_type="any")
    assert back.path.nodes == [t, s, a] and back.path.strength == pytest.approx(0.495)


def test_no_path_and_the_same_node(alice):
    g = draw(alice, ROUTES, [("S", "A", CAUSAL, 0.9)])
    s, a, t = ids(g, "S", "A", "T")
    missing = causal_path_find(actor=alice, start_concept=s, end_concept=t)
    assert missing.path is None and missing.paths == [] and "No path of at most 4 links" in missing.no_path()
    same = causal_path_find(actor=alice, start_concept=s, end_concept=s)
    assert same.path.nodes == [s] and same.path.strength == 1.0
    by_words = causal_path_find(actor=alice, start_concept="payment gateway timing out",
                                end_concept="checkout requests queue in the web tier")
    assert (by_words.start.node_id, by_words.end.node_id) == (s, a) and by_words.path.nodes == [s, a]


@pytest.mark.parametrize("arguments, field", [
    ({"max_hops": 0}, "max_hops"), ({"max_hops": 7}, "max_hops"), ({"max_hops": 2.5}, "max_hops"),
    ({"path_type": "magic"}, "path_type"), ({"include_alternatives": "yes"}, "include_alternatives"),
    ({"start_concept": ""}, "start_concept"), ({"end_concept": None}, "end_concept"),
])
def test_find_causal_path_bad_input_names_the_field(alice, arguments, field):
    g = draw(alice, ROUTES, ROUTE_LINKS)
    with pytest.raises(InvalidInput) as raised:
        causal_path_find(actor=alice, **{"start_concept": str(g["S"].pk), "end_concept": str(g["T"].pk), **arguments})
    assert raised.value.field == field


# --- expand_causal_path ------------------------------------------------------------------------------------------

def test_expand_follows_direction_hops_and_min_weight(alice):
    g = draw(alice, CHAIN, CHAIN_LINKS)
    x, a, b, c, d, f = ids(g, "X", "A", "B", "C", "D", "F")
    effects = causal_expand(actor=alice, concept=x)  # effects, 3 links, min_weight 0.1
    assert [chain.nodes for chain in effects.chains] == [[x, a], [x, a, b], [x, a, b, c]]
    assert [round(chain.strength, 4) for chain in effects.chains] == [0.9, 0.72, 0.504]
    assert effects.narrative(effects.chains[1]) == ("The team skips writing integration tests leads to Regressions "
                                                    "slip into the release branch (0.90), which leads to Hotfixes are "
                                                    "shipped on Friday evenings (0.80).")
    assert [chain.nodes[-1] for chain in causal_expand(actor=alice, concept=x, max_hops=1).chains] == [a]
    assert d in [chain.nodes[-1] for chain in causal_expand(actor=alice, concept=x, max_hops=6).chains]
    weak = causal_expand(actor=alice, concept=x, max_hops=1, min_weight=0.0)
    assert [chain.nodes for chain in weak.chains] == [[x, a], [x, f]]

    causes = causal_expand(actor=alice, concept=b, direction="causes")
    assert [chain.nodes for chain in causes.chains] == [[a, b], [x, a, b]]  # cause first
    both = causal_expand(actor=alice, concept=b, direction="both", max_hops=1)
    assert {(chain.direction, tuple(chain.nodes)) for chain in both.chains} == {("causes", (a, b)),
                                                                                ("effects", (b, c))}


@pytest.mark.parametrize("arguments, field", [
    ({"direction": "up"}, "direction"), ({"max_hops": 0}, "max_hops"), ({"max_hops": 7}, "max_hops"),
    ({"min_weight": 1.5}, "min_weight"), ({"min_weight": -0.1}, "min_weight"), ({"min_weight": "high"}, "min_weight"),
    ({"concept": ""}, "concept"),
])
def test_expand_bad_input_names_the_field(alice, arguments, field):
    g = draw(alice, CHAIN, CHAIN_LINKS)
    with pytest.raises(InvalidInput) as raised:
        causal_expand(actor=alice, **{"concept": str(g["X"].pk), **arguments})
    assert raised.value.field == field


# --- isolation ------------------------------------------------------------------------------------------------------

def test_fuzzy_concepts_never_land_on_another_users_nodes(alice, bob):
    draw(bob, CONFOUNDED, CONFOUNDED_LINKS)
    mine = draw(alice, {"X": "Quarterly tax filings are due in April."}, [])
    # Bob's graph holds the very words; Alice's does not: her concept resolves to nothing, never to his node.
    with pytest.raises(NotFound) as raised:
        causal_query(actor=alice, action="Ice cream sales rise sharply at the seaside kiosks.")
    assert raised.value.extra["nearest"] == [] or all(
        near["node_id"] == str(mine["X"].pk) for near in raised.value.extra["nearest"])
    with pytest.raises(NotFound):
        causal_path_find(actor=alice, start_concept="Summer heat waves", end_concept="Drowning incidents")


def test_links_from_and_to_another_users_nodes_are_never_walked(alice, bob):
    hers = draw(alice, CONFOUNDED, CONFOUNDED_LINKS)
    his = draw(bob, {"P": "A secret marketing campaign promotes ice cream.",
                     "Q": "Bob's private kiosk doubles its orders."}, [])
    # Links across users (made behind the services' back): his node causes her X, her X causes his Q.
    MemoryLink.objects.bulk_create([
        MemoryLink(source=his["P"], target=hers["X"], link_type=CAUSAL, weight=1.0),
        MemoryLink(source=hers["X"], target=his["Q"], link_type=CAUSAL, weight=1.0),
    ])
    x = str(hers["X"].pk)
    foreign = {str(his["P"].pk), str(his["Q"].pk)}
    for kind in ("do", "observe", "counterfactual"):
        answer = causal_query(actor=alice, action=x, intervention_type=kind)
        reached = {node for entry in [*answer.results, *answer.still_supported] for node in entry.nodes}
        assert not reached & foreign and not set(answer.names) & foreign, kind
    for direction in ("effects", "causes", "both"):
        chains = causal_expand(actor=alice, concept=x, direction=direction, max_hops=6, min_weight=0.0).chains
        assert not {node for chain in chains for node in chain.nodes} & foreign
    assert causal_path_find(actor=alice, start_concept=x, end_concept=str(hers["Z"].pk)).path.nodes == ids(hers, "X",
                                                                                                            "Z")
    # Bob cannot name her nodes either.
    with pytest.raises(NotFound):
        causal_query(actor=bob, action=x)
    with pytest.raises(NotFound):
        causal_path_find(actor=bob, start_concept=str(his["P"].pk), end_concept=x)


# --- query counts -------------------------------------------------------------------------------------------------

def layered(user, width: int, spare: int = 0) -> dict:
    """A root and four layers of ``width`` nodes, each node linking (causal) to every node of the next layer, plus
    ``spare`` unlinked nodes: every walk below takes as many hops at any width, and reads more links at each."""
    texts = {"root": "The root cause of every layer below."}
    texts.update({f"spare{index}": f"An unrelated note number {index}." for index in range(spare)})
    links, previous = [], ["root"]
    for layer in range(4):
        names = [f"n{layer}_{index}" for index in range(width)]
        texts.update({name: f"Layer {layer} consequence number {index}." for index, name in enumerate(names)})
        links += [(source, name, CAUSAL, 0.9) for source in previous for name in names]
        previous = names
    return draw(user, texts, links)


def counted(call) -> int:
    call()
    with CaptureQueriesContext(connection) as queries:
        call()
    return len(queries)


@pytest.mark.parametrize("call", [
    lambda user, g: causal_query(actor=user, action=str(g["root"].pk), intervention_type="do"),
    lambda user, g: causal_query(actor=user, action=str(g["n1_0"].pk), intervention_type="observe"),
    lambda user, g: causal_query(actor=user, action=str(g["root"].pk), intervention_type="counterfactual"),
    lambda user, g: causal_path_find(actor=user, start_concept=str(g["root"].pk), end_concept=str(g["n3_0"].pk),
                                     include_alternatives=True),
    lambda user, g: causal_expand(actor=user, concept=str(g["root"].pk), direction="both", max_hops=6),
], ids=["do", "observe", "counterfactual", "find_causal_path", "expand_causal_path"])
def test_query_counts_do_not_grow_with_the_graph(call):
    small_owner, large_owner = UserFactory(), UserFactory()
    small, large = layered(small_owner, 1), layered(large_owner, 12, spare=1)
    assert (len(small), len(large)) == (5, 50)
    at_five = counted(lambda: call(small_owner, small))
    at_fifty = counted(lambda: call(large_owner, large))
    assert at_fifty <= at_five

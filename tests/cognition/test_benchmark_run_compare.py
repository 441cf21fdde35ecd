"""debug_compare_retrieval (apps/cognition/services/benchmark.retrieval_compare) on a hand-built graph: dense cosine,
fused retrieval, spreading activation and hierarchy expansion return different nodes; activation scores, precision,
recall and overlap are checked by hand; nothing is written; another user's nodes are never reached."""
from __future__ import annotations

import itertools

import pytest

from apps.cognition.limits import COMPARE_DECAY
from apps.cognition.services.benchmark import retrieval_compare
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_retrieve
from tests.cognition.causal_graphs import CAUSAL, HIERARCHICAL, SEMANTIC, draw

QUERY = "How do we rotate the database passwords?"
GRAPH = {
    "A": "Database passwords are rotated every ninety days by the operations team.",
    "wifi": "Passwords for the guest wifi are printed at reception.",
    "backup": "The database backup runs at midnight on weekdays.",
    "tyres": "Rotate the tyres of the company van every spring.",
    "postgres": "Our database team uses PostgreSQL sixteen in production.",
    # Linked to A, with nothing in common with the query: only the graph methods reach them.
    "B": "The nightly invoice export to the tax office stops.",
    "C": "Quarterly maintenance calendar for the operations crew.",
    "D": "The finance team receives the export by email.",
}
LINKS = [("A", "B", CAUSAL, 0.9), ("A", "C", HIERARCHICAL, 0.8), ("B", "D", SEMANTIC, 0.6)]
ALL = ["cosine_baseline", "fuse_moe", "causal_pathfinding", "hyperbolic_entailment"]


def ids(ranked) -> list[str]:
    return [str(entry.memory.pk) for entry in ranked]


@pytest.fixture
def graph(user):
    return {name: str(memory.pk) for name, memory in draw(user, GRAPH, LINKS).items()}


def test_each_method_finds_what_it_should(user, graph):
    comparison = retrieval_compare(actor=user, query=QUERY, top_k=5, methods=ALL,
                                   ground_truth_node_ids=[graph["A"], graph["B"]])
    results = {method: ids(ranked) for method, ranked in comparison.results.items()}
    query_side = {graph[name] for name in ("A", "wifi", "backup", "tyres", "postgres")}
    # Dense cosine and fused retrieval find the nodes that share the query's meaning or words.
    assert set(results["cosine_baseline"]) == query_side and set(results["fuse_moe"]) == query_side
    assert results["fuse_moe"][0] == graph["A"]
    # Spreading activation from the best three fused hits: a(seed) = its score / the best's; each hop x weight x 0.5.
    fused = memory_retrieve(actor=user, text=QUERY, limit=5, reinforce=False).items
    assert [str(item.memory.pk) for item in fused] == results["fuse_moe"]
    seeds = {str(item.memory.pk): item.score / fused[0].score for item in fused[:3]}
    pathfinding = {str(entry.memory.pk): entry.score for entry in comparison.results["causal_pathfinding"]}
    assert pathfinding[graph["B"]] == pytest.approx(1.0 * 0.9 * COMPARE_DECAY)  # A -causal-> B
    assert pathfinding[graph["C"]] == pytest.approx(1.0 * 0.8 * COMPARE_DECAY)  # A -hierarchical-> C
    for seed, activation in seeds.items():
        assert pathfinding[seed] == pytest.approx(activation)
    assert results["causal_pathfinding"] == sorted(pathfinding, key=lambda node: -pathfinding[node])
    assert len(results["causal_pathfinding"]) == 5 and graph["D"] not in pathfinding  # 0.135: sixth
    # Hierarchy expansion: only hierarchical links, no decay: C at 0.8 from A.
    hierarchy = {str(entry.memory.pk): entry.score for entry in comparison.results["hyperbolic_entailment"]}
    assert hierarchy == pytest.approx({**seeds, graph["C"]: 0.8})
    # Precision |R ∩ G| / |R| and recall |R ∩ G| / |G| with G = {A, B}, by hand.
    assert comparison.precision == {"cosine_baseline": 0.2, "fuse_moe": 0.2, "causal_pathfinding": 0.4,
                                    "hyperbolic_entailment": 0.25}
    assert comparison.recall == {"cosine_baseline": 0.5, "fuse_moe": 0.5, "causal_pathfinding": 1.0,
                                 "hyperbolic_entailment": 0.5}
    assert comparison.recommendation.startswith("causal_pathfinding did best") and "2 of 2" in comparison.recommendation
    # Overlap: the mean pairwise Jaccard, in percent.
    jaccard = [len(set(a) & set(b)) / len(set(a) | set(b)) for a, b in itertools.combinations(results.values(), 2)]
    assert comparison.overlap == round(100 * sum(jaccard) / len(jaccard), 1)
    assert comparison.overlap_pairs["cosine_baseline|fuse_moe"] == 100.0
    assert set(comparison.latency_ms) == set(ALL) and all(value > 0 for value in comparison.latency_ms.values())
    assert "no mixture of experts" in comparison.method_names["fuse_moe"]
    assert "no hyperbolic embedding" in comparison.method_names["hyperbolic_entailment"]


def test_without_ground_truth_precision_and_recall_are_left_empty(user, graph):
    comparison = retrieval_compare(actor=user, query=QUERY, top_k=5)
    assert comparison.methods == ["cosine_baseline", "fuse_moe", "causal_pathfinding"]
    assert comparison.precision == {} and comparison.recall == {} and comparison.ground_truth is None
    assert comparison.recommendation.startswith("No ground_truth_node_ids")
    assert "fuse_moe and cosine_baseline overlap 100%" in comparison.recommendation


def test_nothing_is_written(user, graph):
    before = list(Memory.objects.order_by("pk").values_list("pk", "access_count", "last_accessed_at"))
    retrieval_compare(actor=user, query=QUERY, methods=ALL)
    assert list(Memory.objects.order_by("pk").values_list("pk", "access_count", "last_accessed_at")) == before


def test_another_users_nodes_are_never_reached(user, other_user, graph):
    theirs = draw(other_user, {"X": "Database passwords are rotated by Bob's script every week.",
                               "Y": "Bob's tax office export."}, [])
    # A link from alice's node to bob's (no edge makes one; a stray row must still not leak).
    MemoryLink.objects.create(source_id=graph["A"], target=theirs["Y"], link_type=CAUSAL, weight=1.0)
    comparison = retrieval_compare(actor=user, query=QUERY, top_k=10, methods=ALL)
    reached = {node for ranked in comparison.results.values() for node in ids(ranked)}
    assert reached and not reached & {str(theirs["X"].pk), str(theirs["Y"].pk)}
    with pytest.raises(NotFound) as caught:
        retrieval_compare(actor=user, query=QUERY, ground_truth_node_ids=[graph["A"], str(theirs["X"].pk)])
    assert caught.value.extra["field"] == "ground_truth_node_ids[1]"
    bobs = retrieval_compare(actor=other_user, query=QUERY, methods=ALL)
    assert not {node for ranked in bobs.results.values() for node in ids(ranked)} & set(graph.values())


@pytest.mark.parametrize(("arguments", "field"), [
    ({"query": ""}, "query"),
    ({"query": "  "}, "query"),
    ({"query": QUERY, "top_k": 0}, "top_k"),
    ({"query": QUERY, "top_k": 101}, "top_k"),
    ({"query": QUERY, "methods": []}, "methods"),
    ({"query": QUERY, "methods": ["fuse_moe", "twelve_models"]}, "methods[1]"),
    ({"query": QUERY, "ground_truth_node_ids": ["nope"]}, "ground_truth_node_ids[0]"),
    ({"query": QUERY, "ground_truth_node_ids": "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a"}, "ground_truth_node_ids"),
])
def test_bad_input_names_the_field(user, arguments, field):
    with pytest.raises(InvalidInput) as caught:
        retrieval_compare(actor=user, **arguments)
    assert caught.value.field == field

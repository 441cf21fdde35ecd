"""UTL's formulas against figures computed by hand."""
import math

import pytest

from apps.cognition import utl
from apps.cognition.limits import Stage


def test_delta_s_is_one_minus_the_best_cosine_and_one_without_history():
    assert utl.delta_s([1, 0], [], None) == 1.0
    # cos([1,0],[1,1]) = 0.7071; the nearest node at 0.8 is closer: 1 - 0.8.
    assert utl.delta_s([1, 0], [[1, 1], [0, 1]], 0.8) == pytest.approx(0.2)
    assert utl.delta_s([1, 0], [[1, 1]], None) == pytest.approx(1 - math.sqrt(0.5))


def test_entropy_is_an_ewma_of_surprise():
    assert utl.entropy_next(0.0, 0.6, first=True) == 0.6
    # 0.3 x 1.0 + 0.7 x 0.5
    assert utl.entropy_next(0.5, 1.0, first=False) == pytest.approx(0.65)


def test_connectivity_is_the_largest_component_share():
    nodes = ["a", "b", "c", "d"]
    assert utl.connectivity(nodes, [("a", "b"), ("b", "c"), ("d", "x")]) == 0.75
    assert utl.connectivity([], []) == 0.0


def test_cluster_fit_maps_the_silhouette_to_zero_one():
    vectors = {"a": [1, 0], "b": [1, 0], "c": [0, 1], "d": [0, 1]}
    # Tight, orthogonal groups: a = 0, b = 1 for every node, silhouette 1 -> fit 1.
    assert utl.cluster_fit(vectors, [{"a", "b"}, {"c", "d"}]) == pytest.approx(1.0)
    # Mixed groups: each node's mate is orthogonal (a = 1) and the other group is half same, half orthogonal
    # (b = 0.5): silhouette (0.5 - 1) / 1 = -0.5 -> fit 0.25.
    assert utl.cluster_fit(vectors, [{"a", "c"}, {"b", "d"}]) == pytest.approx(0.25)
    # One group: the mean pairwise cosine of [1,0], [1,1]/sqrt2: 0.7071.
    assert utl.cluster_fit({"a": [1, 0], "b": [1, 1]}, [{"a", "b"}]) == pytest.approx(math.sqrt(0.5))
    assert utl.cluster_fit({"a": [1, 0]}, [{"a"}]) == 0.0


def test_coherence_weights_its_three_parts():
    assert utl.coherence(connectivity_share=0.5, fit=1.0, consistency=0.0) == pytest.approx(0.6)


def test_stages_and_learning_score():
    assert [utl.stage_of(n) for n in (0, 49, 50, 499, 500)] == [
        Stage.INFANCY, Stage.INFANCY, Stage.GROWTH, Stage.GROWTH, Stage.MATURITY]
    # 0.7 x 0.8 x 0.3 x 0.5 x (1 + 0.5 x 0.4) x 0.9
    assert utl.learning_score(surprise=0.8, coherence_score=0.5, stage=Stage.INFANCY, valence=-0.4,
                              centroid_cosine=0.9) == pytest.approx(0.7 * 0.8 * 0.3 * 0.5 * 1.2 * 0.9)


@pytest.mark.parametrize("entropy, coherence, stage, urgent, expected", [
    (0.95, 0.1, Stage.INFANCY, False, "trigger_dream"),
    (0.95, 0.5, Stage.INFANCY, False, "epistemic_action"),
    (0.8, 0.5, Stage.INFANCY, False, None),  # infancy is permissive: 0.8 is not high yet
    (0.8, 0.5, Stage.GROWTH, False, "epistemic_action"),
    (0.2, 0.3, Stage.GROWTH, False, "search_graph"),
    (0.2, 0.9, Stage.MATURITY, True, "get_memetic_status"),
    (0.2, 0.9, Stage.MATURITY, False, None),
])
def test_suggestion_follows_the_stage_thresholds(entropy, coherence, stage, urgent, expected):
    assert utl.suggestion(entropy=entropy, coherence_score=coherence, stage=stage, urgent_task=urgent) == expected

"""The path search under the reasoning tools (apps/cognition/selectors/walks.py), against brute force on random
weighted graphs (hypothesis): Dijkstra's best path is the highest product of weights among the paths of at most the
hop limit, and Yen's k paths are the k best loopless ones, in order."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.cognition.selectors.walks import Arc, Step, best_paths, k_best_paths

NODES = [f"n{index}" for index in range(6)]
WEIGHTS = st.sampled_from([0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0])


@st.composite
def graphs(draw):
    """Directed arcs (one per ordered pair at most), each walkable forward, and some (the 'semantic' ones) back."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)).filter(lambda p: p[0] != p[1]),
                          unique=True, max_size=14))
    steps: dict[str, list[Step]] = {}
    for source, target in pairs:
        arc = Arc(source, target, draw(st.sampled_from(["causal", "semantic"])), draw(WEIGHTS))
        steps.setdefault(source, []).append(Step(source, target, arc))
        if arc.link_type == "semantic":
            steps.setdefault(target, []).append(Step(target, source, arc))
    return steps


def simple_paths(steps, start, end, hops):
    """Every loopless path from start to end of at most ``hops`` steps, as step tuples."""
    found = []

    def extend(node, taken, seen):
        if node == end and taken:
            found.append(tuple(taken))
            return
        if len(taken) == hops:
            return
        for step in steps.get(node, ()):
            if step.to not in seen:
                extend(step.to, [*taken, step], seen | {step.to})

    extend(start, [], {start})
    return found


def product(path) -> float:
    return math.prod(step.arc.weight for step in path)


@settings(max_examples=200, deadline=None)
@given(graphs(), st.sampled_from(NODES), st.sampled_from(NODES), st.integers(1, 5))
def test_best_path_is_the_brute_force_best(steps, start, end, hops):
    if start == end:
        return
    every = simple_paths(steps, start, end, hops)
    found = best_paths(steps, {start: 1.0}, hops).get(end)
    if not every:
        assert found is None
        return
    assert found is not None and found.hops <= hops
    assert found.strength == pytest.approx(max(product(path) for path in every))
    assert len(set(found.nodes)) == len(found.nodes)  # loopless
    assert all(a.to == b.node for a, b in zip(found.steps, found.steps[1:])) and found.steps[0].node == start


@settings(max_examples=200, deadline=None)
@given(graphs(), st.sampled_from(NODES), st.sampled_from(NODES), st.integers(1, 5), st.integers(1, 4))
def test_yen_gives_the_k_best_loopless_paths_in_order(steps, start, end, hops, k):
    if start == end:
        return
    every = sorted((product(path) for path in simple_paths(steps, start, end, hops)), reverse=True)
    found = k_best_paths(steps, start, end, hops, k)
    assert len(found) == min(k, len(every))
    assert [path.strength for path in found] == pytest.approx(every[:k])
    assert len({tuple(step.key for step in path.steps) for path in found}) == len(found)  # all different
    for path in found:
        assert len(set(path.nodes)) == len(path.nodes) and path.hops <= hops and path.nodes[-1] == end


def test_the_hop_limit_can_need_a_worse_prefix():
    """A node reached best over many links may have to be reached worse over fewer for the end to be in range."""
    arcs = [("s", "a", 0.5), ("s", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0), ("a", "t", 0.9)]
    steps: dict[str, list[Step]] = {}
    for source, target, weight in arcs:
        steps.setdefault(source, []).append(Step(source, target, Arc(source, target, "causal", weight)))
    assert best_paths(steps, {"s": 1.0}, 4)["t"].nodes == ["s", "b", "c", "a", "t"]
    assert best_paths(steps, {"s": 1.0}, 3)["t"].nodes == ["s", "a", "t"]  # a is best at 3 links, t then at 4
    assert "t" not in best_paths(steps, {"s": 1.0}, 1)

"""UTL (Context Graph's "unified theory of learning") as plain functions of numbers and vectors, so every formula
can be checked by hand: surprise (delta S), entropy, coherence (delta C), learning score (L), lifecycle stage and
the pulse's suggestion. The services feed them from the session's items and the active subgraph."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from apps.cognition.limits import ENTROPY_SMOOTHING, Stage

# (ls, lc): the weights of surprise and coherence in L by stage, and the stage's bounds in interactions.
STAGE_WEIGHTS = {Stage.INFANCY: (0.7, 0.3), Stage.GROWTH: (0.5, 0.5), Stage.MATURITY: (0.3, 0.7)}
INFANCY_UNTIL = 50
GROWTH_UNTIL = 500
# Above the entropy threshold entropy is "high"; below the coherence threshold coherence is "low". Permissive in
# infancy, so that an empty graph does not send every agent to epistemic_action.
THRESHOLDS = {Stage.INFANCY: (0.9, 0.2), Stage.GROWTH: (0.7, 0.4), Stage.MATURITY: (0.6, 0.5)}
# Coherence's parts.
CONNECTIVITY_WEIGHT, CLUSTER_FIT_WEIGHT, CONSISTENCY_WEIGHT = 0.4, 0.4, 0.2


def _unit(vector) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def cosine(a, b) -> float:
    return float(_unit(a) @ _unit(b))


def delta_s(vector, recent: Sequence, nearest_node_cosine: float | None) -> float:
    """1 - the highest cosine of the new item to the session's recent items and to the nearest live node; 1.0 when
    there is neither."""
    return surprise([cosine(vector, other) for other in recent] + [nearest_node_cosine])


def surprise(similarities: Iterable[float | None]) -> float:
    """delta S from the cosines already known (None: no such neighbour): 1 - the highest, 1.0 without any."""
    known = [value for value in similarities if value is not None]
    return _clamp(1.0 - max(known)) if known else 1.0


def entropy_next(previous: float, surprise: float, *, first: bool) -> float:
    """Entropy after one more item: the EWMA of delta S (the first item's delta S starts it)."""
    if first:
        return _clamp(surprise)
    return _clamp(ENTROPY_SMOOTHING * surprise + (1 - ENTROPY_SMOOTHING) * previous)


def components(nodes: Sequence[str], edges: Iterable[tuple[str, str]]) -> list[set[str]]:
    """The connected components of ``nodes`` under ``edges`` (either direction; edges to other nodes ignored)."""
    parent = {node: node for node in nodes}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in edges:
        if a in parent and b in parent:
            parent[root(a)] = root(b)
    groups: dict[str, set[str]] = {}
    for node in nodes:
        groups.setdefault(root(node), set()).add(node)
    return sorted(groups.values(), key=len, reverse=True)


def connectivity(nodes: Sequence[str], edges: Iterable[tuple[str, str]]) -> float:
    """The largest component's share of the (distinct) nodes; 0 without nodes."""
    nodes = list(dict.fromkeys(nodes))
    if not nodes:
        return 0.0
    return len(components(nodes, edges)[0]) / len(nodes)


def cluster_fit(vectors: dict[str, Sequence[float]], groups: list[set[str]]) -> float:
    """cluster_fit_of_distances over the cosine distances of ``vectors``."""
    ids = [node for group in groups for node in group if node in vectors]
    matrix = np.array([_unit(vectors[node]) for node in ids]) if ids else np.zeros((0, 0))
    return cluster_fit_of_distances(ids, 1.0 - matrix @ matrix.T, groups)


def cluster_fit_of_distances(ids: list[str], distance: np.ndarray, groups: list[set[str]]) -> float:
    """How well the nodes ``ids`` (``distance``: their pairwise cosine distances, in that order) fit their groups,
    0-1. With two groups or more: the mean silhouette mapped from [-1, 1] to [0, 1], a node alone in its group
    scoring 0 as silhouette defines. With one group: its mean pairwise cosine (cohesion alone, floored at 0).
    Fewer than two nodes: 0."""
    if len(ids) < 2:
        return 0.0
    label = {node: index for index, group in enumerate(groups) for node in group}
    labels = np.array([label[node] for node in ids])
    kinds = np.unique(labels)
    if len(kinds) < 2:
        upper = distance[np.triu_indices(len(ids), k=1)]
        return _clamp(float(np.mean(1.0 - upper)))
    members = labels[:, None] == kinds[None, :]
    sizes = members.sum(axis=0)
    totals = distance @ members  # each node's summed distance to each group (0 to itself)
    own = members.argmax(axis=1)
    mates = sizes[own] - 1
    a = np.where(mates > 0, totals[np.arange(len(ids)), own] / np.maximum(mates, 1), 0.0)
    means = totals / sizes
    means[np.arange(len(ids)), own] = np.inf
    b = means.min(axis=1)
    widest = np.maximum(a, b)
    scores = np.where((mates > 0) & (widest > 0), (b - a) / np.where(widest > 0, widest, 1.0), 0.0)
    return _clamp((float(scores.mean()) + 1.0) / 2.0)


def coherence(*, connectivity_share: float, fit: float, consistency: float) -> float:
    return _clamp(CONNECTIVITY_WEIGHT * connectivity_share + CLUSTER_FIT_WEIGHT * fit
                  + CONSISTENCY_WEIGHT * consistency)


def stage_of(interactions: int) -> Stage:
    if interactions < INFANCY_UNTIL:
        return Stage.INFANCY
    return Stage.GROWTH if interactions < GROWTH_UNTIL else Stage.MATURITY


def learning_score(*, surprise: float, coherence_score: float, stage: Stage, valence: float,
                   centroid_cosine: float) -> float:
    """L = clamp(ls * dS * lc * dC * w_e * cos(phi), 0, 1), w_e = 1 + 0.5 |valence|, phi the angle between the
    item and the session's centroid."""
    ls, lc = STAGE_WEIGHTS[stage]
    emotional_weight = 1.0 + 0.5 * abs(valence)
    return _clamp(ls * surprise * lc * coherence_score * emotional_weight * centroid_cosine)


@dataclass(frozen=True)
class Pulse:
    entropy: float
    coherence: float
    suggested: str | None

    def as_dict(self) -> dict:
        return {"entropy": round(self.entropy, 4), "coherence": round(self.coherence, 4), "suggested": self.suggested}


def suggestion(*, entropy: float, coherence_score: float, stage: Stage, urgent_task: bool) -> str | None:
    """The pulse's next tool: dream when entropy is high and coherence low, a clarifying question when only entropy
    is high, a search when only coherence is low, the inbox when a high-priority task waits; else nothing."""
    entropy_high, coherence_low = entropy_is_high(entropy, stage), coherence_is_low(coherence_score, stage)
    if entropy_high and coherence_low:
        return "trigger_dream"
    if entropy_high:
        return "epistemic_action"
    if coherence_low:
        return "search_graph"
    return "get_memetic_status" if urgent_task else None


def entropy_is_high(entropy: float, stage: Stage) -> bool:
    return entropy > THRESHOLDS[stage][0]


def coherence_is_low(coherence_score: float, stage: Stage) -> bool:
    return coherence_score < THRESHOLDS[stage][1]


def _clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    if math.isnan(value):
        return low
    return min(high, max(low, value))

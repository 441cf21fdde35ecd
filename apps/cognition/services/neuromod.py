"""Neuromodulation: four levels read from a session's cached UTL state (entropy, the smoothed surprise delta S;
coherence delta C; the learning score L), the mode they put retrieval in, and the one re-rank that search_graph and
inject_context apply to the pool they retrieve (docs/context_graph.md, "Neuromodulation and state").

    dopamine      = 1 + 4 min(1, 1.2 dC)        [1, 5]          -> importance weight w = 0.5 (dopamine - 1) / 4
    serotonin     = min(1, 1.3 (1 - dC))        [0, 1]          -> breadth = round(2 + 6 serotonin) extra candidates
    noradrenaline = 0.5 + 1.5 min(1, 1.5 dS)    [0.5, 2]        -> temperature T = 0.1 noradrenaline
    acetylcholine = 0.001 (1 + L)               [0.001, 0.002]  -> learning rate eta = 10 acetylcholine

    rank key = (1 - w) exp((score - best score) / T) + w importance

Reading the levels costs no query: they are computed from the session row the caller already loaded. At rest (no
session, or one with nothing recorded: dC = dS = L = 0) the importance weight is 0 and the re-rank keeps retrieval's
order."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from apps.cognition.models import CgSession
from apps.core.limits import PAGE_LIMIT

# The mode thresholds (issue 20): a broad serotonin level explores; a high reward with a calm arousal exploits.
EXPLORE_SEROTONIN = 0.6
EXPLOIT_DOPAMINE = 3.5
EXPLOIT_NORADRENALINE = 1.0
EXPLORE, EXPLOIT, BALANCED = "explore", "exploit", "balanced"
MODES = (EXPLOIT, EXPLORE, BALANCED)
# At full dopamine a node's importance is half its rank key; at rest none of it.
IMPORTANCE_WEIGHT_MAX = 0.5
# Retrieval's scores lie in [0, 1] and the best few differ by hundredths: T from 0.05 (sharp) to 0.2 (flat).
TEMPERATURE_PER_NORADRENALINE = 0.1
# Dream's Hebbian step: 0.01 at rest, as the reference's NREM replay has it.
ETA_PER_ACETYLCHOLINE = 10

T = TypeVar("T")


@dataclass(frozen=True)
class Levels:
    """The four levels and the UTL state they come from (``session_id`` None: no session yet, at rest)."""

    dopamine: float
    serotonin: float
    noradrenaline: float
    acetylcholine: float
    surprise: float
    coherence: float
    learning: float
    session_id: str | None = None

    @property
    def mode(self) -> str:
        # Explore is checked first: both hold only for coherence in [0.521, 0.538).
        if self.serotonin > EXPLORE_SEROTONIN:
            return EXPLORE
        if self.dopamine >= EXPLOIT_DOPAMINE and self.noradrenaline <= EXPLOIT_NORADRENALINE:
            return EXPLOIT
        return BALANCED

    @property
    def importance_weight(self) -> float:
        return IMPORTANCE_WEIGHT_MAX * (self.dopamine - 1.0) / 4.0

    @property
    def breadth(self) -> int:
        return math.floor(2 + 6 * self.serotonin + 0.5)

    @property
    def temperature(self) -> float:
        return TEMPERATURE_PER_NORADRENALINE * self.noradrenaline

    @property
    def learning_rate(self) -> float:
        return ETA_PER_ACETYLCHOLINE * self.acetylcholine

    @property
    def resting(self) -> bool:
        return self.importance_weight == 0.0

    def effects(self) -> dict:
        """What retrieval uses now, in numbers."""
        return {
            "importance_weight": round(self.importance_weight, 4),
            "breadth": self.breadth,
            "temperature": round(self.temperature, 4),
            "learning_rate": round(self.learning_rate, 6),
            "reorders": not self.resting,
        }

    def applied(self) -> dict:
        """What a retrieval's answer says it ranked with: the mode and the effects."""
        return {"current_mode": self.mode, **self.effects()}


def levels_from(*, surprise: float, coherence: float, learning: float, session_id: str | None = None) -> Levels:
    """The levels for a UTL state (each input clamped to [0, 1])."""
    surprise, coherence, learning = (_unit(value) for value in (surprise, coherence, learning))
    return Levels(
        dopamine=1.0 + 4.0 * min(1.0, 1.2 * coherence),
        serotonin=min(1.0, 1.3 * (1.0 - coherence)),
        noradrenaline=0.5 + 1.5 * min(1.0, 1.5 * surprise),
        acetylcholine=0.001 * (1.0 + learning),
        surprise=surprise, coherence=coherence, learning=learning, session_id=session_id)


def levels_of(session: CgSession | None) -> Levels:
    """The levels of a session from its cached state (no query); at rest without one."""
    if session is None:
        return levels_from(surprise=0.0, coherence=0.0, learning=0.0)
    return levels_from(surprise=session.entropy, coherence=session.coherence, learning=session.learning_score,
                       session_id=str(session.pk))


def candidates(limit: int, levels: Levels) -> int:
    """How many nodes to retrieve so that the re-rank may promote up to ``breadth`` of them into ``limit``."""
    return min(PAGE_LIMIT.high, limit + levels.breadth)


def rank_key(score: float, importance: float, *, best: float, levels: Levels) -> float:
    """(1 - w) exp((score - best) / T) + w importance: the softmax weight of the score relative to the best one's,
    blended with the node's importance."""
    weight = levels.importance_weight
    return (1.0 - weight) * math.exp((score - best) / levels.temperature) + weight * _unit(importance)


def rerank(items: Sequence[T], *, levels: Levels, score: Callable[[T], float], importance: Callable[[T], float],
           limit: int | None = None) -> list[T]:
    """``items`` best first by rank key (at rest: by score), equal keys in their given order; the first ``limit``."""
    if not items:
        return []
    if levels.resting:
        ranked = sorted(items, key=lambda item: -score(item))
    else:
        best = max(score(item) for item in items)
        ranked = sorted(items, key=lambda item: -rank_key(score(item), importance(item), best=best, levels=levels))
    return ranked if limit is None else ranked[:limit]


def _unit(value) -> float:
    value = float(value or 0.0)
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))

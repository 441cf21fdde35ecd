"""store_memory's steering reward: a dopamine-like signal in [-1, 1] that tells the storing agent whether the store
helped the graph, with each term named and a hint from the largest one. A plain function of numbers, so each term
can be checked by hand (docs/context_graph.md).

    base      = ls x dS + lc x dC        (ls, lc) by lifecycle stage, UTL's weights: infancy 0.7/0.3 (novelty
                                          counts most), growth 0.5/0.5, maturity 0.3/0.7 (coherence counts most)
    signal    = clamp(base - 0.4 [near-duplicate: cosine >= 0.90 to a live node of the caller]
                           - 0.3 [cos(rationale, content) < 0.2]
                           - 0.5 [rationale with < 3 distinct content words], -1, 1)

dS is the store's surprise and dC the session's coherence after it (services/sessions.session_record). The hint is
the largest penalty's (what to change first), or the stage's advice when no penalty applies."""
from __future__ import annotations

from dataclasses import dataclass

from apps.cognition import utl
from apps.cognition.limits import (
    NEAR_DUPLICATE_COSINE, NEAR_DUPLICATE_PENALTY, RATIONALE_MIN_COSINE, RATIONALE_MIN_WORDS,
    RATIONALE_MISMATCH_PENALTY, THIN_RATIONALE_PENALTY, Stage,
)
from apps.memories.text import STOPWORDS, words

STAGE_HINTS = {
    Stage.INFANCY: "The graph is young: novelty (delta S) earns most now, so keep storing what it does not know yet.",
    Stage.GROWTH: "The graph is growing: novelty and fit count alike, so store new knowledge and link it to what "
                  "you know (link_to).",
    Stage.MATURITY: "The graph is mature: coherence earns most now, so store what connects to and refines what "
                    "it holds, and merge rather than add.",
}


@dataclass(frozen=True)
class RewardTerm:
    name: str
    value: float
    detail: str
    hint: str

    def as_dict(self) -> dict:
        return {"name": self.name, "value": round(self.value, 4), "detail": self.detail}


@dataclass(frozen=True)
class SteeringReward:
    dopamine_signal: float
    terms: tuple[RewardTerm, ...]

    @property
    def rationale(self) -> str:
        parts = [f"{term.name} {term.value:+.2f} ({term.detail})" for term in self.terms]
        return "; ".join(parts) + f"; signal {self.dopamine_signal:+.2f} = their sum, clamped to -1..1."

    @property
    def behavioral_hint(self) -> str:
        # What to change first: the largest penalty (the first of equals); the stage's advice when none applies.
        penalties = [term for term in self.terms if term.value < 0]
        return max(penalties, key=lambda term: -term.value).hint if penalties else self.terms[0].hint

    def as_dict(self) -> dict:
        return {"dopamine_signal": round(self.dopamine_signal, 4), "rationale": self.rationale,
                "behavioral_hint": self.behavioral_hint, "terms": [term.as_dict() for term in self.terms]}


def content_words(text: str) -> int:
    """Distinct words of ``text`` that carry meaning: not stopwords, longer than two letters (as keywords)."""
    return len({word for word in words(text) if word not in STOPWORDS and len(word) > 2})


def steering_reward(*, stage: Stage, delta_s: float, coherence: float, duplicate_cosine: float | None,
                    duplicate_of: str | None, rationale_cosine: float, rationale_words: int) -> SteeringReward:
    ls, lc = utl.STAGE_WEIGHTS[stage]
    base = ls * delta_s + lc * coherence
    terms = [RewardTerm("base", base, f"{stage.value}: {ls:g} x delta S {delta_s:.2f} + {lc:g} x coherence "
                                      f"{coherence:.2f}", STAGE_HINTS[stage])]
    if duplicate_cosine is not None and duplicate_cosine >= NEAR_DUPLICATE_COSINE:
        terms.append(RewardTerm(
            "near_duplicate", -NEAR_DUPLICATE_PENALTY,
            f"cosine {duplicate_cosine:.2f} >= {NEAR_DUPLICATE_COSINE:g} to node {duplicate_of}",
            f"Node {duplicate_of} already says this (cosine {duplicate_cosine:.2f}): update it or merge the two "
            "(merge_concepts; a potential_merge task is open) rather than store a copy."))
    if rationale_cosine < RATIONALE_MIN_COSINE:
        terms.append(RewardTerm(
            "rationale_mismatch", -RATIONALE_MISMATCH_PENALTY,
            f"cos(rationale, content) {rationale_cosine:.2f} < {RATIONALE_MIN_COSINE:g}",
            f"The rationale does not describe the content (cosine {rationale_cosine:.2f}): say in words about the "
            "content why it matters."))
    if rationale_words < RATIONALE_MIN_WORDS:
        terms.append(RewardTerm(
            "thin_rationale", -THIN_RATIONALE_PENALTY,
            f"{rationale_words} content word{'s' if rationale_words != 1 else ''} < {RATIONALE_MIN_WORDS}",
            f"The rationale has {rationale_words} content word{'s' if rationale_words != 1 else ''}: explain in at "
            f"least {RATIONALE_MIN_WORDS} why this is worth keeping and when it will be needed."))
    signal = max(-1.0, min(1.0, sum(term.value for term in terms)))
    return SteeringReward(dopamine_signal=signal, terms=tuple(terms))

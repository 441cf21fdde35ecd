"""ThoughtMCP's ``analyze_reasoning``: the quality of a piece of reasoning, with the confidence, bias and emotion
readings it can include.

Quality, deterministically, in [0, 1]:
- coherence and completeness: as assess_confidence computes them (apps/reasoning/analysis/confidence.py), with no
  separate evidence list (a reasoning under review carries its evidence in its text).
- evidenceSupport = 0.35 sentences that give support for their claim (one in two counts as full: not every
  sentence is a claim) + 0.45 figures and named sources (the evidence proper) + 0.2 the caller's related memories
  (summed relevance, 2.0 counts as full).
- logicalValidity = 1 - 0.2 per fallacy cue found: circular reasoning (the reason restates the claim: "X because
  it is X"), unsupported absolutes (always, never, all, guaranteed ... in a sentence that gives no support),
  false dichotomy ("either ... or", "the only option"), hasty generalisation (one case, then a rule for all),
  appeal to popularity ("everyone knows").
Strengths and weaknesses quote what was found; recommendations answer the weaknesses.

Bias and emotion readings are detect_bias's and detect_emotion's (readings.py). With a model, the model rates the
four dimensions; an unusable answer falls back to the deterministic quality with "modelError".
"""
from __future__ import annotations

import math
import re
from typing import Any

from apps.memories.models import Memory
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend
from apps.reasoning.analysis.confidence import (
    ABSOLUTES,
    SUPPORT,
    WEAK,
    Signals,
    assess_confidence,
    cited,
    coherence,
    completeness,
    consistency_check,
    content_words,
    find,
    remembered,
    uncovered_context,
)
from apps.reasoning.analysis.llm import ask_json, model_or_fallback, ratings, reading_prompt, texts
from apps.reasoning.analysis.readings import read_biases, read_emotion
from apps.reasoning.analysis.reasoning_text import first_line, listed

QUALITY = ("coherence", "completeness", "logicalValidity", "evidenceSupport")
FALLACY_PENALTY = 0.2
MAX_TOKENS = 900

CIRCULAR_REASON = re.compile(r"\bbecause\s+(?:it|this|that|they)\s*(?:is|are|'s|was|were)\b")
FALSE_DICHOTOMY = re.compile(r"\beither\b[^.;!?]+\bor\b|\bthe only (?:option|way|choice|alternative)\b|"
                             r"\bno other (?:option|way|choice)\b|\bonly two (?:options|choices|ways)\b")
HASTY = re.compile(r"\b(?:one|a single|once|two|a couple of|a few)\b[^.;!?]*\b(?:so|therefore|thus|which means|"
                   r"proves?|shows?)\b[^.;!?]*\b(?:all|always|every\w*|never|nobody|no one)\b")
POPULARITY = ("everyone knows", "everybody knows", "everyone agrees", "everybody agrees", "most people think",
              "it is common knowledge", "nobody disagrees")
# The absolutes a sentence may not assert without support: claims of certainty or universality. Quantifiers
# such as "all" and "every" also describe scope ("a slow consumer delays every job"), and "optimal" is a judgement.
STRICT_ABSOLUTES = tuple(word for word in ABSOLUTES if word not in ("all", "every", "none", "optimal", "perfect"))


def analyze_reasoning(*, reasoning: str, context: str, include_confidence: bool, include_bias: bool,
                      include_emotion: bool, memories: list[EvidenceItem], backend: ModelBackend | None) -> dict:
    """The seed's analyze_reasoning data, plus ``method`` (and ``modelError`` when a model answer was unusable)."""
    given = {"reasoning": reasoning, "context": context, "memories": memories}
    data = model_or_fallback(backend, ask=lambda model: _model_quality(model, **given),
                             fallback=lambda: _deterministic_quality(**given))
    if include_confidence:
        data["confidence"] = assess_confidence(reasoning=reasoning, evidence_texts=[], context=context,
                                               memories=memories, backend=backend)
    if include_bias:
        data["biases"] = read_biases(text=reasoning, context=context, memories=memories, backend=backend)["biases"]
    if include_emotion:
        data["emotion"] = read_emotion(text=reasoning, include_discrete=True, context=context, memories=memories,
                                       backend=backend)
    return data


def fallacies(signals: Signals) -> list[str]:
    """Each fallacy cue found, as a sentence quoting the text that shows it."""
    found = []
    for sentence in signals.sentences:
        quoted = f"'{sentence.strip()}'"
        if _is_circular(sentence):
            found.append(f"Circular reasoning: {quoted} gives the claim as its own reason.")
        absolutes = find(sentence, STRICT_ABSOLUTES)
        if absolutes and not find(sentence, SUPPORT):
            found.append(f"Unsupported absolute ({', '.join(absolutes)}): {quoted} asserts it without support.")
        if FALSE_DICHOTOMY.search(sentence):
            found.append(f"False dichotomy: {quoted} allows only two options.")
        if HASTY.search(sentence):
            found.append(f"Hasty generalisation: {quoted} draws a rule from a few cases.")
        if find(sentence, POPULARITY):
            found.append(f"Appeal to popularity: {quoted} rests on what people believe.")
    return found


def _is_circular(sentence: str) -> bool:
    """The reason after "because" restates the claim before it: "because it is ..." or the same content words."""
    claim, _, reason = sentence.partition("because")
    if not reason:
        return False
    claim_words, reason_words = set(content_words(claim)), set(content_words(reason))
    restated = bool(reason_words) and len(reason_words & claim_words) / len(reason_words) >= 0.8
    return restated or (bool(CIRCULAR_REASON.search(sentence)) and bool(reason_words & claim_words))


def evidence_support(signals: Signals, *, memories: list[EvidenceItem]) -> float:
    # Not every sentence is a claim (alternatives, risks): support in every other sentence counts as full.
    supported = min(1.0, signals.supported_sentences / math.ceil(signals.sentence_count / 2))
    return round(min(1.0, 0.35 * supported + 0.45 * cited(signals) + 0.2 * remembered(memories)), 3)


def _deterministic_quality(*, reasoning: str, context: str, memories: list[EvidenceItem]) -> dict[str, Any]:
    signals = Signals(reasoning)
    found = fallacies(signals)
    quality = {
        "coherence": coherence(signals),
        "completeness": completeness(signals, context=context, evidence_texts=[]),
        "logicalValidity": round(max(0.0, 1 - FALLACY_PENALTY * len(found)), 3),
        "evidenceSupport": evidence_support(signals, memories=memories),
    }
    strengths, weaknesses, recommendations = _assessment(signals, quality, context=context, fallacies=found,
                                                         memories=memories)
    return {"quality": quality, "strengths": strengths, "weaknesses": weaknesses,
            "recommendations": recommendations, "method": DETERMINISTIC}


def _assessment(signals: Signals, quality: dict[str, float], *, context: str, fallacies: list[str],
                memories: list[EvidenceItem]) -> tuple[list[str], list[str], list[str]]:
    strengths: list[str] = []
    weaknesses: list[str] = []
    recommendations: list[str] = []

    def weakness(text: str, recommendation: str) -> None:
        weaknesses.append(text)
        recommendations.append(recommendation)

    if quality["coherence"] >= 0.7 and signals.connectives:
        strengths.append(f"Clear logical structure: claims are linked ({listed(signals.connectives)})")
    if signals.numbers:
        strengths.append(f"Quantified claims ({listed(signals.numbers)})")
    if signals.sources:
        strengths.append(f"Names its sources of evidence ({listed(signals.sources)})")
    if signals.alternatives:
        strengths.append(f"Considers alternatives ({listed(signals.alternatives)})")
    if signals.risks:
        strengths.append(f"Names risks and limits ({listed(signals.risks)})")
    if not fallacies:
        strengths.append("No fallacy cues found (circular reasoning, unsupported absolutes, false dichotomy, "
                         "hasty generalisation, appeal to popularity)")

    if quality["coherence"] < WEAK:
        weakness("Claims are asserted without reasons", "State why each claim follows (because, based on, therefore)")
    if quality["evidenceSupport"] < WEAK:
        weakness("Limited evidence: few figures, sources or supporting clauses",
                 "Gather data that would confirm or refute the conclusion, and cite it")
    if not signals.alternatives:
        weakness("Missing alternative perspectives", "Consider counterarguments and at least one alternative")
    if not signals.risks:
        weakness("No risks or limitations are named", "Name what could make the conclusion wrong")
    missing, _ = uncovered_context(signals, context=context, evidence_texts=[])
    if missing:
        terms = listed(missing, quoted=True)
        weakness(f"Does not address the context's {terms}", f"Relate the reasoning to {terms}")
    for fallacy in fallacies:
        weakness(fallacy, "Restate the step so that its conclusion follows from independent support")
    for item in memories:
        if item.kind in (Memory.Kind.SHARP_EDGE, Memory.Kind.ISSUE):
            label = "sharp edge" if item.kind == Memory.Kind.SHARP_EDGE else "issue"
            weakness(f"Does not account for a known {label} (memory {item.id}): {first_line(item.content)}",
                     f"Check the reasoning against the {label} in memory {item.id}")
        elif item.kind == Memory.Kind.DECISION:
            recommendations.append(consistency_check(item))
    return strengths, weaknesses, recommendations


def _model_quality(backend: ModelBackend, *, reasoning: str, context: str,
                   memories: list[EvidenceItem]) -> dict[str, Any]:
    system = (
        "You review the quality of a piece of reasoning. Rate from 0 to 1: coherence (conclusions follow from "
        "premises), completeness (context, alternatives and risks covered), logicalValidity (free of fallacies such "
        "as circular reasoning, false dichotomy, hasty generalisation, unsupported absolutes), evidenceSupport "
        "(claims backed by evidence). List concrete strengths, weaknesses and recommendations that quote the "
        "reasoning; use the user's memories as evidence or counter-evidence and cite them by id. Answer with JSON "
        "only: {\"quality\": {\"coherence\": n, \"completeness\": n, \"logicalValidity\": n, \"evidenceSupport\": n}, "
        "\"strengths\": [text], \"weaknesses\": [text], \"recommendations\": [text]}."
    )
    answer = ask_json(backend, system=system, prompt=reading_prompt("Reasoning", reasoning, context, memories),
                      max_tokens=MAX_TOKENS, key="analyze_reasoning")
    return {"quality": ratings(answer.get("quality"), QUALITY, what="quality ratings"),
            "strengths": texts(answer.get("strengths")), "weaknesses": texts(answer.get("weaknesses")),
            "recommendations": texts(answer.get("recommendations"))}



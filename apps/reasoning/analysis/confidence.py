"""assess_confidence: how far a piece of reasoning deserves to be believed, in ThoughtMCP's five dimensions.

Deterministic assessment (no model), each dimension in [0, 1]:
- evidenceQuality = 0.6 given + 0.25 cited + 0.15 memories. ``given``: the evidence items passed, with diminishing
  returns on their count (1 - 0.5^n) times their specificity (figures, named sources such as benchmarks, logs,
  metrics, enough words to say something); ``cited``: figures and sources inside the reasoning itself;
  ``memories``: the summed relevance of the caller's related memories (2.0 counts as full).
- reasoningCoherence = 0.3 + 0.3 connectives per sentence ("because", "therefore", "based on") + 0.3 share of
  sentences that give support for their claim + 0.1 length (20 words = full), minus 0.2 per contradiction (a pair
  of opposite claims: increase/decrease, always/never ...).
- completeness = 0.35 coverage of the context's terms, leaving out words that only name the occasion ("decision",
  "review") (0.5 when there is no context to cover) + 0.25 alternatives
  considered + 0.2 risks and limits named + 0.2 length (50 words = full).
- uncertaintyLevel = 0.15 + 0.55 hedges per sentence + 0.1 per absolute claim (at most 3) when the evidence is weak
  (a claim stated more strongly than its support is uncertain) - 0.05 when the reasoning quantifies.
- biasFreedom = 1 - the severity of the strongest bias the bias detector finds.

overallConfidence = (0.3 evidenceQuality + 0.3 reasoningCoherence + 0.25 completeness + 0.15 (1 - uncertaintyLevel))
x (0.6 + 0.4 biasFreedom): a strong bias costs up to 40%, without erasing what the rest established.

With a model, the model rates the five dimensions and writes warnings and recommendations; the overall rule and
interpretation bands stay these, so that both methods mean the same by a number.

Warnings and recommendations name what is missing: the absent evidence, the context terms not addressed, the hedges
and absolutes found, the biases, and the caller's related sharp edges, issues and decisions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from statistics import mean
from typing import Any

from apps.memories.models import Memory
from apps.reasoning.analysis.bias import detect_biases
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend
from apps.reasoning.analysis.llm import ask_json, evidence_prompt, model_or_fallback, ratings, texts
from apps.reasoning.analysis.reasoning_text import SENTENCE_BREAK, first_line, listed, matched

DIMENSIONS = ("evidenceQuality", "reasoningCoherence", "completeness", "uncertaintyLevel", "biasFreedom")
WEIGHTS = {"evidenceQuality": 0.3, "reasoningCoherence": 0.3, "completeness": 0.25, "uncertaintyLevel": 0.15}
INTERPRETATIONS = (
    (0.8, "High confidence - reasoning is well-supported"),
    (0.6, "Moderate confidence - reasoning is plausible but has gaps"),
    (0.4, "Low confidence - significant gaps in support"),
    (0.0, "Very low confidence - reasoning is largely unsupported"),
)
WEAK = 0.5
MAX_TOKENS = 700

WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
NUMBER = re.compile(r"\d+(?:[.,]\d+)?\s*(?:%|percent|x\b|ms\b|s\b|gb\b|mb\b|k\b)?")
CONNECTIVES = ("because", "therefore", "thus", "hence", "since", "so that", "as a result", "which means",
               "consequently", "given that", "based on", "due to", "this means", "it follows", "so", "leads to")
SUPPORT = ("because", "since", "based on", "given that", "due to", "according to", "evidence", "data", "measured",
           "shows", "showed", "show", "demonstrates", "benchmark", "benchmarks", "tests", "results", "as seen")
SOURCES = ("benchmark", "benchmarks", "test", "tests", "data", "metrics", "measured", "measurement", "measurements",
           "logs", "survey", "study", "studies", "experiment", "experiments", "report", "results", "profiling",
           "profile", "trace", "traces", "production", "a/b", "load test", "dashboard", "monitoring", "paper")
HEDGES = ("might", "may", "could", "possibly", "perhaps", "probably", "likely", "unlikely", "unclear", "uncertain",
          "not sure", "seems", "appears", "assume", "assuming", "approximately", "roughly", "guess", "maybe",
          "suspect", "i think", "hopefully")
ABSOLUTES = ("always", "never", "definitely", "certainly", "guaranteed", "undoubtedly", "obviously", "all", "none",
             "every", "everyone", "nothing", "no one", "impossible", "proven", "optimal", "perfect")
ALTERNATIVES = ("alternative", "alternatives", "alternatively", "instead", "option", "options", "compared",
                "versus", "vs", "trade-off", "tradeoff", "trade-offs", "on the other hand", "unless", "otherwise",
                "whereas", "counterargument", "other approach")
RISKS = ("risk", "risks", "downside", "edge case", "edge cases", "limitation", "limitations", "caveat", "fail",
         "fails", "failure", "regression", "drawback", "assumption", "assumptions", "worst case", "rollback")
OPPOSITES = (("increase", "decrease"), ("improve", "worsen"), ("improves", "degrades"), ("faster", "slower"),
             ("always", "never"), ("safe", "unsafe"), ("more", "fewer"), ("success", "failure"), ("all", "none"))
STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being this
that these those it its into than then there their they them we our you your i he she his her not no yes do does did
done have has had will would should can could may might must about over under also just only very more most less
such what which who whom when where why how all any each other some""".split())
STEM_CHARS = 5
# Words that say what kind of occasion the context is ("Technical decision review") rather than what the reasoning
# must cover: coverage does not ask for them.
OCCASION_WORDS = frozenset("""decision decisions review reviews analysis assessment evaluation technical context discussion
meeting communication research report planning work project question""".split())


def find(text: str, phrases: tuple[str, ...]) -> list[str]:
    """The phrases that occur in ``text`` as whole words, a hyphenated compound counting as one word."""
    return matched(text, phrases, word_chars=r"\w-")


def content_words(text: str) -> list[str]:
    return [word for word in WORD.findall(text.lower()) if len(word) > 3 and word not in STOPWORDS]


def _stems(words: list[str]) -> set[str]:
    return {word[:STEM_CHARS] for word in words}


@dataclass(frozen=True)
class Signals:
    """What the deterministic assessment reads in a text, computed once."""

    text: str

    @cached_property
    def lower(self) -> str:
        return " ".join(self.text.lower().split())

    @cached_property
    def sentences(self) -> list[str]:
        return [part for part in SENTENCE_BREAK.split(self.lower) if WORD.search(part)]

    @cached_property
    def words(self) -> list[str]:
        return WORD.findall(self.lower)

    @cached_property
    def connectives(self) -> list[str]:
        return find(self.lower, CONNECTIVES)

    @cached_property
    def supported_sentences(self) -> int:
        return sum(1 for sentence in self.sentences if find(sentence, SUPPORT))

    @cached_property
    def numbers(self) -> list[str]:
        return [match.strip() for match in NUMBER.findall(self.lower)]

    @cached_property
    def sources(self) -> list[str]:
        return find(self.lower, SOURCES)

    @cached_property
    def hedges(self) -> list[str]:
        return find(self.lower, HEDGES)

    @cached_property
    def absolutes(self) -> list[str]:
        return find(self.lower, ABSOLUTES)

    @cached_property
    def alternatives(self) -> list[str]:
        return find(self.lower, ALTERNATIVES)

    @cached_property
    def risks(self) -> list[str]:
        return find(self.lower, RISKS)

    @cached_property
    def contradictions(self) -> list[tuple[str, str]]:
        return [pair for pair in OPPOSITES if len(find(self.lower, pair)) == 2]

    @property
    def sentence_count(self) -> int:
        return max(1, len(self.sentences))


def specificity(text: str) -> float:
    """How concrete a piece of evidence is: a figure, named sources, and enough words to say something."""
    signals = Signals(text)
    return round(0.35 * bool(signals.numbers) + 0.35 * min(1.0, len(signals.sources) / 2)
                 + 0.3 * min(1.0, len(signals.words) / 8), 3)


def cited(signals: Signals) -> float:
    """The support the text cites itself, 0..1: a figure, and named sources (two count as full)."""
    return 0.5 * bool(signals.numbers) + 0.5 * min(1.0, len(signals.sources) / 2)


def remembered(memories: list[EvidenceItem]) -> float:
    """The support of the caller's related memories, 0..1: their summed relevance, 2.0 counting as full."""
    return min(1.0, sum(item.score for item in memories) / 2)


def evidence_quality(signals: Signals, *, evidence_texts: list[str], memories: list[EvidenceItem]) -> float:
    given = (1 - 0.5 ** len(evidence_texts)) * (0.4 + 0.6 * mean(map(specificity, evidence_texts))) \
        if evidence_texts else 0.0
    return _clamped(0.6 * given + 0.25 * cited(signals) + 0.15 * remembered(memories))


def coherence(signals: Signals) -> float:
    return _clamped(0.3 + 0.3 * min(1.0, len(signals.connectives) / signals.sentence_count)
                    + 0.3 * signals.supported_sentences / signals.sentence_count
                    + 0.1 * min(1.0, len(signals.words) / 20) - 0.2 * len(signals.contradictions))


def uncovered_context(signals: Signals, *, context: str, evidence_texts: list[str]) -> tuple[list[str], int]:
    """The context's terms that neither the reasoning nor its evidence mentions, and how many terms it has."""
    terms = list(dict.fromkeys(word for word in content_words(context) if word not in OCCASION_WORDS))
    said = _stems(signals.words) | _stems(content_words(" ".join(evidence_texts)))
    return [term for term in terms if term[:STEM_CHARS] not in said], len(terms)


def completeness(signals: Signals, *, context: str, evidence_texts: list[str]) -> float:
    missing, total = uncovered_context(signals, context=context, evidence_texts=evidence_texts)
    coverage = (total - len(missing)) / total if total else 0.5
    return _clamped(0.35 * coverage + 0.25 * min(1.0, len(signals.alternatives) / 2)
                    + 0.2 * min(1.0, len(signals.risks) / 2) + 0.2 * min(1.0, len(signals.words) / 50))


def uncertainty(signals: Signals, *, evidence: float) -> float:
    unsupported = min(3, len(signals.absolutes)) if evidence < WEAK else 0
    return _clamped(0.15 + 0.55 * min(1.0, len(signals.hedges) / signals.sentence_count) + 0.1 * unsupported
                    - 0.05 * bool(signals.numbers))


def overall(dimensions: dict[str, float]) -> float:
    weighted = (WEIGHTS["evidenceQuality"] * dimensions["evidenceQuality"]
                + WEIGHTS["reasoningCoherence"] * dimensions["reasoningCoherence"]
                + WEIGHTS["completeness"] * dimensions["completeness"]
                + WEIGHTS["uncertaintyLevel"] * (1 - dimensions["uncertaintyLevel"]))
    return _clamped(weighted * (0.6 + 0.4 * dimensions["biasFreedom"]))


def interpretation(confidence: float) -> str:
    return next(text for floor, text in INTERPRETATIONS if confidence >= floor)


def assess_confidence(*, reasoning: str, evidence_texts: list[str], context: str, memories: list[EvidenceItem],
                      backend: ModelBackend | None) -> dict[str, Any]:
    """The seed's assess_confidence data, plus ``method`` (and ``modelError`` when a model answer was unusable)."""
    given = {"reasoning": reasoning, "evidence_texts": evidence_texts, "context": context, "memories": memories}
    return model_or_fallback(backend, ask=lambda model: _model_assessment(model, **given),
                             fallback=lambda: _deterministic(**given))


def _deterministic(*, reasoning: str, evidence_texts: list[str], context: str,
                   memories: list[EvidenceItem]) -> dict[str, Any]:
    signals = Signals(reasoning)
    biases = detect_biases(reasoning, context=context)
    evidence = evidence_quality(signals, evidence_texts=evidence_texts, memories=memories)
    dimensions = {
        "evidenceQuality": evidence,
        "reasoningCoherence": coherence(signals),
        "completeness": completeness(signals, context=context, evidence_texts=evidence_texts),
        "uncertaintyLevel": uncertainty(signals, evidence=evidence),
        "biasFreedom": _clamped(1 - max((finding.severity for finding in biases), default=0.0)),
    }
    warnings, recommendations = _advice(signals, dimensions, evidence_texts=evidence_texts, context=context,
                                        biases=biases, memories=memories)
    return _result(dimensions, warnings, recommendations, method=DETERMINISTIC)


def _result(dimensions: dict[str, float], warnings: list[str], recommendations: list[str], *,
            method: str) -> dict[str, Any]:
    confidence = overall(dimensions)
    return {"overallConfidence": confidence, "dimensions": dimensions, "interpretation": interpretation(confidence),
            "warnings": warnings, "recommendations": recommendations, "method": method}


def _advice(signals: Signals, dimensions: dict[str, float], *, evidence_texts: list[str], context: str, biases,
            memories: list[EvidenceItem]) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    recommendations: list[str] = []

    def advise(warning: str, recommendation: str) -> None:
        warnings.append(warning)
        recommendations.append(recommendation)

    if dimensions["evidenceQuality"] < WEAK:
        if not evidence_texts:
            advise("No supporting evidence was given.",
                   "List the evidence behind the conclusion: measurements, tests, sources.")
        else:
            advise("The evidence is thin or vague: it cites few figures or named sources.",
                   "Quantify the evidence and name where each figure comes from.")
    if dimensions["reasoningCoherence"] < WEAK:
        advise("Claims are asserted without reasons (no 'because', 'based on' or 'therefore').",
               "State why each claim follows from the evidence.")
    for first, second in signals.contradictions:
        advise(f"Possible contradiction: the reasoning says both '{first}' and '{second}'.",
               f"Reconcile the '{first}' and '{second}' claims, or say under which conditions each holds.")
    missing, _ = uncovered_context(signals, context=context, evidence_texts=evidence_texts)
    if missing:
        advise(f"The reasoning does not address the context's {listed(missing, quoted=True)}.",
               f"Explain how the conclusion holds for {listed(missing, quoted=True)}.")
    if not signals.alternatives:
        advise("No alternatives are considered.", "Compare the conclusion with at least one alternative.")
    if not signals.risks:
        advise("No risks, edge cases or limitations are named.",
               "Name what could make this wrong (edge cases, failure modes) and how you would notice.")
    if signals.hedges and dimensions["uncertaintyLevel"] >= WEAK:
        advise(f"The reasoning is hedged ({listed(signals.hedges, quoted=True)}).",
               "Resolve the open questions behind the hedges before relying on the conclusion.")
    if signals.absolutes and dimensions["evidenceQuality"] < WEAK:
        advise(f"Absolute claims without matching support ({listed(signals.absolutes, quoted=True)}).",
               "Qualify the absolute claims or back them with evidence.")
    for finding in biases:
        advise(f"Possible {finding.type.replace('_', ' ')} bias (severity {finding.severity:.2f})"
               + (f": {finding.evidence[0]}" if finding.evidence else "."), finding.correction)
    for item in memories:
        if item.kind == Memory.Kind.SHARP_EDGE:
            advise(f"A known sharp edge may apply (memory {item.id}): {first_line(item.content)}",
                   f"Check the sharp edge's workaround before acting (memory {item.id}).")
        elif item.kind == Memory.Kind.ISSUE:
            advise(f"A related issue is on record (memory {item.id}): {first_line(item.content)}",
                   f"Check whether the issue (memory {item.id}) affects this conclusion.")
        elif item.kind == Memory.Kind.DECISION:
            recommendations.append(consistency_check(item))
    return warnings, recommendations


def consistency_check(item: EvidenceItem) -> str:
    """The recommendation an earlier decision among the caller's memories makes."""
    return f"Check consistency with an earlier decision (memory {item.id}): {first_line(item.content)}"


def _model_assessment(backend: ModelBackend, *, reasoning: str, evidence_texts: list[str], context: str,
                      memories: list[EvidenceItem]) -> dict[str, Any]:
    system = (
        "You assess how much confidence a piece of reasoning deserves. Rate five dimensions from 0 to 1: "
        "evidenceQuality (how strong and specific the support is), reasoningCoherence (whether conclusions follow), "
        "completeness (whether the context, alternatives and risks are covered), uncertaintyLevel (how much remains "
        "uncertain: 0 certain, 1 wholly uncertain), biasFreedom (1 = free of cognitive bias). Use the user's "
        "memories as extra evidence or counter-evidence. Answer with JSON only: {\"dimensions\": {\"evidenceQuality\""
        ": n, \"reasoningCoherence\": n, \"completeness\": n, \"uncertaintyLevel\": n, \"biasFreedom\": n}, "
        "\"warnings\": [text], \"recommendations\": [text]}."
    )
    given = "\n".join(f"- {text}" for text in evidence_texts) or "- none"
    prompt = (f"Reasoning:\n{reasoning}\n\nEvidence given:\n{given}\n\nContext: {context or 'none'}\n\n"
              f"{evidence_prompt(memories)}")
    answer = ask_json(backend, system=system, prompt=prompt, max_tokens=MAX_TOKENS, key="assess_confidence")
    dimensions = ratings(answer.get("dimensions"), DIMENSIONS, what="dimensions")
    return _result(dimensions, texts(answer.get("warnings")), texts(answer.get("recommendations")),
                   method=backend.method)


def _clamped(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 3)


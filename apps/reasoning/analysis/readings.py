"""detect_bias and detect_emotion (and the readings analyze_reasoning can include): the model's reading, held to
the seed's vocabulary, else the lexicon detectors' (bias.py, emotion.py).

With a model, the model answers in the seed's shape and the answer is held to the seed's vocabulary: only the
eight bias types and the eleven emotions, numbers clamped to their ranges, intensity from the score. An unusable
answer falls back to the lexicon with "modelError".
"""
from __future__ import annotations

from typing import Any

from apps.reasoning.analysis.bias import BIAS_TYPES, detect_biases
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend
from apps.reasoning.analysis.emotion import EMOTIONS, detect_emotion, intensity_label
from apps.reasoning.analysis.llm import (
    ModelAnswerInvalid,
    ask_json,
    model_or_fallback,
    ratings,
    reading_prompt,
    texts,
    unit,
)

MAX_TOKENS = 900
# The detector behind a deterministic reading of bias or emotion.
LEXICON = "lexicon"
UNSTATED_CONFIDENCE = 0.5


def read_biases(*, text: str, context: str, memories: list[EvidenceItem], backend: ModelBackend | None) -> dict:
    """{biases: [the seed's bias objects], method, detector?, modelError?}."""
    return model_or_fallback(
        backend, ask=lambda model: {"biases": _model_biases(model, text=text, context=context, memories=memories)},
        fallback=lambda: _lexicon_biases(text=text, context=context))


def _lexicon_biases(*, text: str, context: str) -> dict:
    return {"biases": [finding.as_dict() for finding in detect_biases(text, context=context)],
            "method": DETERMINISTIC, "detector": LEXICON}


def _model_biases(backend: ModelBackend, *, text: str, context: str, memories: list[EvidenceItem]) -> list[dict]:
    kinds = "\n".join(f"- {name}: {description}" for name, description in BIAS_TYPES.items())
    system = (
        "You detect cognitive biases in reasoning. Only these bias types exist:\n" + kinds + "\nReport only biases the "
        "text shows, each with severity and confidence from 0 to 1, the phrases that show it as evidence, and a "
        "correction strategy. Answer with JSON only: {\"biases\": [{\"type\": name, \"severity\": n, \"confidence\": "
        "n, \"evidence\": [text], \"correction\": text}]} (an empty list when there is none)."
    )
    answer = ask_json(backend, system=system, prompt=reading_prompt("Reasoning", text, context, memories),
                      max_tokens=MAX_TOKENS, key="detect_bias")
    if not isinstance(answer.get("biases"), list):
        raise ModelAnswerInvalid("The model's answer has no \"biases\" list.")
    biases = []
    for item in answer["biases"]:
        if not isinstance(item, dict) or item.get("type") not in BIAS_TYPES:
            continue  # outside the seed's eight types: not a finding this tool can report
        severity, confidence = unit(item.get("severity")), unit(item.get("confidence"))
        correction = item.get("correction")
        if severity is None or not isinstance(correction, str) or not correction.strip():
            continue
        biases.append({"type": item["type"], "severity": severity, "evidence": texts(item.get("evidence")),
                       "correction": correction.strip(), "confidence": severity if confidence is None else confidence})
    if answer["biases"] and not biases:
        raise ModelAnswerInvalid("None of the model's biases is one of the eight known types with a severity and "
                                 "a correction.")
    return sorted(biases, key=lambda bias: bias["severity"], reverse=True)


def read_emotion(*, text: str, include_discrete: bool, context: str, memories: list[EvidenceItem],
                 backend: ModelBackend | None) -> dict:
    """{circumplex, discrete? (when include_discrete), method, detector?, modelError?}."""
    return model_or_fallback(
        backend, ask=lambda model: _model_emotion(model, text=text, include_discrete=include_discrete,
                                                  context=context, memories=memories),
        fallback=lambda: _lexicon_emotion(text=text, include_discrete=include_discrete, context=context))


def _lexicon_emotion(*, text: str, include_discrete: bool, context: str) -> dict:
    reading = detect_emotion(text, include_discrete=include_discrete, context=context).as_dict()
    return {**reading, "method": DETERMINISTIC, "detector": LEXICON}


def _model_emotion(backend: ModelBackend, *, text: str, include_discrete: bool, context: str,
                   memories: list[EvidenceItem]) -> dict:
    system = (
        "You read the emotion in a text. Give the circumplex: valence from -1 (negative) to 1 (positive), arousal "
        "from 0 (calm) to 1 (activated), dominance from -1 (submissive) to 1 (in control), and your confidence from 0 "
        f"to 1. Then score from 0 to 1 those of these emotions the text expresses: {', '.join(EMOTIONS)}. Answer "
        "with JSON only: {\"circumplex\": {\"valence\": n, \"arousal\": n, \"dominance\": n, \"confidence\": n}, "
        "\"discrete\": {\"emotions\": [{\"emotion\": name, \"score\": n}], \"confidence\": n}}."
    )
    answer = ask_json(backend, system=system, prompt=reading_prompt("Text", text, context, memories),
                      max_tokens=MAX_TOKENS, key="detect_emotion")
    given = answer.get("circumplex")
    bipolar = ratings(given, ("valence", "dominance"), what="circumplex values", low=-1.0)
    arousal = ratings(given, ("arousal",), what="circumplex values")["arousal"]
    confidence = unit(given.get("confidence")) if isinstance(given, dict) else None
    circumplex = {"valence": bipolar["valence"], "arousal": arousal, "dominance": bipolar["dominance"],
                  # the model gave no confidence: neither sure nor unsure
                  "confidence": UNSTATED_CONFIDENCE if confidence is None else confidence}
    reading = {"circumplex": circumplex}
    if include_discrete:
        reading["discrete"] = _model_discrete(answer.get("discrete"), fallback_confidence=circumplex["confidence"])
    return reading


def _model_discrete(given: Any, *, fallback_confidence: float) -> dict:
    given = given if isinstance(given, dict) else {}
    scores: dict[str, float] = {}
    for item in given.get("emotions") if isinstance(given.get("emotions"), list) else []:
        if isinstance(item, dict) and item.get("emotion") in EMOTIONS and unit(item.get("score")) is not None:
            scores[item["emotion"]] = max(scores.get(item["emotion"], 0.0), unit(item["score"]))
    ranked = sorted(scores.items(), key=lambda pair: pair[1], reverse=True)
    confidence = unit(given.get("confidence"))
    return {"primary": ranked[0][0] if ranked else None,
            "emotions": [{"emotion": name, "score": score, "intensity": intensity_label(score)}
                         for name, score in ranked],
            "confidence": fallback_confidence if confidence is None else confidence}

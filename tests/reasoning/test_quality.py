"""analyze_reasoning and the bias and emotion readings as pure functions: quality dimensions that respond to the
text, each fallacy cue, strengths and weaknesses that quote it, the optional parts, memories, and model answers
held to the seed's vocabulary (a backend object here tests only the parsing; over HTTP: test_model_mode.py)."""
import json
from dataclasses import dataclass, field

import pytest

from apps.reasoning.analysis.common import EvidenceItem
from apps.reasoning.analysis.quality import analyze_reasoning
from apps.reasoning.analysis.readings import read_biases, read_emotion

SEED = ("Based on our analysis, the proposed solution is optimal because it addresses all requirements while "
        "minimizing costs")
SOUND = ("Based on the load test, the queue handles 2,000 jobs per second, because workers scale horizontally. "
         "Therefore it meets the target of 1,500. The alternative, a cron batch, is simpler; the risk is that a "
         "slow consumer delays every job, so we alert on queue depth.")


def analyze(reasoning, context="", memories=(), backend=None, **include):
    flags = {"include_confidence": True, "include_bias": True, "include_emotion": False} | include
    return analyze_reasoning(reasoning=reasoning, context=context, memories=list(memories), backend=backend, **flags)


def test_seed_example_shape():
    data = analyze(SEED, "Technical decision review")
    assert set(data) == {"quality", "strengths", "weaknesses", "recommendations", "confidence", "biases", "method"}
    assert set(data["quality"]) == {"coherence", "completeness", "logicalValidity", "evidenceSupport"}
    assert all(0 <= value <= 1 for value in data["quality"].values())
    assert data["method"] == "deterministic"
    assert set(data["confidence"]) >= {"overallConfidence", "dimensions"}
    assert isinstance(data["biases"], list)
    assert "Missing alternative perspectives" in data["weaknesses"]
    assert "Consider counterarguments and at least one alternative" in data["recommendations"]


def test_optional_parts_follow_the_flags():
    bare = analyze(SOUND, include_confidence=False, include_bias=False)
    assert "confidence" not in bare and "biases" not in bare and "emotion" not in bare
    felt = analyze("I am thrilled: the launch went perfectly and the team is proud!", include_emotion=True)
    assert felt["emotion"]["circumplex"]["valence"] > 0 and felt["emotion"]["method"] == "deterministic"
    assert felt["emotion"]["discrete"]["primary"] in {"joy", "pride"}


def test_sound_reasoning_beats_the_seed_claim_and_strengths_quote_it():
    sound, seed = analyze(SOUND), analyze(SEED)
    assert sound["quality"]["evidenceSupport"] > seed["quality"]["evidenceSupport"]
    assert sound["quality"]["completeness"] > seed["quality"]["completeness"]
    assert any("2,000" in strength for strength in sound["strengths"])
    assert any("load test" in strength for strength in sound["strengths"])
    assert any("alternative" in strength for strength in sound["strengths"])
    assert sound["quality"]["logicalValidity"] == 1.0
    assert "Missing alternative perspectives" not in sound["weaknesses"]


@pytest.mark.parametrize(("text", "fallacy"), [
    ("The new design is better because it is better.", "Circular reasoning"),
    ("Either we rewrite the whole service or the product dies.", "False dichotomy"),
    ("One user complained about the new menu, so all users hate it.", "Hasty generalisation"),
    ("Everyone knows microservices scale better than a monolith.", "Appeal to popularity"),
    ("This caching approach always works.", "Unsupported absolute"),
])
def test_each_fallacy_cue_is_found_and_lowers_validity(text, fallacy):
    data = analyze(text)
    assert any(weakness.startswith(fallacy) and text.lower().rstrip(".") in weakness for weakness in data["weaknesses"])
    assert data["quality"]["logicalValidity"] < 1.0


def test_plain_claim_has_no_fallacy():
    data = analyze("The export is slow because it renders each PDF in sequence.")
    assert data["quality"]["logicalValidity"] == 1.0
    assert not any(weakness.startswith(("Circular", "False", "Hasty", "Appeal", "Unsupported"))
                   for weakness in data["weaknesses"])


def test_known_sharp_edges_become_weaknesses():
    edge = EvidenceItem(id="m-1", kind="sharp_edge", content="Sharp edge: queue consumers stall on poison messages",
                        score=0.7)
    data = analyze(SOUND, memories=[edge])
    assert ("Does not account for a known sharp edge (memory m-1): Sharp edge: queue consumers stall on poison "
            "messages") in data["weaknesses"]
    assert data["quality"]["evidenceSupport"] > analyze(SOUND)["quality"]["evidenceSupport"]


def test_lexicon_readings_say_so():
    biases = read_biases(text="All the data I've seen supports my hypothesis that users prefer feature A",
                         context="Product research analysis", memories=[], backend=None)
    assert biases["method"] == "deterministic" and biases["detector"] == "lexicon"
    assert {"type", "severity", "evidence", "correction", "confidence"} <= set(biases["biases"][0])
    emotion = read_emotion(text="I'm worried the release will fail.", include_discrete=False, context="",
                           memories=[], backend=None)
    assert "discrete" not in emotion and emotion["circumplex"]["valence"] < 0


@dataclass
class ByKey:
    """A backend object answering each request by its key, for unit tests of the answer parsing only."""

    answers: dict[str, str]
    method: str = "sampling"
    name: str = "canned"
    asked: list[str] = field(default_factory=list)

    def complete(self, *, system, prompt, max_tokens, key):
        self.asked.append(key)
        return self.answers[key]


def test_model_readings_keep_only_the_seeds_vocabulary():
    backend = ByKey({
        "detect_bias": json.dumps({"biases": [
            {"type": "confirmation", "severity": 1.7, "confidence": 0.8, "evidence": ["only confirming data"],
             "correction": "Seek disconfirming evidence"},
            {"type": "optimism", "severity": 0.9, "correction": "Not a seed type"},
            {"type": "anchoring", "severity": 0.3, "evidence": "not a list", "correction": "Re-estimate from scratch"},
        ]}),
        "detect_emotion": json.dumps({
            "circumplex": {"valence": 1.8, "arousal": 0.7, "dominance": -3, "confidence": 0.9},
            "discrete": {"emotions": [{"emotion": "joy", "score": 0.9}, {"emotion": "excitement", "score": 0.8},
                                      {"emotion": "awe", "score": 0.5}], "confidence": 0.75}}),
    })
    biases = read_biases(text="All data supports my idea", context="", memories=[], backend=backend)
    assert biases["method"] == "sampling" and "modelError" not in biases
    assert biases["biases"] == [
        {"type": "confirmation", "severity": 1.0, "evidence": ["only confirming data"],
         "correction": "Seek disconfirming evidence", "confidence": 0.8},
        {"type": "anchoring", "severity": 0.3, "evidence": [], "correction": "Re-estimate from scratch",
         "confidence": 0.3},
    ]
    emotion = read_emotion(text="Wow, this is wonderful!", include_discrete=True, context="", memories=[],
                           backend=backend)
    assert emotion["circumplex"] == {"valence": 1.0, "arousal": 0.7, "dominance": -1.0, "confidence": 0.9}
    assert emotion["discrete"] == {"primary": "joy", "confidence": 0.75, "emotions": [
        {"emotion": "joy", "score": 0.9, "intensity": "high"},
        {"emotion": "awe", "score": 0.5, "intensity": "moderate"}]}


@pytest.mark.parametrize(("answers", "error"), [
    ({"detect_bias": '{"biases": [{"type": "optimism", "severity": 0.9, "correction": "x"}]}'}, "eight known types"),
    ({"detect_bias": '{"findings": []}'}, '"biases" list'),
])
def test_unusable_bias_answers_fall_back_to_the_lexicon(answers, error):
    data = read_biases(text="All the data I've seen supports my hypothesis", context="", memories=[],
                       backend=ByKey(answers))
    assert data["method"] == "deterministic" and data["detector"] == "lexicon" and error in data["modelError"]


def test_model_quality_and_its_fallback():
    good = ByKey({"analyze_reasoning": json.dumps({
        "quality": {"coherence": 0.8, "completeness": 0.6, "logicalValidity": 1.2, "evidenceSupport": 0.4},
        "strengths": ["Clear cost argument"], "weaknesses": ["No numbers"], "recommendations": ["Quantify costs"]})})
    data = analyze(SEED, include_confidence=False, include_bias=False, backend=good)
    assert data == {"quality": {"coherence": 0.8, "completeness": 0.6, "logicalValidity": 1.0, "evidenceSupport": 0.4},
                    "strengths": ["Clear cost argument"], "weaknesses": ["No numbers"],
                    "recommendations": ["Quantify costs"], "method": "sampling"}
    bad = ByKey({"analyze_reasoning": '{"quality": {"coherence": 0.8}}'})
    fallback = analyze(SEED, include_confidence=False, include_bias=False, backend=bad)
    assert fallback["method"] == "deterministic" and "logicalValidity" in fallback["modelError"]
    assert fallback["quality"] == analyze(SEED, include_confidence=False, include_bias=False)["quality"]

"""assess_confidence as a pure function: the five dimensions respond to what the reasoning contains, the overall rule,
interpretation bands, warnings that name what is missing, memories as evidence, and a model's answer held to the
seed's shape (a backend object here tests only the parsing; the model over HTTP is in test_model_mode.py)."""
import pytest

from apps.reasoning.analysis.bias import detect_biases
from apps.reasoning.analysis.common import EvidenceItem
from apps.reasoning.analysis.confidence import DIMENSIONS, INTERPRETATIONS, assess_confidence, interpretation, overall
from tests.reasoning.model_server import Canned

SEED_REASONING = "Based on benchmark results, the optimization will improve throughput by 40%"
SEED_EVIDENCE = ["Benchmark results showing 40% improvement", "Load test data", "Production metrics"]
SEED_CONTEXT = "Production deployment decision"
STRONG = ("Based on three weeks of production metrics, p95 latency fell from 480 ms to 210 ms after we added the "
          "read cache, because 70% of requests are repeated reads. Therefore the cache should stay. The alternative, "
          "a bigger database instance, costs more; the risk is stale data, which we bound with a 60 s expiry.")
UNSUPPORTED = "It will definitely work. Everyone will love it. Nothing can go wrong."


def assess(reasoning, evidence=(), context="", memories=(), backend=None):
    return assess_confidence(reasoning=reasoning, evidence_texts=list(evidence), context=context,
                             memories=list(memories), backend=backend)


def test_seed_example_has_the_seed_shape_and_follows_the_rule():
    data = assess(SEED_REASONING, SEED_EVIDENCE, SEED_CONTEXT)
    assert set(data) == {"overallConfidence", "dimensions", "interpretation", "warnings", "recommendations", "method"}
    assert data["method"] == "deterministic" and set(data["dimensions"]) == set(DIMENSIONS)
    assert all(0 <= value <= 1 for value in data["dimensions"].values())
    d = data["dimensions"]
    expected = (0.3 * d["evidenceQuality"] + 0.3 * d["reasoningCoherence"] + 0.25 * d["completeness"]
                + 0.15 * (1 - d["uncertaintyLevel"])) * (0.6 + 0.4 * d["biasFreedom"])
    assert data["overallConfidence"] == pytest.approx(expected, abs=0.002)
    assert data["interpretation"] == interpretation(data["overallConfidence"])
    assert d["evidenceQuality"] > 0.5  # three items, figures and named sources
    assert "No supporting evidence was given." not in data["warnings"]
    # The context's occasion ("decision") is not a term to cover; what it is about ("deployment") is.
    [context_warning] = [warning for warning in data["warnings"] if "context" in warning]
    assert "'deployment'" in context_warning and "decision" not in context_warning


def test_interpretation_bands():
    assert [interpretation(value).split(" - ")[0] for value in (0.95, 0.7, 0.5, 0.1)] == [
        "High confidence", "Moderate confidence", "Low confidence", "Very low confidence"]
    assert [floor for floor, _ in INTERPRETATIONS] == sorted((floor for floor, _ in INTERPRETATIONS), reverse=True)
    assert overall(dict.fromkeys(DIMENSIONS, 1.0) | {"uncertaintyLevel": 0.0}) == 1.0


def test_supported_reasoning_scores_above_unsupported_claims():
    strong = assess(STRONG, ["Grafana p95 latency dashboard, 3 weeks", "Cache hit ratio 70% from Redis metrics"],
                    "Keep or drop the read cache")
    weak = assess(UNSUPPORTED)
    for dimension in ("evidenceQuality", "reasoningCoherence", "completeness"):
        assert strong["dimensions"][dimension] > weak["dimensions"][dimension], dimension
    assert strong["dimensions"]["uncertaintyLevel"] < weak["dimensions"]["uncertaintyLevel"]
    assert strong["overallConfidence"] > weak["overallConfidence"] + 0.2
    assert "No supporting evidence was given." in weak["warnings"]
    assert any("'definitely'" in warning for warning in weak["warnings"])
    assert "No alternatives are considered." in weak["warnings"]
    assert "No alternatives are considered." not in strong["warnings"]
    assert strong["recommendations"] != weak["recommendations"]


def test_context_terms_not_addressed_are_named():
    data = assess("The new index makes the search query faster.", context="GDPR compliance and the latency budget")
    [warning] = [w for w in data["warnings"] if "context" in w]
    assert "'gdpr'" in warning and "'compliance'" in warning and "'latency'" in warning
    covered = assess("The new index keeps us within the latency budget and stores no personal data, so GDPR "
                     "compliance is unaffected.", context="GDPR compliance and the latency budget")
    assert covered["dimensions"]["completeness"] > data["dimensions"]["completeness"]
    assert not [w for w in covered["warnings"] if "context" in w]


def test_contradictions_lower_coherence_and_are_named():
    plain = assess("Caching will decrease latency because repeated reads skip the database.")
    contradictory = assess("Caching will decrease latency because repeated reads skip the database. "
                           "Caching will increase latency because every write invalidates entries.")
    assert contradictory["dimensions"]["reasoningCoherence"] < plain["dimensions"]["reasoningCoherence"]
    assert any("'increase' and 'decrease'" in warning for warning in contradictory["warnings"])


def test_hedges_raise_uncertainty():
    hedged = assess("The migration might work. Perhaps it could also fail. It is unclear.")
    plain = assess("The migration works: it ran on the staging copy without errors.")
    assert hedged["dimensions"]["uncertaintyLevel"] > plain["dimensions"]["uncertaintyLevel"] + 0.3
    assert any("hedged" in warning and "'might'" in warning for warning in hedged["warnings"])


def test_memories_count_as_evidence_and_bring_their_warnings():
    edge = EvidenceItem(id="m-edge", kind="sharp_edge", score=0.8,
                        content="Sharp edge: pool exhaustion under load\nWorkaround: raise the pool size")
    decision = EvidenceItem(id="m-dec", kind="decision", content="Decision: use PgBouncer", score=0.7)
    alone = assess(SEED_REASONING)
    remembered = assess(SEED_REASONING, memories=[edge, decision])
    assert remembered["dimensions"]["evidenceQuality"] > alone["dimensions"]["evidenceQuality"]
    assert ("A known sharp edge may apply (memory m-edge): Sharp edge: pool exhaustion under load"
            in remembered["warnings"])
    assert any("memory m-dec" in text and "use PgBouncer" in text for text in remembered["recommendations"])


def test_bias_freedom_is_one_minus_the_strongest_bias():
    text = "All the data I've seen supports my hypothesis that users prefer feature A, so I ignored the rest."
    findings = detect_biases(text, context="Product research analysis")
    data = assess(text, context="Product research analysis")
    strongest = max((finding.severity for finding in findings), default=0.0)
    assert data["dimensions"]["biasFreedom"] == pytest.approx(1 - strongest, abs=0.001)
    assert findings, "the bias detector finds the seed's confirmation-bias example"
    assert any(f"{findings[0].type.replace('_', ' ')} bias" in warning for warning in data["warnings"])
    unbiased = assess(SEED_REASONING)
    assert unbiased["dimensions"]["biasFreedom"] > data["dimensions"]["biasFreedom"]


def test_model_answer_is_clamped_and_uses_the_same_rule():
    backend = Canned('Here you go:\n```json\n{"dimensions": {"evidenceQuality": 1.4, "reasoningCoherence": 0.9, '
                     '"completeness": 0.7, "uncertaintyLevel": -0.2, "biasFreedom": 0.8}, '
                     '"warnings": ["Benchmarks may not cover peak traffic", 7], '
                     '"recommendations": ["Run an A/B test"]}\n```')
    data = assess(SEED_REASONING, SEED_EVIDENCE, SEED_CONTEXT, backend=backend)
    assert data["method"] == "llm" and "modelError" not in data
    assert data["dimensions"] == {"evidenceQuality": 1.0, "reasoningCoherence": 0.9, "completeness": 0.7,
                                  "uncertaintyLevel": 0.0, "biasFreedom": 0.8}
    assert data["overallConfidence"] == overall(data["dimensions"])
    assert data["warnings"] == ["Benchmarks may not cover peak traffic"]
    assert data["recommendations"] == ["Run an A/B test"]
    [prompt] = backend.prompts
    assert SEED_REASONING in prompt and "Load test data" in prompt


@pytest.mark.parametrize(("answer", "error"), [
    ('{"dimensions": {"evidenceQuality": 0.5, "reasoningCoherence": "high"}}', "reasoningCoherence"),
    ("I am fairly confident in this reasoning.", "no JSON object"),
])
def test_unusable_model_answer_falls_back(answer, error):
    data = assess(SEED_REASONING, SEED_EVIDENCE, backend=Canned(answer))
    assert data["method"] == "deterministic" and error in data["modelError"]
    assert data["dimensions"] == assess(SEED_REASONING, SEED_EVIDENCE)["dimensions"]

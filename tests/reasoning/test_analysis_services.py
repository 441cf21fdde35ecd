"""The eight reasoning services end to end on the real database, without a model: the seed's data shapes, the
caller's memories (plain, thoughts, Mind decisions and sharp edges) as evidence and in the analysis, bad input for
each tool naming the service's argument, and isolation: bob's memories never reach alice's analyses."""
import json

import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.services.analysis import (
    reasoning_analyze, reasoning_analyze_systematically, reasoning_assess_confidence, reasoning_decompose,
    reasoning_detect_bias, reasoning_detect_emotion, reasoning_think, reasoning_think_parallel,
)
from tests.reasoning.model_server import knowledge, no_model  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_model")]

PROBLEM = "Why does the payment service time out under load?"
CONTEXT = {"background": "Checkout traffic doubled last month", "constraints": ["No new servers"],
           "goals": ["p95 under 300 ms"]}
REASONING = ("The payment service times out under load because the connection pool is exhausted, so we should "
             "raise the pool size.")

# Each tool: its service, a valid call about the payment service, and the keys of the seed's data object.
TOOLS = {
    "think": (reasoning_think, {"problem": PROBLEM, "mode": "analytical", "context": CONTEXT},
              {"conclusion", "reasoning", "insights", "confidence"}),
    "analyze_systematically": (reasoning_analyze_systematically, {"problem": PROBLEM, "context": CONTEXT},
                               {"framework", "selection", "result", "alternatives"}),
    "think_parallel": (reasoning_think_parallel, {"problem": PROBLEM, "timeout_ms": 30000, "context": CONTEXT},
                       {"conclusion", "insights", "recommendations", "conflicts", "confidence", "quality"}),
    "decompose_problem": (reasoning_decompose, {"problem": PROBLEM, "max_depth": 3, "context": CONTEXT},
                          {"problem", "subProblems", "dependencies", "executionOrder", "totalSubProblems", "maxDepth"}),
    "assess_confidence": (reasoning_assess_confidence, {"reasoning": REASONING, "evidence": ["Pool wait metrics"],
                                                        "context": "Payment service incident review"},
                          {"overallConfidence", "dimensions", "interpretation", "warnings", "recommendations"}),
    "detect_bias": (reasoning_detect_bias, {"reasoning": REASONING, "context": "Incident review"},
                    {"biases", "detectionTime", "monitoringActive"}),
    "detect_emotion": (reasoning_detect_emotion, {"text": "I'm so frustrated the payment service keeps timing out "
                                                          "under load!", "include_discrete": True},
                       {"circumplex", "discrete", "detectionTime"}),
    "analyze_reasoning": (reasoning_analyze, {"reasoning": REASONING, "context": "Incident review"},
                          {"quality", "strengths", "weaknesses", "recommendations", "confidence", "biases"}),
}


@pytest.mark.parametrize("tool", list(TOOLS))
def test_each_tool_answers_in_the_seed_shape_with_the_callers_memories(tool, user, knowledge):  # noqa: F811
    service, arguments, keys = TOOLS[tool]
    data = service(actor=user, **arguments)
    assert keys <= set(data), keys - set(data)
    assert data["method"] == "deterministic" and "modelError" not in data
    kinds = {item["id"]: item["kind"] for item in data["memories"]}
    assert kinds.get(str(knowledge.edge_node.pk)) == "sharp_edge"
    assert kinds.get(str(knowledge.memory.pk)) == "memory"
    assert str(knowledge.unrelated.pk) not in kinds and str(knowledge.bobs.pk) not in kinds
    assert all(set(item) == {"id", "kind", "content", "score"} for item in data["memories"])
    json.dumps(data)  # every edge serialises it


@pytest.mark.parametrize("tool", ["think", "think_parallel", "decompose_problem", "assess_confidence",
                                  "analyze_reasoning"])
def test_the_sharp_edge_shapes_the_analysis(tool, user, knowledge):  # noqa: F811
    """Beyond the memories list: the analysis itself names the known sharp edge (by its memory id)."""
    service, arguments, _ = TOOLS[tool]
    data = service(actor=user, **arguments)
    analysis = json.dumps({key: value for key, value in data.items() if key != "memories"})
    assert str(knowledge.edge_node.pk) in analysis


def test_decision_memory_feeds_recommendations(user, knowledge):  # noqa: F811
    data = reasoning_assess_confidence(actor=user, reasoning=REASONING)
    assert any(str(knowledge.decision_node.pk) in text and "PgBouncer" in text for text in data["recommendations"])


def test_different_problems_give_different_analyses(user, knowledge):  # noqa: F811
    first = reasoning_think(actor=user, problem=PROBLEM, mode="critical")
    second = reasoning_think(actor=user, problem="Should we move our blog from WordPress to a static site?",
                             mode="critical")
    assert first["conclusion"] != second["conclusion"]
    assert second["memories"] == []


def test_detect_bias_is_honest_about_monitoring(user):
    data = reasoning_detect_bias(actor=user, reasoning="All the data I've seen supports my hypothesis that users "
                                 "prefer feature A", context="Product research analysis", monitor_continuously=True)
    assert data["monitoringActive"] is False and "no background bias monitor" in data["monitoringNote"]
    assert data["biases"][0]["type"] == "confirmation" and data["detector"] == "lexicon"
    assert "monitoringNote" not in reasoning_detect_bias(actor=user, reasoning="The sky is blue.")


def test_detect_emotion_without_discrete(user):
    data = reasoning_detect_emotion(actor=user, text="I'm really excited about this new project! It's going to be "
                                    "amazing!", include_discrete=False, context="Work communication")
    assert "discrete" not in data and data["circumplex"]["valence"] > 0.3


def test_analyze_reasoning_optional_parts(user):
    data = reasoning_analyze(actor=user, reasoning=REASONING, include_confidence=False, include_bias=False,
                             include_emotion=True)
    assert "confidence" not in data and "biases" not in data and "circumplex" in data["emotion"]


BAD_INPUT = [
    (reasoning_think, {"problem": "  ", "mode": "analytical"}, "problem"),
    (reasoning_think, {"problem": PROBLEM, "mode": "dreamy"}, "mode"),
    (reasoning_think, {"problem": PROBLEM, "mode": "analytical", "context": "Checkout traffic doubled"}, None),
    (reasoning_think, {"problem": PROBLEM, "mode": "analytical", "context": {"goals": "fast"}}, "context.goals"),
    (reasoning_analyze_systematically, {"problem": PROBLEM, "preferred_framework": "astrology"},
     "preferred_framework"),
    (reasoning_analyze_systematically, {"problem": 42}, "problem"),
    (reasoning_think_parallel, {"problem": PROBLEM, "timeout_ms": 10}, "timeout_ms"),
    (reasoning_think_parallel, {"problem": PROBLEM, "timeout_ms": "fast"}, "timeout_ms"),
    (reasoning_decompose, {"problem": PROBLEM, "max_depth": 9}, "max_depth"),
    (reasoning_decompose, {"problem": "", "max_depth": 2}, "problem"),
    (reasoning_assess_confidence, {"reasoning": ""}, "reasoning"),
    (reasoning_assess_confidence, {"reasoning": REASONING, "evidence": "metrics"}, "evidence"),
    (reasoning_assess_confidence, {"reasoning": REASONING, "evidence": ["metrics", 3]}, "evidence"),
    (reasoning_assess_confidence, {"reasoning": REASONING, "context": {"background": "x"}}, "context"),
    (reasoning_detect_bias, {"reasoning": None}, "reasoning"),
    (reasoning_detect_bias, {"reasoning": REASONING, "monitor_continuously": "yes"}, "monitor_continuously"),
    (reasoning_detect_emotion, {"text": " "}, "text"),
    (reasoning_detect_emotion, {"text": "Great!", "include_discrete": 1}, "include_discrete"),
    (reasoning_analyze, {"reasoning": REASONING, "include_emotion": "no"}, "include_emotion"),
    (reasoning_analyze, {"reasoning": "x" * 200_000}, "reasoning"),
]


@pytest.mark.parametrize(("service", "arguments", "field"), BAD_INPUT)
def test_bad_input_names_the_field(service, arguments, field, user):
    if field is None:  # a text context is the background, for the tools whose context is an object
        assert service(actor=user, **arguments)["method"] == "deterministic"
        return
    with pytest.raises(InvalidInput) as raised:
        service(actor=user, **arguments)
    assert raised.value.field == field and raised.value.message


def test_bob_sees_only_his_own_memories(user, other_user, knowledge):  # noqa: F811
    bobs_evidence = set()
    for service, arguments, _ in TOOLS.values():
        bobs_evidence |= {item["id"] for item in service(actor=other_user, **arguments)["memories"]}
        alices = {item["id"] for item in service(actor=user, **arguments)["memories"]}
        assert str(knowledge.bobs.pk) not in alices
    assert bobs_evidence == {str(knowledge.bobs.pk)}

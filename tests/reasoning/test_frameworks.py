"""analyze_systematically: framework selection, the override, each framework's steps on the problem, model mode."""
import json

import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import EvidenceItem, ProblemContext
from apps.reasoning.analysis.frameworks import FRAMEWORKS, analyze_systematically, select_framework
from tests.reasoning.test_think import ScriptedModel

SEED_IDS = ["scientific-method", "design-thinking", "systems-thinking", "critical-thinking",
            "creative-problem-solving", "root-cause-analysis", "first-principles", "scenario-planning"]
FAILURES = "Why is the system experiencing intermittent failures?"
FAILURES_CONTEXT = ProblemContext.parse({"background": "Production system with 99.9% SLA",
                                         "constraints": ["Cannot take system offline"]})
POOL_EDGE = EvidenceItem(id="22222222-aaaa-4bbb-8ccc-000000000001", kind="sharp_edge",
                         content="The connection pool leaks connections when a request times out, until the system "
                                 "fails", score=0.6)


def analyze(problem=FAILURES, preferred=None, context=FAILURES_CONTEXT, evidence=(), backend=None):
    return analyze_systematically(problem=problem, preferred_framework=preferred, context=context,
                                  evidence=list(evidence), backend=backend)


def test_the_eight_seed_frameworks_are_described():
    assert list(FRAMEWORKS) == SEED_IDS
    for framework in FRAMEWORKS.values():
        described = framework.as_dict()
        assert described["name"] and described["description"] and described["bestFor"]
        assert len(described["steps"]) >= 3


def test_the_seed_example_selects_root_cause_analysis():
    data = analyze()

    assert data["framework"] == {"id": "root-cause-analysis", "name": "Root Cause Analysis",
                                 "description": "Systematic approach to identify underlying causes"}
    assert data["selection"]["confidence"] >= 0.8
    assert data["selection"]["isHybrid"] is False
    assert "'intermittent'" in data["selection"]["reason"] and "'failures'" in data["selection"]["reason"]
    steps = data["result"]["steps"]
    assert [step.split(":")[0] for step in steps] == ["Define the problem", "Collect data", "Identify causes",
                                                      "Verify the root cause"]
    assert "Cannot take system offline" in steps[3]  # the constraint shapes the verification
    assert data["result"]["conclusion"].startswith("Most likely cause: resource exhaustion")
    assert 0 < data["result"]["confidence"] <= 1
    alternatives = [alternative["framework"]["id"] for alternative in data["alternatives"]]
    assert len(alternatives) == 2 and "root-cause-analysis" not in alternatives
    assert set(alternatives) <= set(SEED_IDS)
    assert data["method"] == "deterministic"


@pytest.mark.parametrize("problem, expected", [
    ("How can we improve the onboarding experience for new users?", "design-thinking"),
    ("Should we migrate to microservices in the next years given market uncertainty?", "scenario-planning"),
    ("Test the hypothesis that caching lowers latency by measuring p95 before and after", "scientific-method"),
    ("How do the interconnected services and their dependencies affect each other?", "systems-thinking"),
    ("Evaluate the argument that remote work lowers productivity", "critical-thinking"),
    ("Brainstorm novel ideas for the product launch", "creative-problem-solving"),
    ("Rethink our pricing from first principles", "first-principles"),
    ("Why does the payment service crash every night?", "root-cause-analysis"),
])
def test_selection_follows_the_problems_cues(problem, expected):
    selection = select_framework(problem, ProblemContext())
    assert selection.framework.id == expected
    assert selection.framework.id not in [framework.id for framework, _ in selection.alternatives]


def test_confidence_grows_with_the_margin_and_close_calls_are_hybrids():
    clear = select_framework("Why does the payment service crash with intermittent errors?", ProblemContext())
    close = select_framework("Test the hypothesis that new users find the onboarding confusing", ProblemContext())

    assert clear.confidence > close.confidence
    assert close.is_hybrid and not clear.is_hybrid
    assert "Design Thinking fits almost as well" in close.reason
    data = analyze(problem="Test the hypothesis that new users find the onboarding confusing",
                   context=ProblemContext())
    # A hybrid also works through the runner-up's steps.
    assert any(step.startswith("Empathize:") for step in data["result"]["steps"])


def test_without_cues_the_kind_of_problem_decides_and_confidence_is_low():
    framework, confidence, reason, is_hybrid, alternatives = select_framework("Build a web application",
                                                                              ProblemContext())
    assert framework.id == "systems-thinking"
    assert confidence == 0.4 and not is_hybrid
    assert "building problem" in reason
    assert len(alternatives) == 2


def test_the_preferred_framework_overrides_selection():
    data = analyze(preferred="design-thinking")

    assert data["framework"]["id"] == "design-thinking"
    assert data["selection"]["confidence"] == 1.0
    assert "Root Cause Analysis" in data["selection"]["reason"]
    assert data["alternatives"][0]["framework"]["id"] == "root-cause-analysis"
    assert [step.split(":")[0] for step in data["result"]["steps"]] == [
        "Empathize", "Define", "Ideate", "Prototype", "Test with users"]


@pytest.mark.parametrize("preferred", ["six-sigma", "", "Root Cause Analysis", 3, ["root-cause-analysis"]])
def test_an_unknown_preferred_framework_names_the_field_and_the_choices(preferred):
    with pytest.raises(InvalidInput) as caught:
        analyze(preferred=preferred)
    assert caught.value.field == "preferred_framework"
    assert all(framework_id in caught.value.message for framework_id in SEED_IDS)


def test_an_empty_problem_is_refused():
    with pytest.raises(InvalidInput) as caught:
        analyze(problem=" ")
    assert caught.value.field == "problem"


def test_a_known_sharp_edge_becomes_the_most_likely_cause():
    data = analyze(evidence=[POOL_EDGE])
    assert data["result"]["conclusion"].startswith(f"Most likely cause: Known sharp edge: {POOL_EDGE.content[:40]}")
    assert POOL_EDGE.id in data["result"]["conclusion"]
    assert data["result"]["confidence"] > analyze()["result"]["confidence"]


def test_different_problems_get_different_analyses():
    payments = analyze(problem="Why does the payment service crash every night?", context=ProblemContext())
    imports = analyze(problem="Why does the nightly CSV import fail on large files?", context=ProblemContext())
    assert payments["framework"]["id"] == imports["framework"]["id"] == "root-cause-analysis"
    assert payments["result"]["steps"] != imports["result"]["steps"]
    assert "payment service" in payments["result"]["steps"][0]
    assert "CSV import" in imports["result"]["steps"][0]


@pytest.mark.parametrize("framework_id", SEED_IDS)
def test_every_framework_works_through_its_steps_on_the_problem(framework_id):
    context = ProblemContext.parse({"constraints": ["Budget of 10k"], "goals": ["Cut checkout abandonment by 20%"]})
    data = analyze(problem="How should we redesign the checkout flow for mobile customers?", preferred=framework_id,
                   context=context)
    result = data["result"]
    assert [step.split(":")[0] for step in result["steps"]] == [name for name, _ in FRAMEWORKS[framework_id].steps]
    assert result["conclusion"] and result["insights"]
    assert "checkout" in " ".join(result["steps"]) + result["conclusion"]


def test_with_a_model_the_model_applies_the_framework_and_may_pick_another():
    answer = {"framework": "systems-thinking", "conclusion": "The retry storm between services exhausts the pool",
              "steps": ["Map the components: api, worker, pool"], "insights": ["Retries double the load"],
              "confidence": "high"}
    model = ScriptedModel({"analyze-systematically": json.dumps(answer)})

    data = analyze(evidence=[POOL_EDGE], backend=model)

    assert data["method"] == "sampling"
    assert data["framework"]["id"] == "systems-thinking"
    assert "Chosen by the model over Root Cause Analysis" in data["selection"]["reason"]
    assert data["alternatives"][0]["framework"]["id"] == "root-cause-analysis"
    assert data["result"]["conclusion"] == answer["conclusion"]
    assert data["result"]["confidence"] == 0.5  # not a number: the neutral default
    prompt = model.calls[0]["prompt"]
    assert FAILURES in prompt and POOL_EDGE.id in prompt
    assert "Root Cause Analysis" in model.calls[0]["system"]


@pytest.mark.parametrize("preferred, proposed, expected", [
    (None, "six-sigma", "root-cause-analysis"),  # unknown ids are ignored
    (None, ["systems-thinking"], "root-cause-analysis"),
    ("critical-thinking", "systems-thinking", "critical-thinking"),  # the caller's choice is final
])
def test_the_model_cannot_choose_an_unknown_framework_or_override_the_caller(preferred, proposed, expected):
    answer = json.dumps({"framework": proposed, "conclusion": "Something specific", "steps": [], "insights": []})
    data = analyze(preferred=preferred, backend=ScriptedModel({"analyze-systematically": answer}))
    assert data["framework"]["id"] == expected
    assert data["result"]["steps"]  # the framework's own step names when the model gave none


def test_an_unusable_model_answer_falls_back_with_the_reason():
    data = analyze(backend=ScriptedModel({"analyze-systematically": "Root cause: cosmic rays."}))
    assert data["method"] == "deterministic"
    assert "no JSON object" in data["modelError"]
    assert data["framework"]["id"] == "root-cause-analysis"
    assert data["result"]["conclusion"].startswith("Most likely cause")

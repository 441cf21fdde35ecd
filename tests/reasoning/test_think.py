"""think: the four single-stream modes and parallel, deterministic and with a model (pure functions, no database)."""
import json
import threading

import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import EvidenceItem, ProblemContext
from apps.reasoning.analysis.streams import STREAMS
from apps.reasoning.analysis.think import MODES, think

DB_PROBLEM = "How to optimize database query performance?"
DB_CONTEXT = ProblemContext.parse({
    "background": "PostgreSQL database with 1M records",
    "constraints": ["No schema changes", "Minimal downtime"],
    "goals": ["Reduce p95 latency to <100ms"],
})
SHARP_EDGE = EvidenceItem(id="11111111-aaaa-4bbb-8ccc-000000000001", kind="sharp_edge",
                          content="Adding an index on the orders table locks writes for minutes", score=0.7)
DECISION = EvidenceItem(id="11111111-aaaa-4bbb-8ccc-000000000002", kind="decision",
                        content="We decided to keep PostgreSQL and not add a Redis cache", score=0.5)


class ScriptedModel:
    """A stand-in for a model in unit tests of how the analyses parse answers (not a fake of Engram): answers by
    request key, from a string or a function of (system, prompt), and records every request."""

    method = "sampling"
    name = "scripted-model"

    def __init__(self, answers=None, *, default=None):
        self.answers = answers or {}
        self.default = default
        self.calls = []
        self._lock = threading.Lock()

    def complete(self, *, system, prompt, max_tokens, key):
        with self._lock:
            self.calls.append({"system": system, "prompt": prompt, "key": key, "max_tokens": max_tokens})
        answer = self.answers.get(key, self.default)
        if answer is None:
            raise AssertionError(f"unexpected model request {key!r}")
        return answer(system, prompt) if callable(answer) else answer

    def prompt_for(self, key):
        return next(call["prompt"] for call in self.calls if call["key"] == key)


def run(problem=DB_PROBLEM, mode="analytical", context=DB_CONTEXT, evidence=(), backend=None):
    return think(problem=problem, mode=mode, context=context, evidence=list(evidence), backend=backend)


@pytest.mark.parametrize("mode", STREAMS)
def test_each_single_mode_reasons_about_the_problem_given(mode):
    data = run(mode=mode)

    assert data["status"] == "completed"
    assert data["method"] == "deterministic"
    assert data["mode"] == mode
    assert "database query performance" in data["conclusion"]
    assert len(data["reasoning"]) == 4 and all(isinstance(step, str) and step for step in data["reasoning"])
    assert data["insights"] and any("database query performance" in insight for insight in data["insights"])
    assert 0 < data["confidence"] <= 1


def test_the_four_modes_reason_differently():
    conclusions = {mode: run(mode=mode)["conclusion"] for mode in STREAMS}
    assert len(set(conclusions.values())) == 4
    assert "first" in conclusions["analytical"]  # a sequence: what to do first
    assert conclusions["creative"].startswith("Try this")
    assert "only after addressing" in conclusions["critical"]
    assert ", then " in conclusions["synthetic"]  # an integrated plan


def test_analytical_mode_uses_the_constraints_and_goals():
    data = run(mode="analytical")
    text = " ".join(data["insights"])
    assert "Constraint 'No schema changes'" in text and "Constraint 'Minimal downtime'" in text
    assert "Goal 'Reduce p95 latency to <100ms' is measurable" in text
    assert "Reduce p95 latency to <100ms" in data["conclusion"]


def test_a_goal_without_a_number_is_called_unmeasurable():
    context = ProblemContext.parse({"goals": ["Make queries feel snappy"]})
    insights = run(mode="analytical", context=context)["insights"]
    assert any("'Make queries feel snappy' is not measurable" in insight for insight in insights)


def test_different_problems_give_different_problem_specific_answers():
    database = run(problem=DB_PROBLEM, context=ProblemContext())
    onboarding = run(problem="How can we improve the onboarding experience for new users?", context=ProblemContext())

    assert database["conclusion"] != onboarding["conclusion"]
    assert "onboarding experience" in onboarding["conclusion"]
    assert "onboarding" not in " ".join(database["insights"])
    assert "database" not in " ".join(onboarding["insights"])
    assert any("users" in insight or "user" in insight for insight in onboarding["insights"])


def test_sharp_edges_become_critical_insights_and_decisions_earlier_decisions():
    critical = run(mode="critical", evidence=[SHARP_EDGE, DECISION])
    assert critical["insights"][0] == f"Known sharp edge: {SHARP_EDGE.content} ({SHARP_EDGE.id})"
    assert SHARP_EDGE.id in critical["conclusion"]

    analytical = run(mode="analytical", evidence=[SHARP_EDGE, DECISION])
    assert f"Earlier decision: {DECISION.content} ({DECISION.id})" in analytical["insights"]
    assert DECISION.id in analytical["conclusion"]


def test_more_evidence_and_context_raise_confidence_and_gaps_are_stated():
    bare = run(context=ProblemContext())
    full = run(evidence=[SHARP_EDGE, DECISION])

    assert full["confidence"] > bare["confidence"]
    assert full["limitations"] == []
    limitations = " ".join(bare["limitations"])
    assert "No goals were given" in limitations
    assert "No constraints were given" in limitations
    assert "No memories bear on this problem" in limitations


def test_hedged_wording_lowers_confidence_and_is_flagged():
    plain = run(problem="Why does the nightly import fail?", mode="critical", context=ProblemContext())
    hedged = run(problem="Why might the nightly import possibly fail, maybe because of the disk?", mode="critical",
                 context=ProblemContext())
    assert hedged["confidence"] < plain["confidence"]
    assert any(insight.startswith("Uncertain wording (might, maybe") for insight in hedged["insights"])
    assert any("The stated cause (because)" in insight for insight in hedged["insights"])


def test_synthetic_mode_integrates_what_the_other_streams_find():
    data = run(mode="synthetic", evidence=[SHARP_EDGE])
    read_step = data["reasoning"][2]
    assert read_step.startswith("Read the other streams:") and not read_step.startswith("Read the other streams: 0")
    # The critical stream's sharp edge ends up guarding the integrated plan.
    assert f"guarding against: known sharp edge: {SHARP_EDGE.content}" in data["conclusion"]


def test_parallel_mode_returns_the_parallel_shape():
    data = run(mode="parallel")
    assert data["mode"] == "parallel"
    assert set(data["streams"]) == set(STREAMS)
    assert {"conclusion", "insights", "recommendations", "conflicts", "confidence", "quality"} <= set(data)


@pytest.mark.parametrize("mode", ["logical", "", None, "Analytical"])
def test_an_unknown_mode_names_the_field_and_the_allowed_modes(mode):
    with pytest.raises(InvalidInput) as caught:
        run(mode=mode)
    assert caught.value.field == "mode"
    for allowed in MODES:
        assert allowed in caught.value.message


@pytest.mark.parametrize("problem", ["", "   ", None, 42])
def test_an_empty_problem_is_refused(problem):
    with pytest.raises(InvalidInput) as caught:
        run(problem=problem)
    assert caught.value.field == "problem"


def test_with_a_model_the_model_reasons_in_the_mode_asked():
    answer = {"conclusion": "Add a covering index concurrently on orders(customer_id)",
              "reasoning": ["Looked at the slow queries", "", 7], "insights": ["Sequential scans on orders"],
              "confidence": 1.7}
    model = ScriptedModel({"think-critical": f"Here you go:\n```json\n{json.dumps(answer)}\n```"})

    data = run(mode="critical", evidence=[SHARP_EDGE], backend=model)

    assert data["method"] == "sampling" and data["mode"] == "critical" and data["status"] == "completed"
    assert data["conclusion"] == answer["conclusion"]
    assert data["reasoning"] == ["Looked at the slow queries"]  # blanks and non-text dropped
    assert data["insights"] == ["Sequential scans on orders"]
    assert data["confidence"] == 1.0  # clamped
    call = model.calls[0]
    assert "critical mode" in call["system"]
    assert DB_PROBLEM in call["prompt"] and "Constraint: No schema changes" in call["prompt"]
    assert SHARP_EDGE.id in call["prompt"]


@pytest.mark.parametrize("answer, reason", [
    ("I would rather not answer in JSON.", "no JSON object"),
    (json.dumps({"reasoning": ["a"], "confidence": 0.4}), "no conclusion"),
])
def test_an_unusable_model_answer_falls_back_to_the_deterministic_analysis(answer, reason):
    data = run(mode="analytical", backend=ScriptedModel({"think-analytical": answer}))
    assert data["method"] == "deterministic"
    assert reason in data["modelError"]
    assert data["conclusion"] == run(mode="analytical")["conclusion"]

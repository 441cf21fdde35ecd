"""think_parallel: four concurrent streams, sync points on a shared board, the deadline, synthesis with sources
and conflicts (pure functions, no database)."""
import json
import threading
import time

import pytest

from apps.core.exceptions import DomainError, InvalidInput
from apps.reasoning.analysis.common import EvidenceItem, ProblemContext
from apps.reasoning.analysis import parallel as parallel_module
from apps.reasoning.analysis.parallel import Board, think_parallel
from apps.reasoning.analysis.streams import STREAMS, Finding
from tests.reasoning.test_think import ScriptedModel

MICROSERVICES = "Should we migrate to microservices architecture?"
MICROSERVICES_CONTEXT = ProblemContext.parse({"background": "Monolithic application with scaling issues",
                                              "constraints": ["Limited team size", "6-month timeline"]})
BILLING_EDGE = EvidenceItem(id="33333333-aaaa-4bbb-8ccc-000000000001", kind="sharp_edge",
                            content="Splitting the billing service out of the monolith broke its transactions",
                            score=0.6)
CONFLICT_TYPES = {"risk", "priority", "approach"}
# Longer than any test's timeout: a stream blocked this long is certainly past the deadline.
BLOCKED_FOR_S = 30
SLOW_ANSWER_S = 0.3


def parallel(problem=MICROSERVICES, timeout_ms=20000, context=MICROSERVICES_CONTEXT, evidence=(), backend=None):
    return think_parallel(problem=problem, timeout_ms=timeout_ms, context=context, evidence=list(evidence),
                          backend=backend)


def test_four_streams_complete_and_are_synthesised_with_their_sources():
    data = parallel(evidence=[BILLING_EDGE])

    assert data["method"] == "deterministic"
    assert {name: stream["status"] for name, stream in data["streams"].items()} == dict.fromkeys(STREAMS, "completed")
    assert all(stream["insights"] > 0 for stream in data["streams"].values())
    for insight in data["insights"]:
        assert set(insight["sources"]) <= set(STREAMS) and insight["sources"]
        assert 0 <= insight["importance"] <= 1 and 0 <= insight["confidence"] <= 1
    assert {source for insight in data["insights"] for source in insight["sources"]} == set(STREAMS)
    importances = [insight["importance"] for insight in data["insights"]]
    assert importances == sorted(importances, reverse=True)
    assert [recommendation["priority"] for recommendation in data["recommendations"]] == \
        list(range(1, len(data["recommendations"]) + 1))
    assert all(recommendation["rationale"].startswith("Raised by the") for recommendation in data["recommendations"])
    assert 0 < data["confidence"] <= 1 and 0 < data["quality"] <= 1
    assert "microservices architecture" in data["conclusion"]


def test_the_same_finding_from_several_streams_is_merged_keeping_every_source():
    data = parallel(evidence=[BILLING_EDGE])
    edge = [insight for insight in data["insights"] if BILLING_EDGE.id in insight["content"]]
    assert len(edge) == 1
    assert {"analytical", "critical"} <= set(edge[0]["sources"])
    assert edge[0]["content"].startswith("Known sharp edge: Splitting the billing service")


def test_conflicts_between_streams_are_kept():
    data = parallel()
    conflicts = data["conflicts"]
    assert [conflict["id"] for conflict in conflicts] == [f"conflict-{n}" for n in range(1, len(conflicts) + 1)]
    assert all(conflict["type"] in CONFLICT_TYPES and 0 < conflict["severity"] <= 1 for conflict in conflicts)
    risk = next(conflict for conflict in conflicts if conflict["sourceStreams"] == ["critical", "creative"])
    assert risk["type"] == "risk"
    assert "strangler fig" in risk["description"]  # creative's option...
    assert "operational overhead" in risk["description"]  # ...and the critical stream's objection to it
    assert "Open disagreement" in data["conclusion"]


def test_the_synthetic_stream_reads_the_others_at_the_sync_points():
    data = parallel(evidence=[BILLING_EDGE])
    synthetic = data["streams"]["synthetic"]["conclusion"]
    # The risk it guards against comes from the critical stream's findings, read off the board.
    assert "guarding against: known sharp edge: Splitting the billing service" in synthetic
    assert any(insight["sources"] == ["synthetic"] and "point at" in insight["content"]
               for insight in data["insights"])


def test_different_problems_give_different_syntheses():
    first = parallel()
    second = parallel(problem="How should we approach the product roadmap for Q1?",
                      context=ProblemContext.parse({"background": "SaaS product with growing user base",
                                                    "goals": ["Increase retention", "Launch mobile app"]}))
    assert first["conclusion"] != second["conclusion"]
    assert "product roadmap" in second["conclusion"]
    assert {insight["content"] for insight in first["insights"]}.isdisjoint(
        {insight["content"] for insight in second["insights"]})


def test_a_stream_waits_at_a_sync_point_until_the_others_publish():
    board = Board(("analytical", "synthetic"), started=time.monotonic(), timeout_s=60)
    seen = {}
    synced = threading.Event()

    def synthetic():
        board.publish("synthetic", 1, [])
        board.sync("synthetic", 1)
        seen.update(board.view("synthetic", 1))
        synced.set()

    thread = threading.Thread(target=synthetic, daemon=True)
    thread.start()
    assert not synced.wait(0.3)  # still waiting: analytical has not reached the sync point
    finding = Finding("The pool saturates first", "insight", 0.8, 0.8, topic="scale")
    board.publish("analytical", 1, [finding])
    assert synced.wait(10)
    assert seen == {"analytical": [finding]}


def test_a_sync_point_does_not_wait_past_its_share_of_the_budget():
    board = Board(("analytical", "creative"), started=time.monotonic(), timeout_s=0.2)
    board.publish("analytical", 1, [])
    board.sync("analytical", 1)  # creative never arrives: returns once 25% of the budget is spent
    assert board.view("analytical", 1) == {}


def test_a_stream_past_the_deadline_is_timed_out_and_the_rest_is_still_synthesised(monkeypatch):
    # The others do not wait for the stuck stream at the sync points (that wait is tested above), so they finish
    # at once, however loaded the machine; the stuck one cannot answer before think_parallel has returned.
    monkeypatch.setattr(parallel_module, "SYNC_POINTS", (0.0, 0.0, 0.0))
    release = threading.Event()

    def stuck(system, prompt):
        release.wait(BLOCKED_FOR_S)
        return "{}"

    answers = {f"think-parallel-{name}": _stream_answer(name) for name in STREAMS}
    answers["think-parallel-creative"] = stuck
    try:
        data = parallel(timeout_ms=2000, backend=ScriptedModel(answers))
    finally:
        release.set()

    statuses = {name: stream["status"] for name, stream in data["streams"].items()}
    assert statuses == {"analytical": "completed", "creative": "timed_out", "critical": "completed",
                        "synthetic": "completed"}
    assert data["insights"]
    assert all("creative" not in insight["sources"] for insight in data["insights"])
    assert "Without the creative stream (timed out)" in data["conclusion"]
    assert data["method"] == "sampling"


def _stream_answer(name):
    findings = {
        "analytical": [{"content": "Scaling pain sits in the reporting module", "role": "recommendation",
                        "topic": "scaling", "importance": 0.9, "confidence": 0.8}],
        "creative": [{"content": "Carve billing out first with a strangler fig", "role": "recommendation",
                      "topic": "migration", "importance": 0.85, "confidence": 0.7}],
        "critical": [{"content": "A six-person team cannot run twenty services", "role": "risk", "topic": "migration",
                      "importance": 0.9, "confidence": 0.85}],
        "synthetic": [{"content": "Split reporting first, keep billing in the monolith", "role": "recommendation",
                       "topic": "plan", "importance": 0.9, "confidence": 0.8}],
    }[name]
    return json.dumps({"conclusion": f"{name} conclusion", "findings": findings})


def _slow(answer):
    """An answer that takes a moment, so that a stream which did not wait for it would ask without it."""
    def respond(system, prompt):
        time.sleep(SLOW_ANSWER_S)
        return answer

    return respond


def test_with_a_model_each_stream_asks_and_the_synthetic_stream_sees_the_others():
    answers = {f"think-parallel-{name}": _slow(_stream_answer(name)) for name in ("analytical", "creative", "critical")}
    model = ScriptedModel({**answers, "think-parallel-synthetic": _stream_answer("synthetic")})

    data = parallel(backend=model, evidence=[BILLING_EDGE])

    assert data["method"] == "sampling"
    assert {call["key"] for call in model.calls} == {f"think-parallel-{name}" for name in STREAMS}
    synthetic_prompt = model.prompt_for("think-parallel-synthetic")
    # The synthetic stream asked after the others' model findings were on the board.
    for other in ("Scaling pain sits in the reporting module", "Carve billing out first",
                  "A six-person team cannot run twenty services"):
        assert other in synthetic_prompt
    assert BILLING_EDGE.id in synthetic_prompt
    # The streams still weigh the caller's memories themselves: the sharp edge is the critical stream's risk.
    edge = next(insight for insight in data["insights"] if BILLING_EDGE.id in insight["content"])
    assert {"analytical", "critical"} <= set(edge["sources"])
    assert data["conclusion"].startswith("synthetic conclusion")
    conflicts = {(conflict["type"], tuple(conflict["sourceStreams"])) for conflict in data["conflicts"]}
    assert ("risk", ("critical", "creative")) in conflicts  # critical's risk on creative's migration option
    assert ("priority", ("analytical", "creative")) in conflicts  # scaling first vs migration first
    top = data["recommendations"][0]
    assert top["priority"] == 1 and top["sources"] and top["description"]


def test_an_unusable_stream_answer_falls_back_for_that_stream_only():
    answers = {f"think-parallel-{name}": _stream_answer(name) for name in STREAMS}
    answers["think-parallel-critical"] = "No JSON today."
    data = parallel(backend=ScriptedModel(answers))

    assert data["streams"]["critical"]["status"] == "completed"
    assert "no JSON object" in data["streams"]["critical"]["modelError"]
    assert "critical: " in data["modelError"]
    assert data["method"] == "sampling"
    # The critical stream's deterministic findings are in the synthesis.
    assert any("critical" in insight["sources"] and "operational overhead" in insight["content"]
               for insight in data["insights"])


def test_a_failing_model_fails_its_stream_and_a_model_failing_everywhere_is_an_error():
    def broken(system, prompt):
        raise DomainError("The language model endpoint is unreachable.", code="llm_unavailable")

    answers = {f"think-parallel-{name}": _stream_answer(name) for name in STREAMS}
    answers["think-parallel-analytical"] = broken
    data = parallel(backend=ScriptedModel(answers))
    assert data["streams"]["analytical"]["status"] == "failed"
    assert "unreachable" in data["streams"]["analytical"]["error"]
    assert data["streams"]["critical"]["status"] == "completed"

    with pytest.raises(DomainError) as caught:
        parallel(backend=ScriptedModel(default=broken))
    assert caught.value.code == "llm_unavailable"


@pytest.mark.parametrize("timeout_ms", [999, 60001, 0, -5, "30000", None, True])
def test_a_timeout_outside_the_seed_range_names_the_field(timeout_ms):
    with pytest.raises(InvalidInput) as caught:
        parallel(timeout_ms=timeout_ms)
    assert caught.value.field == "timeout_ms"
    assert "1000" in caught.value.message and "60000" in caught.value.message


def test_an_empty_problem_is_refused():
    with pytest.raises(InvalidInput) as caught:
        parallel(problem="")
    assert caught.value.field == "problem"

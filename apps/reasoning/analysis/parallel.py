"""ThoughtMCP's ``think_parallel``: the analytical, creative, critical and synthetic streams reasoning at once, under
one time budget, and a synthesis that keeps who said what and where they disagree.

Each stream runs in its own thread (a model call blocks) and reasons in four phases (streams.py). After phases 1-3 it
publishes its findings on a shared ``Board`` and waits at the sync point for the others, but only until 25%, 50%
or 75% of the budget has passed, so one slow stream cannot hold the rest. The synthetic stream reads the others'
published findings at each sync point, and with a model it asks only after the others' model findings are on the
board. At the deadline, a stream still running is reported ``timed_out`` and the synthesis goes ahead without it.
"""
from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from apps.core.exceptions import InvalidInput
from apps.core.limits import PARALLEL_TIMEOUT_MS
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend, ProblemContext
from apps.reasoning.analysis.llm import ModelAnswerInvalid, ask_json, model_score, texts
from apps.reasoning.analysis.problem import ProblemProfile, coverage_confidence, problem_prompt, profile_problem
from apps.reasoning.analysis.reasoning_text import shorten, similarity
from apps.reasoning.analysis.streams import (
    MODE_DESCRIPTIONS,
    STREAMS,
    Finding,
    PeerView,
    Phase,
    StreamResult,
    evidence_findings,
    ranked,
    stream_phases,
)

DEFAULT_TIMEOUT_MS = PARALLEL_TIMEOUT_MS.default
MIN_TIMEOUT_MS = PARALLEL_TIMEOUT_MS.low
MAX_TIMEOUT_MS = PARALLEL_TIMEOUT_MS.high
SYNC_POINTS = (0.25, 0.5, 0.75)
# Two findings are one when this much of their combined wording is shared.
SAME_FINDING = 0.5
STREAM_MAX_TOKENS = 700
ROLES = ("insight", "recommendation", "risk")


class Board:
    """The findings each stream has published so far, and the sync points where streams wait for each other."""

    def __init__(self, streams: tuple[str, ...], *, started: float, timeout_s: float):
        self._condition = threading.Condition()
        self._published: dict[str, dict[int, list[Finding]]] = {name: {} for name in streams}
        self._reached = dict.fromkeys(streams, 0)
        self._gone: set[str] = set()
        self._started = started
        self._timeout_s = timeout_s

    def publish(self, stream: str, checkpoint: int, findings: list[Finding]) -> None:
        with self._condition:
            self._published[stream][checkpoint] = list(findings)
            self._reached[stream] = checkpoint
            self._condition.notify_all()

    def leave(self, stream: str) -> None:
        """A finished or failed stream: nobody waits for it any more."""
        with self._condition:
            self._gone.add(stream)
            self._condition.notify_all()

    def sync(self, stream: str, checkpoint: int) -> None:
        """Wait until every other stream still running has reached ``checkpoint``, or its time share is spent."""
        deadline = self._started + self._timeout_s * SYNC_POINTS[checkpoint - 1]
        with self._condition:
            while not self._all_reached(stream, checkpoint):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._condition.wait(remaining)

    def _all_reached(self, stream: str, checkpoint: int) -> bool:
        return all(reached >= checkpoint or name in self._gone or name == stream
                   for name, reached in self._reached.items())

    def view(self, stream: str, checkpoint: int) -> dict[str, list[Finding]]:
        """What the other streams had published by ``checkpoint``."""
        with self._condition:
            seen = {}
            for name, published in self._published.items():
                reached = [number for number in published if number <= checkpoint]
                if name != stream and reached:
                    seen[name] = list(published[max(reached)])
            return seen


@dataclass
class StreamOutcome:
    status: str  # completed | timed_out | failed
    result: StreamResult
    duration_ms: int = 0
    used_model: bool = False
    model_error: str = ""
    failure: Exception | None = None

    @property
    def error(self) -> str:
        if self.failure is None:
            return ""
        return getattr(self.failure, "message", None) or str(self.failure) or type(self.failure).__name__


def think_parallel(*, problem: str, timeout_ms: int, context: ProblemContext, evidence: list[EvidenceItem],
                   backend: ModelBackend | None) -> dict[str, Any]:
    """The seed's think_parallel data, plus per-stream status and the method that ran."""
    timeout_ms = require_timeout(timeout_ms)
    profile = profile_problem(problem, context, evidence)
    outcomes = _run_streams(profile, backend, timeout_s=timeout_ms / 1000)
    completed = {name: outcome for name, outcome in outcomes.items() if outcome.status == "completed"}
    if not completed:
        failures = [outcome.failure for outcome in outcomes.values() if outcome.failure is not None]
        if failures:
            # Every stream failed the same way (say, an unreachable endpoint): that is the caller's error to see.
            raise failures[0]
    data = synthesise(profile, completed, timed_out=[name for name, outcome in outcomes.items()
                                                     if outcome.status == "timed_out"])
    data["streams"] = {name: _stream_summary(outcome) for name, outcome in outcomes.items()}
    used_model = any(outcome.used_model for outcome in completed.values())
    data["method"] = backend.method if backend is not None and used_model else DETERMINISTIC
    model_errors = {name: outcome.model_error for name, outcome in outcomes.items() if outcome.model_error}
    if model_errors:
        data["modelError"] = "; ".join(f"{name}: {error}" for name, error in model_errors.items())
    return data


def require_timeout(timeout_ms: Any) -> int:
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)) \
            or not MIN_TIMEOUT_MS <= timeout_ms <= MAX_TIMEOUT_MS:
        raise InvalidInput(f"timeout_ms must be a number of milliseconds from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS} "
                           f"(default {DEFAULT_TIMEOUT_MS}); got {timeout_ms!r}.", field="timeout_ms")
    return int(timeout_ms)


def _run_streams(profile: ProblemProfile, backend: ModelBackend | None, *, timeout_s: float
                 ) -> dict[str, StreamOutcome]:
    started = time.monotonic()
    board = Board(STREAMS, started=started, timeout_s=timeout_s)
    outcomes: dict[str, StreamOutcome] = {}
    lock = threading.Lock()

    def run(name: str) -> None:
        outcome = StreamOutcome(status="completed", result=StreamResult(mode=name))
        peers: PeerView = functools.partial(board.view, name)
        try:
            phases = (_model_phases(name, profile, backend, peers, outcome) if backend is not None
                      else stream_phases(name, profile, peers))
            for number, phase in enumerate(phases, start=1):
                outcome.result.add(phase)
                if number <= len(SYNC_POINTS):
                    board.publish(name, number, outcome.result.findings)
                    board.sync(name, number)
        except Exception as error:  # noqa: BLE001 -- a failing model fails its own stream; the others go on
            outcome.status, outcome.failure = "failed", error
        finally:
            board.leave(name)
            outcome.duration_ms = round((time.monotonic() - started) * 1000)
            with lock:
                outcomes.setdefault(name, outcome)

    threads = [threading.Thread(target=run, args=(name,), name=f"think-parallel-{name}", daemon=True)
               for name in STREAMS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, started + timeout_s - time.monotonic()))
    with lock:
        # A stream that finishes after this point is ignored: its outcome is already recorded as timed out.
        for name in STREAMS:
            outcomes.setdefault(name, StreamOutcome(status="timed_out", result=StreamResult(mode=name),
                                                    duration_ms=round(timeout_s * 1000)))
        return {name: outcomes[name] for name in STREAMS}  # in stream order, not the order they finished


def _model_phases(name: str, profile: ProblemProfile, backend: ModelBackend, peers: PeerView,
                  outcome: StreamOutcome) -> Iterator[Phase]:
    """A stream that asks the model: its own framing first (published at 25%), then the model's findings; the
    synthetic stream asks only after the others' model findings are on the board (50%). An unusable answer
    switches the stream to its deterministic phases."""
    deterministic = stream_phases(name, profile, peers)
    yield next(deterministic)
    asks_at = 2 if name == "synthetic" else 1
    if name == "synthetic":
        yield next(deterministic)
    seen = peers(asks_at)
    try:
        answer = ask_json(backend, system=_stream_system_prompt(name), prompt=_stream_prompt(profile, seen),
                          max_tokens=STREAM_MAX_TOKENS, key=f"think-parallel-{name}")
        findings = _model_findings(answer)
    except ModelAnswerInvalid as error:
        outcome.model_error = error.message
        yield from deterministic
        return
    outcome.used_model = True
    conclusion = answer.get("conclusion") if isinstance(answer.get("conclusion"), str) else ""
    best = ranked(findings)[0].content
    yield Phase(f"Asked the model ({backend.name}) for its {name} findings", tuple(findings))
    if name != "synthetic":
        evidence = evidence_findings(name, profile)
        yield Phase(f"Weighed {len(evidence)} item(s) of the caller's memory", tuple(evidence))
    yield Phase("Concluded", (), conclusion.strip() or best)


def _stream_system_prompt(name: str) -> str:
    return (f"You are the {name} stream of a four-stream reasoning team ({MODE_DESCRIPTIONS[name]}). Reason about "
            "the problem in your own way, cite the user's memories by id where they matter, and answer with one JSON "
            "object and nothing else: {\"conclusion\": string, \"findings\": [{\"content\": string, \"role\": "
            "\"insight\" | \"recommendation\" | \"risk\", \"topic\": a one-word topic, \"importance\": 0..1, "
            "\"confidence\": 0..1}]}.")


def _stream_prompt(profile: ProblemProfile, seen: dict[str, list[Finding]]) -> str:
    prompt = problem_prompt(profile)
    if seen:
        lines = [f"- {name}: {finding.content}" for name, found in seen.items() for finding in ranked(found)[:4]]
        prompt += "\n\nWhat the other streams have found so far:\n" + "\n".join(lines)
    return prompt


def _model_findings(answer: dict[str, Any]) -> list[Finding]:
    findings = []
    for item in answer.get("findings") if isinstance(answer.get("findings"), list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not item["content"].strip():
            continue
        role = item.get("role") if item.get("role") in ROLES else "insight"
        topic = item.get("topic") if isinstance(item.get("topic"), str) and item["topic"].strip() else "general"
        findings.append(Finding(shorten(item["content"].strip(), 500), role, model_score(item.get("importance")),
                                model_score(item.get("confidence")), topic=topic.strip().lower()))
    findings += [Finding(text, "insight", 0.5, 0.5) for text in texts(answer.get("insights"))]
    if not findings:
        raise ModelAnswerInvalid("The model's answer has no findings.")
    return findings


@dataclass
class Merged:
    """A finding as several streams may have made it: the wording of the first, everyone's sources."""

    finding: Finding
    sources: list[str]
    importance: float
    confidence: float

    def absorb(self, finding: Finding, source: str) -> None:
        if source not in self.sources:
            self.sources.append(source)
        self.importance = max(self.importance, finding.importance)
        self.confidence = max(self.confidence, finding.confidence)

    @property
    def weight(self) -> float:
        # Independent agreement between streams is itself evidence.
        return min(1.0, self.importance + 0.05 * (len(self.sources) - 1))


def merge(findings: list[tuple[str, Finding]]) -> list[Merged]:
    """Findings that say the same thing (same evidence, or mostly the same words) become one, keeping all sources."""
    merged: list[Merged] = []
    for source, finding in findings:
        same = next((entry for entry in merged if _same(entry.finding, finding)), None)
        if same:
            same.absorb(finding, source)
        else:
            merged.append(Merged(finding, [source], finding.importance, finding.confidence))
    return sorted(merged, key=lambda entry: (-entry.weight, -entry.confidence))


def _same(first: Finding, second: Finding) -> bool:
    if first.evidence_id or second.evidence_id:
        return first.evidence_id == second.evidence_id
    return similarity(first.content, second.content) >= SAME_FINDING


def synthesise(profile: ProblemProfile, completed: dict[str, StreamOutcome], *, timed_out: list[str]) -> dict[str, Any]:
    found = [(name, finding) for name, outcome in completed.items() for finding in outcome.result.findings]
    insights = merge([(name, finding) for name, finding in found if finding.role != "recommendation"])
    recommendations = merge([(name, finding) for name, finding in found if finding.role == "recommendation"])
    recommendations.sort(key=lambda entry: -entry.weight * entry.confidence)
    conflicts = find_conflicts(completed)
    confidence, quality = _scores(profile, insights, conflicts, completed=len(completed))
    return {
        "conclusion": _conclusion(profile, completed, recommendations, conflicts, timed_out),
        "insights": [{"content": entry.finding.content, "sources": entry.sources, "importance": round(entry.weight, 2),
                      "confidence": round(entry.confidence, 2)} for entry in insights],
        "recommendations": [{"description": entry.finding.content, "sources": entry.sources, "priority": priority,
                             "confidence": round(entry.confidence, 2), "rationale": _rationale(entry, insights)}
                            for priority, entry in enumerate(recommendations, start=1)],
        "conflicts": conflicts,
        "confidence": confidence,
        "quality": quality,
    }


def find_conflicts(completed: dict[str, StreamOutcome]) -> list[dict[str, Any]]:
    """Where the streams disagree, kept rather than averaged away: a risk the critical stream sees in another
    stream's recommendation, and the analytical and creative streams putting different things first."""
    conflicts: list[dict[str, Any]] = []

    def add(kind: str, description: str, severity: float, streams: list[str]) -> None:
        conflicts.append({"id": f"conflict-{len(conflicts) + 1}", "type": kind, "description": description,
                          "severity": round(severity, 2), "sourceStreams": streams})

    def of_role(name: str, role: str) -> list[Finding]:
        found = completed[name].result.findings if name in completed else []
        return ranked([finding for finding in found if finding.role == role])

    risks = of_role("critical", "risk")
    for name in ("creative", "analytical", "synthetic"):
        options = of_role(name, "recommendation")
        # The most serious objection to each stream's options, not one per option: the rest follow from it.
        clashes = [(option, risk) for option in options for risk in risks if risk.topic == option.topic]
        if clashes:
            option, risk = max(clashes, key=lambda clash: clash[1].importance)
            add("risk", f"Critical flags a risk in what {name.capitalize()} recommends: '{option.content}' vs "
                        f"'{risk.content}'", risk.importance * 0.8, ["critical", name])
    firsts = {name: of_role(name, "recommendation")[:1] for name in ("analytical", "creative") if name in completed}
    if len(firsts) == 2 and all(firsts.values()):
        analytical, creative = firsts["analytical"][0], firsts["creative"][0]
        if analytical.topic != creative.topic:
            add("priority", f"Analytical puts {analytical.topic} first ('{analytical.content}'), Creative puts "
                            f"{creative.topic} first ('{creative.content}')", 0.5, ["analytical", "creative"])
        elif similarity(analytical.content, creative.content) < SAME_FINDING:
            add("approach", f"Analytical and Creative agree that {analytical.topic} comes first but not on how: "
                            f"'{analytical.content}' vs '{creative.content}'", 0.4, ["analytical", "creative"])
    return conflicts


def _scores(profile: ProblemProfile, insights: list[Merged], conflicts: list[dict], *, completed: int
            ) -> tuple[float, float]:
    """Confidence: how sure the strongest insights are, scaled by how many streams finished, less a little per
    open conflict. Quality: streams finished, cross-stream agreement, and how well the problem is covered."""
    if not insights:
        return 0.0, 0.0
    top = insights[:5]
    completion = completed / len(STREAMS)
    certainty = sum(entry.confidence for entry in top) / len(top)
    confidence = certainty * (0.6 + 0.4 * completion) - 0.03 * len(conflicts)
    agreed = sum(1 for entry in insights if len(entry.sources) > 1)
    coverage, _ = coverage_confidence(profile, found=len(insights))
    quality = 0.4 * completion + 0.3 * min(1.0, agreed / 3) + 0.3 * coverage
    return round(min(0.95, max(0.05, confidence)), 2), round(min(0.95, max(0.05, quality)), 2)


def _rationale(entry: Merged, insights: list[Merged]) -> str:
    support = next((insight for insight in insights if insight.finding.topic == entry.finding.topic
                    and insight.finding.role == "insight"), None)
    warning = next((insight for insight in insights if insight.finding.topic == entry.finding.topic
                    and insight.finding.role == "risk"), None)
    rationale = f"Raised by the {' and '.join(entry.sources)} stream{'s' if len(entry.sources) > 1 else ''}"
    if support:
        rationale += f"; supported by: {support.finding.content}"
    if warning:
        rationale += f"; mind: {warning.finding.content}"
    return rationale


def _conclusion(profile: ProblemProfile, completed: dict[str, StreamOutcome], recommendations: list[Merged],
                conflicts: list[dict], timed_out: list[str]) -> str:
    if "synthetic" in completed and completed["synthetic"].result.conclusion:
        conclusion = completed["synthetic"].result.conclusion
    elif recommendations:
        conclusion = recommendations[0].finding.content
    else:
        conclusion = f"No stream reached a recommendation on {profile.subject}"
    if conflicts:
        conclusion += f". Open disagreement: {conflicts[0]['description']}"
    if timed_out:
        conclusion += f". Without the {' and '.join(timed_out)} stream{'s' if len(timed_out) > 1 else ''} " \
                      "(timed out)"
    return conclusion


def _stream_summary(outcome: StreamOutcome) -> dict[str, Any]:
    summary: dict[str, Any] = {"status": outcome.status, "insights": len(outcome.result.findings),
                               "durationMs": outcome.duration_ms}
    if outcome.result.conclusion:
        summary["conclusion"] = outcome.result.conclusion
    if outcome.model_error:
        summary["modelError"] = outcome.model_error
    if outcome.error:
        summary["error"] = outcome.error
    return summary

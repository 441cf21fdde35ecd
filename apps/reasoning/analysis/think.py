"""ThoughtMCP's ``think``: reasoning about a problem in one of four modes (analytical, creative, critical, synthetic),
or in all four at once (parallel: think_parallel's shape, see parallel.py).

Without a model, the mode's stream (streams.py) reasons over the problem's profile (problem.py); the synthetic
stream runs the others on demand to read what they found. With a model, the model reasons in the mode asked, given
the same problem, context and evidence; an unusable answer falls back to the deterministic stream and says why.
"""
from __future__ import annotations

from typing import Any

from apps.core.exceptions import InvalidInput
from apps.reasoning.analysis.common import DETERMINISTIC, EvidenceItem, ModelBackend, ProblemContext
from apps.reasoning.analysis.llm import ask_json, model_or_fallback, model_score, required_conclusion, texts
from apps.reasoning.analysis.parallel import DEFAULT_TIMEOUT_MS, think_parallel
from apps.reasoning.analysis.problem import ProblemProfile, coverage_confidence, problem_prompt, profile_problem
from apps.reasoning.analysis.streams import (
    MODE_DESCRIPTIONS,
    STREAMS,
    local_peers,
    ranked,
    run_stream,
    stream_confidence,
)

MODES = (*STREAMS, "parallel")
THINK_MAX_TOKENS = 900


def think(*, problem: str, mode: str, context: ProblemContext, evidence: list[EvidenceItem],
          backend: ModelBackend | None) -> dict[str, Any]:
    """The seed's think data: {conclusion, reasoning, insights, confidence, status, method, mode}; parallel mode
    returns think_parallel's shape."""
    mode = require_mode(mode)
    if mode == "parallel":
        return {**think_parallel(problem=problem, timeout_ms=DEFAULT_TIMEOUT_MS, context=context, evidence=evidence,
                                 backend=backend), "mode": mode}
    profile = profile_problem(problem, context, evidence)
    data = model_or_fallback(backend, ask=lambda model: _think_with_model(profile, mode, model),
                             fallback=lambda: {**_think_deterministic(profile, mode), "method": DETERMINISTIC})
    return {**data, "mode": mode}


def require_mode(mode: Any) -> str:
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}; got {mode!r}.", field="mode",
                           extra={"allowed": list(MODES)})
    return mode


def _think_deterministic(profile: ProblemProfile, mode: str) -> dict[str, Any]:
    result = run_stream(mode, profile, local_peers(profile, exclude=mode))
    confidence, gaps = stream_confidence(profile, result.findings)
    return {"conclusion": result.conclusion, "reasoning": result.steps,
            "insights": [finding.content for finding in ranked(result.findings)], "confidence": confidence,
            "limitations": gaps, "status": "completed"}


def _think_with_model(profile: ProblemProfile, mode: str, backend: ModelBackend) -> dict[str, Any]:
    answer = ask_json(backend, system=mode_system_prompt(mode), prompt=problem_prompt(profile),
                      max_tokens=THINK_MAX_TOKENS, key=f"think-{mode}")
    conclusion = required_conclusion(answer)
    _, gaps = coverage_confidence(profile, found=0)
    return {"conclusion": conclusion, "reasoning": texts(answer.get("reasoning")),
            "insights": texts(answer.get("insights")), "confidence": model_score(answer.get("confidence")),
            "limitations": gaps, "status": "completed"}


def mode_system_prompt(mode: str) -> str:
    return (f"You are a careful reasoner working in {mode} mode ({MODE_DESCRIPTIONS[mode]}). Reason about the "
            "user's problem using its context and the user's own memories given as evidence; where a memory "
            "matters, cite its id. Answer with one JSON object and nothing else: {\"conclusion\": string, "
            "\"reasoning\": [the steps you took, as short strings], \"insights\": [specific findings, as strings], "
            "\"confidence\": number between 0 and 1}.")

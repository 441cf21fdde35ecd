"""ThoughtMCP's reasoning and metacognitive tools as services: think, analyze_systematically, think_parallel,
decompose, assess_confidence, detect_bias, detect_emotion, analyze_reasoning.

Each one validates its input first (InvalidInput naming its own argument; the analyses' own checks
for mode, preferred_framework, timeout_ms and max_depth), gathers the caller's relevant
memories once (apps/reasoning/analysis/evidence.py: memories, Mind decisions, issues, sharp edges, episodes,
thoughts the caller may read), resolves the model (the configured endpoint, else the MCP client's model passed as
``model``, else none: apps/reasoning/analysis/llm.py), runs the analysis, and returns the seed's ``data`` object
plus ``method`` ("llm" | "sampling" | "deterministic") and ``memories``: the evidence used, [{id, kind, content,
score}]. Nothing is written: an analysis reads the memory graph without touching it.

A failing configured endpoint raises LLMUnavailable ("llm_unavailable"), as chat does; an unusable model answer
gives the deterministic result with "modelError".
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from apps.accounts.models import User
from apps.core.exceptions import InvalidInput
from apps.core.validation import clean_bool
from apps.reasoning.analysis.common import EvidenceItem, ModelBackend, ProblemContext
from apps.reasoning.analysis.confidence import assess_confidence
from apps.reasoning.analysis.decompose import decompose, require_max_depth
from apps.reasoning.analysis.evidence import gather_evidence
from apps.reasoning.analysis.frameworks import analyze_systematically, require_framework
from apps.reasoning.analysis.llm import resolve_backend
from apps.reasoning.analysis.parallel import require_timeout, think_parallel
from apps.reasoning.analysis.problem import require_problem
from apps.reasoning.analysis.quality import analyze_reasoning
from apps.reasoning.analysis.readings import read_biases, read_emotion
from apps.reasoning.analysis.think import require_mode, think

MONITORING_NOTE = ("Engram has no background bias monitor: each detect_bias call analyses the reasoning it is "
                   "given. Call it again on new reasoning to keep checking.")


def reasoning_think(*, actor: User, problem, mode, context=None, model: ModelBackend | None = None) -> dict:
    return _problem_analysis(think, actor=actor, problem=problem, context=context, model=model,
                             mode=require_mode(mode))


def reasoning_analyze_systematically(*, actor: User, problem, preferred_framework=None, context=None,
                                     model: ModelBackend | None = None) -> dict:
    if preferred_framework is not None:
        require_framework(preferred_framework)
    return _problem_analysis(analyze_systematically, actor=actor, problem=problem, context=context, model=model,
                             preferred_framework=preferred_framework)


def reasoning_think_parallel(*, actor: User, problem, timeout_ms=30000, context=None,
                             model: ModelBackend | None = None) -> dict:
    return _problem_analysis(think_parallel, actor=actor, problem=problem, context=context, model=model,
                             timeout_ms=require_timeout(timeout_ms))


def reasoning_decompose(*, actor: User, problem, max_depth=3, context=None, model: ModelBackend | None = None) -> dict:
    return _problem_analysis(decompose, actor=actor, problem=problem, context=context, model=model,
                             max_depth=require_max_depth(max_depth))


def _problem_analysis(analysis: Callable[..., dict], *, actor: User, problem, context, model: ModelBackend | None,
                      **options) -> dict:
    """One of the problem analyses (think, frameworks, parallel, decompose), its own options already checked, on
    the problem and its context object, with the caller's evidence for both."""
    problem, parsed = _bounded(require_problem(problem), field="problem"), ProblemContext.parse(context)
    evidence = _evidence(actor, problem, parsed.as_text())
    data = analysis(problem=problem, context=parsed, evidence=evidence, backend=resolve_backend(model), **options)
    return _with_memories(data, evidence)


def reasoning_assess_confidence(*, actor: User, reasoning, evidence=None, context=None,
                                model: ModelBackend | None = None) -> dict:
    reasoning, context = _text(reasoning, field="reasoning"), _optional_text(context, field="context")
    given = _evidence_texts(evidence)
    memories = _evidence(actor, reasoning, *given, context)
    data = assess_confidence(reasoning=reasoning, evidence_texts=given, context=context, memories=memories,
                             backend=resolve_backend(model))
    return _with_memories(data, memories)


def reasoning_detect_bias(*, actor: User, reasoning, context=None, monitor_continuously=False,
                          model: ModelBackend | None = None) -> dict:
    reasoning, context = _text(reasoning, field="reasoning"), _optional_text(context, field="context")
    monitor = clean_bool(monitor_continuously, field="monitor_continuously")
    data, memories = _detection(read_biases, actor=actor, text=reasoning, context=context, model=model)
    data["monitoringActive"] = False
    if monitor:
        data["monitoringNote"] = MONITORING_NOTE
    return _with_memories(data, memories)


def reasoning_detect_emotion(*, actor: User, text, include_discrete=True, context=None,
                             model: ModelBackend | None = None) -> dict:
    text, context = _text(text, field="text"), _optional_text(context, field="context")
    include_discrete = clean_bool(include_discrete, field="include_discrete")
    data, memories = _detection(read_emotion, actor=actor, text=text, context=context, model=model,
                                include_discrete=include_discrete)
    return _with_memories(data, memories)


def reasoning_analyze(*, actor: User, reasoning, context=None, include_confidence=True, include_bias=True,
                      include_emotion=False, model: ModelBackend | None = None) -> dict:
    reasoning, context = _text(reasoning, field="reasoning"), _optional_text(context, field="context")
    include_confidence = clean_bool(include_confidence, field="include_confidence")
    include_bias = clean_bool(include_bias, field="include_bias")
    include_emotion = clean_bool(include_emotion, field="include_emotion")
    memories = _evidence(actor, reasoning, context)
    data = analyze_reasoning(reasoning=reasoning, context=context, include_confidence=include_confidence,
                             include_bias=include_bias, include_emotion=include_emotion,
                             memories=memories, backend=resolve_backend(model))
    return _with_memories(data, memories)


def _evidence(actor: User, *texts: str) -> list[EvidenceItem]:
    return gather_evidence(actor=actor, text="\n".join(text for text in texts if text))


def _with_memories(data: dict[str, Any], evidence: list[EvidenceItem]) -> dict[str, Any]:
    return {**data, "memories": [item.as_dict() for item in evidence]}


def _text(value: Any, *, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty text.", field=field)
    return _bounded(value.strip(), field=field)


def _optional_text(value: Any, *, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text.", field=field)
    return _bounded(value.strip(), field=field)


def _bounded(value: str, *, field: str) -> str:
    limit = settings.ENGRAM_MAX_CONTENT_CHARS
    if len(value) > limit or "\x00" in value:
        raise InvalidInput(f"{field} must be at most {limit} characters of text, without NUL bytes.", field=field)
    return value


def _evidence_texts(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput("evidence must be a list of texts.", field="evidence")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise InvalidInput(f"evidence[{index}] must be a non-empty text.", field="evidence")
    return [_bounded(item.strip(), field="evidence") for item in value]


def _detection(read: Callable[..., dict], *, actor: User, text: str, context: str, model: ModelBackend | None,
               **options) -> tuple[dict, list[EvidenceItem]]:
    """The reading of ``text`` with the seed's detectionTime (how long the detection itself took, in ms), and the
    caller's memories it drew on."""
    memories = _evidence(actor, text, context)
    backend = resolve_backend(model)
    started = time.perf_counter()
    data = read(text=text, context=context, memories=memories, backend=backend, **options)
    return {**data, "detectionTime": round((time.perf_counter() - started) * 1000, 1)}, memories

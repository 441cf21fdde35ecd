"""ThoughtMCP's reasoning and metacognitive tool adapters. Each calls one analysis service of apps/reasoning and
returns its answer, camelCase, in the seed's shape.

The tools consult a language model when one is at hand: the configured endpoint, else the calling client's own
model through sampling (``run_with_client_model``), else they analyse deterministically; the answer's ``method``
says which ran.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apps.accounts.models import User
from apps.mcp.profiles.thoughtmcp.inputs import (
    AnalyzeReasoningInput, AnalyzeSystematicallyInput, AssessConfidenceInput, DecomposeProblemInput, DetectBiasInput,
    DetectEmotionInput, ThinkInput, ThinkParallelInput,
)
from apps.mcp.sampling import run_with_client_model
from apps.mcp.schema import SeedModel, given
from apps.mcp.server import tool_context
from apps.reasoning.services import analysis


def _problem_context(context: SeedModel | None) -> dict[str, Any] | None:
    return context.model_dump(exclude_none=True) if context is not None else None


async def _with_model(call: Callable[[Any], dict[str, Any]]):
    return await run_with_client_model(tool_context(), call)


async def think(actor: User, params: ThinkInput):
    return await _with_model(lambda model: analysis.reasoning_think(
        actor=actor, problem=params.problem, mode=params.mode, context=_problem_context(params.context), model=model))


async def analyze_systematically(actor: User, params: AnalyzeSystematicallyInput):
    return await _with_model(lambda model: analysis.reasoning_analyze_systematically(
        actor=actor, problem=params.problem, preferred_framework=params.preferred_framework,
        context=_problem_context(params.context), model=model))


async def think_parallel(actor: User, params: ThinkParallelInput):
    return await _with_model(lambda model: analysis.reasoning_think_parallel(
        actor=actor, problem=params.problem, context=_problem_context(params.context), model=model,
        **given(timeout_ms=params.timeout)))


async def decompose_problem(actor: User, params: DecomposeProblemInput):
    return await _with_model(lambda model: analysis.reasoning_decompose(
        actor=actor, problem=params.problem, context=_problem_context(params.context), model=model,
        **given(max_depth=params.max_depth)))


async def assess_confidence(actor: User, params: AssessConfidenceInput):
    return await _with_model(lambda model: analysis.reasoning_assess_confidence(
        actor=actor, reasoning=params.reasoning, evidence=params.evidence, context=params.context, model=model))


async def detect_bias(actor: User, params: DetectBiasInput):
    return await _with_model(lambda model: analysis.reasoning_detect_bias(
        actor=actor, reasoning=params.reasoning, context=params.context, model=model,
        **given(monitor_continuously=params.monitor_continuously)))


async def detect_emotion(actor: User, params: DetectEmotionInput):
    return await _with_model(lambda model: analysis.reasoning_detect_emotion(
        actor=actor, text=params.text, context=params.context, model=model,
        **given(include_discrete=params.include_discrete)))


async def analyze_reasoning(actor: User, params: AnalyzeReasoningInput):
    return await _with_model(lambda model: analysis.reasoning_analyze(
        actor=actor, reasoning=params.reasoning, context=params.context, model=model,
        **given(include_confidence=params.include_confidence, include_bias=params.include_bias,
                 include_emotion=params.include_emotion)))

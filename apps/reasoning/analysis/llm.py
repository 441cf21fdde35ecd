"""The language models a reasoning analysis may consult, and how their answers become data.

Which model answers (``resolve_backend``) follows chat (apps/chat/llm.py): a configured OpenAI-compatible endpoint
(ENGRAM_LLM_BASE_URL) first, because an operator who configured one expects it to answer, and a failing one is a
clear "llm_unavailable" error rather than a silent switch; else the MCP client's own model through sampling
(apps/mcp/sampling.py); else none, and the analyses run deterministically.

Every analysis asks for JSON. Models wrap it in prose or ``` fences, so ``ask_json`` takes the first JSON object
in the answer; an answer without one is ``ModelAnswerInvalid``, which the analyses turn into a deterministic
result that says what was wrong ("modelError").
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.chat.llm import Message, endpoint_completion, endpoint_configured
from apps.core.exceptions import DomainError
from apps.reasoning.analysis.common import EvidenceItem, ModelBackend

FENCED = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
# How much of an unusable answer an error quotes: enough to recognise it, not a wall of text.
QUOTED_CHARS = 120


class ModelAnswerInvalid(DomainError):
    """The model answered, but not with what was asked (no JSON object, or one without the required keys)."""

    code = "model_answer_invalid"


@dataclass(frozen=True)
class EndpointBackend:
    """The configured OpenAI-compatible endpoint: POST {ENGRAM_LLM_BASE_URL}/chat/completions, as chat does."""

    name: str
    method: str = "llm"

    def complete(self, *, system: str, prompt: str, max_tokens: int, key: str) -> str:
        return endpoint_completion(prompt_messages(system, prompt), max_tokens).text


def prompt_messages(system: str, prompt: str) -> list[Message]:
    """An analysis's request as chat messages, for the endpoint and the client's model alike."""
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def resolve_backend(client_model: ModelBackend | None) -> ModelBackend | None:
    """The model an analysis consults: the configured endpoint, else the client's model, else None."""
    if endpoint_configured():
        return EndpointBackend(name=settings.ENGRAM_LLM_MODEL)
    return client_model


def ask_json(backend: ModelBackend, *, system: str, prompt: str, max_tokens: int, key: str) -> dict[str, Any]:
    """The JSON object the model answers with. LLMUnavailable (a failing endpoint) propagates."""
    answer = backend.complete(system=system, prompt=prompt, max_tokens=max_tokens, key=key)
    if not answer or not answer.strip():
        raise ModelAnswerInvalid("The model's answer was empty.")
    found = first_json_object(answer)
    if found is None:
        raise ModelAnswerInvalid(f"The model's answer has no JSON object: {_quoted(answer)}")
    return found


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in fenced blocks, else anywhere in the text."""
    for candidate in [*FENCED.findall(text), text]:
        decoder = json.JSONDecoder()
        for start in (match.start() for match in re.finditer(r"\{", candidate)):
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _quoted(text: str) -> str:
    flat = " ".join(text.split())
    return f"'{flat[:QUOTED_CHARS]}…'" if len(flat) > QUOTED_CHARS else f"'{flat}'"


def unit(value: Any, *, low: float = 0.0, high: float = 1.0) -> float | None:
    """A model's number clamped to [low, high], rounded; None when it is not a number at all."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN
        return None
    return round(min(high, max(low, float(value))), 3)


def model_score(value: Any) -> float:
    """A model's 0..1 number, clamped; one that is not a number is the neutral 0.5."""
    score = unit(value)
    return 0.5 if score is None else score


def required_conclusion(answer: dict[str, Any]) -> str:
    """The answer's conclusion, stripped; ModelAnswerInvalid when it has none."""
    conclusion = answer.get("conclusion")
    if not isinstance(conclusion, str) or not conclusion.strip():
        raise ModelAnswerInvalid("The model's answer has no conclusion.")
    return conclusion.strip()


def texts(value: Any, *, limit: int = 10) -> list[str]:
    """A model's list of strings, without blanks and non-strings, at most ``limit``."""
    if not isinstance(value, list):
        return []
    return [item.strip() for item in value if isinstance(item, str) and item.strip()][:limit]


def evidence_prompt(evidence: list[EvidenceItem]) -> str:
    """The caller's memories for a prompt, numbered, each with its kind and id so the model can cite them."""
    if not evidence:
        return "Relevant memories of the user: none found."
    lines = [f"[{number}] ({item.kind}, id {item.id}) {' '.join(item.content.split())}"
             for number, item in enumerate(evidence, start=1)]
    return "Relevant memories of the user (cite them by id when they matter):\n" + "\n".join(lines)


def reading_prompt(label: str, text: str, context: str, memories: list[EvidenceItem]) -> str:
    """A text under review (reasoning, or a text to read for emotion), its context and the caller's memories."""
    return f"{label}:\n{text}\n\nContext: {context or 'none'}\n\n{evidence_prompt(memories)}"


def model_or_fallback(backend: ModelBackend | None, *, ask: Callable[[ModelBackend], dict[str, Any]],
                      fallback: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``ask(backend)`` with its method when there is a model, else ``fallback()`` (the deterministic analysis,
    which names its own method); an unusable answer gives ``fallback()`` with "modelError" saying what was wrong."""
    if backend is None:
        return fallback()
    try:
        return {**ask(backend), "method": backend.method}
    except ModelAnswerInvalid as exc:
        return {**fallback(), "modelError": exc.message}


def ratings(given: Any, names: Iterable[str], *, what: str, low: float = 0.0) -> dict[str, float]:
    """The named numbers of a model's answer object, clamped to [low, 1]; ModelAnswerInvalid naming any missing."""
    given = given if isinstance(given, dict) else {}
    rated = {name: unit(given.get(name), low=low) for name in names}
    missing = [name for name, value in rated.items() if value is None]
    if missing:
        raise ModelAnswerInvalid(f"The model's answer lacks numeric {what}: {', '.join(missing)}.")
    return rated

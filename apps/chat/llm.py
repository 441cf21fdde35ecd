"""Where chat answers come from: three backends, tried in a fixed order.

1. A configured OpenAI-compatible endpoint (ENGRAM_LLM_BASE_URL: Ollama, vLLM, llama.cpp server, OpenAI):
   POST {base}/chat/completions. Operators who configure one expect it to answer, so when it fails the chat
   fails with a clear "llm_unavailable" error naming the URL, rather than silently answering another way.
2. Sampling: the MCP edge passes the calling client's own model as ``generate(messages, max_tokens) ->
   (text, model)``, sync or async.
3. Extractive: no model at all. The answer is the memories' sentences that share the most words with the
   query, each cited [n] to its numbered memory, and it says that no model is configured and how to set one.

token_count is the answer's tokens: the endpoint's ``usage.completion_tokens`` when it reports usage, else
an estimate of one token per four characters (the usual rule of thumb for English BPE vocabularies).
"""
from __future__ import annotations

import inspect
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings

from apps.core.exceptions import Unavailable

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
Generate = Callable[[list[Message], int], "tuple[str, str] | Awaitable[tuple[str, str]]"]

EXTRACTIVE_MODEL = "extractive"
EXTRACTIVE_SENTENCES = 3
CHARS_PER_TOKEN = 4
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
NO_MODEL_NOTE = (
    "No language model is configured, so this answer quotes your most relevant memories instead of "
    "composing one. To get written answers, set ENGRAM_LLM_BASE_URL to an OpenAI-compatible endpoint "
    "(for example http://localhost:11434/v1 for Ollama) and ENGRAM_LLM_MODEL (and ENGRAM_LLM_API_KEY if it "
    "needs one), or chat from an MCP client that supports sampling."
)


class LLMUnavailable(Unavailable):
    """The configured endpoint could not answer. Not the caller's fault and worth retrying later."""

    code = "llm_unavailable"


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    method: str  # "llm" | "sampling" | "extractive" (ChatMessage.Method)
    token_count: int


@dataclass(frozen=True)
class Source:
    """One retrieved memory as the prompt numbers it: [number] content."""

    number: int
    content: str


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def endpoint_configured() -> bool:
    return bool(settings.ENGRAM_LLM_BASE_URL)


def completions_url() -> str:
    return f"{settings.ENGRAM_LLM_BASE_URL.rstrip('/')}/chat/completions"


def _auth_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.ENGRAM_LLM_API_KEY}"} if settings.ENGRAM_LLM_API_KEY else {}


def status(*, timeout: float) -> dict:
    """How chat answers, for health reports. A configured OpenAI-compatible endpoint must answer GET {base}/models
    (every such server has it, and it costs no generation); without one, chat answers with the client's model or
    extracts."""
    if not endpoint_configured():
        return {"ok": True, "configured": False,
                "detail": "No ENGRAM_LLM_BASE_URL: chat answers with the MCP client's model (sampling) or "
                          "extractively."}
    url = f"{settings.ENGRAM_LLM_BASE_URL.rstrip('/')}/models"
    state = {"configured": True, "url": completions_url(), "model": settings.ENGRAM_LLM_MODEL}
    try:
        response = httpx.get(url, headers=_auth_headers(), timeout=timeout)
    except httpx.HTTPError as exc:
        return {**state, "ok": False, "detail": f"GET {url}: {type(exc).__name__}"}
    if response.status_code != 200:
        return {**state, "ok": False, "detail": f"GET {url}: HTTP {response.status_code}"}
    return {**state, "ok": True}


def complete(*, messages: list[Message], max_tokens: int, sources: list[Source], query: str,
             generate: Generate | None = None) -> Completion:
    """An answer from the first backend available (see the module docstring). Runs outside any transaction:
    a model can take many seconds."""
    if endpoint_configured():
        return endpoint_completion(messages, max_tokens)
    if generate is not None:
        return _sampling_completion(generate, messages, max_tokens)
    return extractive_completion(query=query, sources=sources)


def endpoint_completion(messages: list[Message], max_tokens: int) -> Completion:
    url = completions_url()
    headers = _auth_headers()
    body = {"model": settings.ENGRAM_LLM_MODEL, "messages": messages, "max_tokens": max_tokens, "stream": False}
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=settings.ENGRAM_LLM_TIMEOUT_SECONDS)
    except httpx.TimeoutException:
        raise _unavailable(url, f"no answer within {settings.ENGRAM_LLM_TIMEOUT_SECONDS} s "
                                "(ENGRAM_LLM_TIMEOUT_SECONDS)") from None
    except httpx.HTTPError as exc:
        raise _unavailable(url, f"cannot connect ({type(exc).__name__}: {exc})") from None
    if response.status_code != 200:
        raise _unavailable(url, f"HTTP {response.status_code}: {response.text[:300]}")
    try:
        payload = response.json()
        text = payload["choices"][0]["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("content is not a string")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _unavailable(url, f"the answer is not an OpenAI chat completion ({exc})") from None
    usage = payload.get("usage") or {}
    tokens = usage.get("completion_tokens")
    return Completion(text=text.strip(), model=str(payload.get("model") or settings.ENGRAM_LLM_MODEL), method="llm",
                      token_count=tokens if isinstance(tokens, int) and tokens >= 0 else estimate_tokens(text))


def _unavailable(url: str, reason: str) -> LLMUnavailable:
    return LLMUnavailable(f"The language model at {url} is unavailable: {reason}. Check that it is running and "
                          "that ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL are right.", extra={"url": url})


async def _awaited(awaitable: Awaitable):
    return await awaitable


def _sampling_completion(generate: Generate, messages: list[Message], max_tokens: int) -> Completion:
    """The MCP client's model. An async ``generate`` runs on the edge's event loop (async_to_sync finds it
    from the worker thread the service runs in)."""
    result = generate(messages, max_tokens)
    if inspect.isawaitable(result):
        result = async_to_sync(_awaited)(result)
    text, model = result
    return Completion(text=text.strip(), model=model or "client", method="sampling", token_count=estimate_tokens(text))


def extractive_completion(*, query: str, sources: list[Source]) -> Completion:
    """The sentences of the memories that share the most words with the query (ties: the more relevant
    memory, then the earlier sentence), each cited to its memory, then the note on configuring a model."""
    if not sources:
        text = f"I found no memories related to your question, so I have nothing to answer from.\n\n{NO_MODEL_NOTE}"
        return Completion(text=text, model=EXTRACTIVE_MODEL, method="extractive", token_count=estimate_tokens(text))
    query_words = _words(query)
    candidates = []
    for rank, source in enumerate(sources):
        for position, sentence in enumerate(_sentences(source.content)):
            overlap = len(query_words & _words(sentence))
            candidates.append((-overlap, rank, position, sentence, source.number))
    chosen = sorted(candidates)[:EXTRACTIVE_SENTENCES]
    quoted = [f"- {sentence} [{number}]" for _, _, _, sentence, number in sorted(chosen, key=lambda c: (c[1], c[2]))]
    cited = sorted({number for *_, number in chosen})
    listing = [f"[{source.number}] {excerpt(source.content)}" for source in sources if source.number in cited]
    text = "\n".join(["From your memories:", *quoted, "", "Sources:", *listing, "", NO_MODEL_NOTE])
    return Completion(text=text, model=EXTRACTIVE_MODEL, method="extractive", token_count=estimate_tokens(text))


def _words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text) if len(word) > 2}


def _sentences(text: str) -> list[str]:
    return [sentence.strip() for sentence in SENTENCE_END.split(" ".join(text.split())) if sentence.strip()]


def excerpt(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else f"{flat[:limit - 1]}…"

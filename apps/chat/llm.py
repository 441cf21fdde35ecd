"""Where chat answers come from: three backends, tried in a fixed order.

1. A configured OpenAI-compatible endpoint (ENGRAM_LLM_BASE_URL: Ollama, vLLM, llama.cpp server, OpenAI):
   POST {base}/chat/completions. Operators who configure one expect it to answer, so when it fails the chat
   fails with a clear "llm_unavailable" error naming the URL, rather than silently answering another way.
2. Sampling: the MCP edge passes the calling client's own model as ``generate(messages, max_tokens) ->
   (text, model)``, sync or async.
3. Extractive: no model at all. The answer is the memories' sentences that share the most words with the
   query, each memory quoted once and cited [n]. The page says once per conversation that no model is
   configured and how to set one (NO_MODEL_NOTE); the answers do not repeat it.

With a configured endpoint the dashboard streams the answer (``EndpointStream``: ``stream: true``, the
OpenAI server-sent chunks); REST and MCP get it whole.

token_count is the answer's tokens: the endpoint's ``usage.completion_tokens`` when it reports usage, else
an estimate of one token per four characters (the usual rule of thumb for English BPE vocabularies).
"""
from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings

from apps.chat.relevance import WORD, content_words, shared_words
from apps.core.exceptions import Unavailable

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
Generate = Callable[[list[Message], int], "tuple[str, str] | Awaitable[tuple[str, str]]"]

EXTRACTIVE_MODEL = "extractive"
EXTRACTIVE_SENTENCES = 3
MIN_SENTENCE_WORDS = 3
NOTHING_RELEVANT = "none"  # ChatMessage.Method.NONE: no memory was relevant, no answer was composed
CHARS_PER_TOKEN = 4
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NO_MODEL_SUMMARY = ("No language model is configured, so answers quote your most relevant memories instead of "
                    "composing one.")
NO_MODEL_HOWTO = (
    "To get written answers, set ENGRAM_LLM_BASE_URL to an OpenAI-compatible endpoint (for example "
    "http://localhost:11434/v1 for Ollama) and ENGRAM_LLM_MODEL (and ENGRAM_LLM_API_KEY if it needs one), or "
    "chat from an MCP client that supports sampling."
)
NO_MODEL_NOTE = f"{NO_MODEL_SUMMARY} {NO_MODEL_HOWTO}"
# Extractive answers stored before the note moved to the page ended with this; the page leaves it out.
STORED_NO_MODEL_NOTE = (
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
    method: str  # "llm" | "sampling" | "extractive" | "none" (ChatMessage.Method)
    token_count: int
    # Extractive answers: the sources quoted, in the order of the numbers the text cites them by (1, 2, ...).
    # None: the text cites the sources by their own numbers.
    cited: tuple[int, ...] | None = None


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


def answer_mode() -> dict:
    """How the dashboard's next answer is made: {"method": "llm", "model", "url"} with a configured endpoint, else
    {"method": "extractive"} (the page has no MCP client to sample)."""
    if endpoint_configured():
        return {"method": "llm", "model": settings.ENGRAM_LLM_MODEL, "url": completions_url()}
    return {"method": "extractive"}


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


class EndpointStream:
    """The configured endpoint's answer as it is written: ``async for piece in stream`` yields the text as the
    server sends it (OpenAI's ``stream: true``: ``data: {json}`` lines whose ``choices[0].delta.content`` carry the
    text, ending with ``data: [DONE]``), then ``completion()`` is the whole answer. Any failure, including a stream
    that stops before ``[DONE]``, raises LLMUnavailable: a partial answer is not an answer."""

    def __init__(self, messages: list[Message], max_tokens: int):
        self.url = completions_url()
        self.body = {"model": settings.ENGRAM_LLM_MODEL, "messages": messages, "max_tokens": max_tokens,
                     "stream": True}
        self.model = settings.ENGRAM_LLM_MODEL
        self.parts: list[str] = []
        self.reported_tokens: int | None = None
        self.finished = False

    async def __aiter__(self) -> AsyncIterator[str]:
        timeout = settings.ENGRAM_LLM_TIMEOUT_SECONDS
        try:
            async with httpx.AsyncClient(timeout=timeout) as client, client.stream(
                    "POST", self.url, json=self.body, headers=_auth_headers()) as response:
                if response.status_code != 200:
                    body = (await response.aread()).decode(errors="replace")
                    raise _unavailable(self.url, f"HTTP {response.status_code}: {body[:300]}")
                async for line in response.aiter_lines():
                    piece = self._read(line)
                    if self.finished:
                        break
                    if piece:
                        self.parts.append(piece)
                        yield piece
        except httpx.TimeoutException:
            raise _unavailable(self.url, f"no answer within {timeout} s (ENGRAM_LLM_TIMEOUT_SECONDS)") from None
        except httpx.HTTPError as exc:
            raise _unavailable(self.url, f"the stream broke ({type(exc).__name__}: {exc})") from None
        if not self.finished:
            raise _unavailable(self.url, "the stream ended before its last chunk (data: [DONE])")

    def _read(self, line: str) -> str:
        """The text of one line of the stream ("" for blank lines, comments and chunks without text)."""
        if not line.startswith("data:"):
            return ""
        data = line.removeprefix("data:").strip()
        if data == "[DONE]":
            self.finished = True
            return ""
        try:
            chunk = json.loads(data)
            choices = chunk.get("choices") or []
            delta = (choices[0].get("delta") or {}) if choices else {}
            text = delta.get("content") or ""
            if not isinstance(text, str):
                raise TypeError("delta.content is not a string")
        except (ValueError, AttributeError, TypeError) as exc:
            raise _unavailable(self.url, f"a chunk of the stream is not an OpenAI chat completion chunk ({exc})") \
                from None
        self.model = str(chunk.get("model") or self.model)
        tokens = (chunk.get("usage") or {}).get("completion_tokens")
        if isinstance(tokens, int) and tokens >= 0:
            self.reported_tokens = tokens
        return text

    def completion(self) -> Completion:
        text = "".join(self.parts)
        tokens = self.reported_tokens if self.reported_tokens is not None else estimate_tokens(text)
        return Completion(text=text.strip(), model=self.model, method="llm", token_count=tokens)


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
    """The memories' sentences that share words with the query (apps/chat/relevance.py), at most
    EXTRACTIVE_SENTENCES: those sharing the most first, then the more relevant memory's, then the earlier. Each
    memory quoted is one line, its sentences in their order, cited once as [n]; ``cited`` says which sources, in
    the order of their new numbers (the ones quoted, numbered 1, 2, ... as they come). With no sentence sharing a
    word, the answer names the memories (all of them, as numbered) and quotes none."""
    query_words = content_words(query)
    candidates = []
    for rank, source in enumerate(sources):
        for position, sentence in enumerate(_sentences(source.content)):
            overlap = len(shared_words(query_words, content_words(sentence)))
            if overlap:
                candidates.append((-overlap, rank, position, sentence, source.number))
    chosen: dict[int, list[tuple[int, str]]] = {}
    for _, _, position, sentence, number in sorted(candidates)[:EXTRACTIVE_SENTENCES]:
        chosen.setdefault(number, []).append((position, sentence))
    if not chosen:
        cited = tuple(source.number for source in sources)
        names = ", ".join(f"[{number}]" for number in cited)
        text = (f"No sentence of your memories uses the words of your question. The memories closest to it in "
                f"meaning are {names}.")
        return _extractive(text, cited)
    cited = tuple(sorted(chosen))
    lines = [f"- {' '.join(sentence for _, sentence in sorted(chosen[number]))} [{new}]"
             for new, number in enumerate(cited, start=1)]
    return _extractive("\n".join(["From your memories:", *lines]), cited)


def nothing_relevant_completion(*, floor: float) -> Completion:
    """The answer when no memory reached the relevance floor: no model is asked, nothing is made up."""
    text = (f"Nothing in your memories is relevant to this question (no memory reached a relevance of {floor:g}), "
            "so I have nothing to answer from. Search your memories with other words, or store what you know first.")
    return Completion(text=text, model="", method=NOTHING_RELEVANT, token_count=estimate_tokens(text), cited=())


def _extractive(text: str, cited: tuple[int, ...]) -> Completion:
    return Completion(text=text, model=EXTRACTIVE_MODEL, method="extractive", token_count=estimate_tokens(text),
                      cited=cited)


def _sentences(text: str) -> list[str]:
    """The text's sentences; a piece of fewer than MIN_SENTENCE_WORDS words ("(note 1)") stays with the one before."""
    sentences: list[str] = []
    pending = ""  # a short first piece, kept for the sentence after it
    for piece in SENTENCE_END.split(" ".join(text.split())):
        piece = f"{pending} {piece.strip()}".strip()
        if not piece:
            continue
        pending = ""
        if len(WORD.findall(piece)) >= MIN_SENTENCE_WORDS:
            sentences.append(piece)
        elif sentences:
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            pending = piece
    return sentences or ([pending] if pending else [])


def excerpt(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else f"{flat[:limit - 1]}…"

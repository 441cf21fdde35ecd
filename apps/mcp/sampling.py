"""The MCP client's own model, asked through sampling (sampling/createMessage), for the profiles whose tools
consult a model: MemGOS's chat (``client_model``, chat's ``generate``) and ThoughtMCP's reasoning tools
(``run_with_client_model``, a reasoning backend of method "sampling").

How the client is asked depends on the protocol version:
- Handshake-era protocols: a sampling/createMessage request goes to the client while the call runs. A service's
  thread cannot await, so the reasoning backend hands the request to the adapter's event loop
  (run_coroutine_threadsafe) and waits for the answer; think_parallel's four streams do so from four threads at once.
- 2026-07-28 (sessionless): a call cannot ask the client anything while it runs. The first round records every
  request the call makes (think_parallel: one per stream, each under its own key) and ends with one
  InputRequiredResult asking for all of them; the client retries with the answers, and that round (same evidence,
  same prompts) reads them by key. The client returns only the latest round's answers, so the answers of earlier
  rounds travel in ``request_state`` (trusting it costs nothing: they are the client's own model's answers, which it
  could have made anything anyway; an analysis that asks in sequence, like analyze_reasoning with its confidence,
  bias and emotion parts, takes one round per request).
A client that declines to sample, or does not answer within ENGRAM_LLM_TIMEOUT_SECONDS, gives an unusable answer:
the analysis falls back to its deterministic method and reports "modelError".
"""
from __future__ import annotations

import asyncio
import json
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, InputRequiredResult, SamplingMessage,
    TextContent,
)
from mcp_types.version import is_version_at_least

from apps.chat.llm import Generate, Message
from apps.core.threads import run_sync
from apps.reasoning.analysis.common import ModelBackend
from apps.reasoning.analysis.llm import ModelAnswerInvalid, prompt_messages

# The first protocol version whose tool calls cannot send requests back to the client while they run.
SESSIONLESS_PROTOCOL = "2026-07-28"
# The key of chat's one sampling request in an InputRequiredResult (and of its answer in the retry).
SAMPLE_KEY = "chat_answer"


class SamplingRequested(Exception):
    """Raised by a sessionless round's ``generate``: ask the client to sample, then retry. Nothing is stored yet."""

    def __init__(self, request: CreateMessageRequest):
        super().__init__("sampling requested")
        self.request = request


def sampling_request(messages: list[Message], max_tokens: int) -> CreateMessageRequestParams:
    system = "\n\n".join(message["content"] for message in messages if message["role"] == "system")
    conversation = [SamplingMessage(role=message["role"], content=TextContent(type="text", text=message["content"]))
                    for message in messages if message["role"] != "system"]
    return CreateMessageRequestParams(messages=conversation, max_tokens=max_tokens, system_prompt=system or None)


def sampling_answer(result: CreateMessageResult) -> tuple[str, str]:
    return (result.content.text if isinstance(result.content, TextContent) else ""), result.model


def client_model(ctx: Context | None) -> Generate | None:
    """The calling client's model as chat's ``generate``, when the client can be asked to sample; else None."""
    if ctx is None or ctx.client_capabilities is None or ctx.client_capabilities.sampling is None:
        return None
    version = ctx.protocol_version
    if version is not None and is_version_at_least(version, SESSIONLESS_PROTOCOL):
        answered = (ctx.input_responses or {}).get(SAMPLE_KEY)

        def generate_on_retry(messages: list[Message], max_tokens: int) -> tuple[str, str]:
            if isinstance(answered, CreateMessageResult):
                return sampling_answer(answered)
            raise SamplingRequested(CreateMessageRequest(params=sampling_request(messages, max_tokens)))

        return generate_on_retry

    async def generate_now(messages: list[Message], max_tokens: int) -> tuple[str, str]:
        params = sampling_request(messages, max_tokens)
        with warnings.catch_warnings():
            # Deprecated for the sessionless protocol only, which takes the other way.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await ctx.session.create_message(
                params.messages, max_tokens=max_tokens, system_prompt=params.system_prompt,
                related_request_id=ctx.request_context.request_id)
        return sampling_answer(result)

    return generate_now


CLIENT_MODEL = "client"


class SessionClientModel:
    """Handshake-era sampling: asks the client during the call (``client_model``), from any worker thread."""

    method = "sampling"

    def __init__(self, generate: Generate, loop: asyncio.AbstractEventLoop):
        self._generate, self._loop = generate, loop
        self.name = CLIENT_MODEL

    def complete(self, *, system: str, prompt: str, max_tokens: int, key: str) -> str:
        request = self._generate(prompt_messages(system, prompt), max_tokens)
        future = asyncio.run_coroutine_threadsafe(request, self._loop)
        timeout = settings.ENGRAM_LLM_TIMEOUT_SECONDS
        try:
            text, model = future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            raise ModelAnswerInvalid(f"The client's model did not answer within {timeout} s "
                                     "(ENGRAM_LLM_TIMEOUT_SECONDS).") from None
        except Exception as exc:  # the client refused or failed the request: its model is unavailable
            raise ModelAnswerInvalid(f"The client did not sample: {exc}") from None
        self.name = model or CLIENT_MODEL
        return text


class RoundClientModel:
    """2026-07-28 sampling: answers from the client's retry, or records the request for the next round."""

    method = "sampling"

    def __init__(self, ctx: Context):
        self.answers: dict[str, tuple[str, str]] = {**_carried(ctx.request_state), **{
            key: sampling_answer(result) for key, result in (ctx.input_responses or {}).items()
            if isinstance(result, CreateMessageResult)}}
        self.pending: dict[str, CreateMessageRequest] = {}
        self._lock = threading.Lock()  # think_parallel's streams ask from several threads
        self.name = next((model for _, model in self.answers.values() if model), CLIENT_MODEL)

    def complete(self, *, system: str, prompt: str, max_tokens: int, key: str) -> str:
        if key in self.answers:
            return self.answers[key][0]
        request = CreateMessageRequest(params=sampling_request(prompt_messages(system, prompt), max_tokens))
        with self._lock:
            self.pending[key] = request
        raise SamplingRequested(request)

    def next_round(self) -> InputRequiredResult:
        carried = {key: list(answer) for key, answer in self.answers.items()}
        return InputRequiredResult(input_requests=dict(self.pending), request_state=json.dumps(carried))


def _carried(state: str | None) -> dict[str, tuple[str, str]]:
    """The answers of earlier rounds, as ``next_round`` stored them; anything else in the state is ignored."""
    try:
        decoded = json.loads(state) if state else {}
    except ValueError:
        return {}
    if not isinstance(decoded, dict):
        return {}
    return {key: (value[0], value[1]) for key, value in decoded.items()
            if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) for part in value)}


def client_reasoning_model(ctx: Context | None) -> ModelBackend | None:
    """The calling client's model, when it declared the sampling capability; else None. Call it on the event loop
    (the handshake-era backend keeps that loop to reach the client from the service's threads)."""
    generate = client_model(ctx)  # None when the client cannot sample
    if generate is None:
        return None
    if ctx.protocol_version is not None and is_version_at_least(ctx.protocol_version, SESSIONLESS_PROTOCOL):
        return RoundClientModel(ctx)
    return SessionClientModel(generate, asyncio.get_running_loop())


async def run_with_client_model(ctx: Context | None, call: Callable[[ModelBackend | None], dict[str, Any]]
                                ) -> dict[str, Any] | InputRequiredResult:
    """``call(model)`` (a sync service call) in a worker thread with the client's model; a sessionless round that
    made requests of the client ends in the InputRequiredResult asking for them all."""
    model = client_reasoning_model(ctx)
    try:
        data = await run_sync(call)(model)
    except Exception:
        # A request for the client's model aborts the analysis that made it; several streams may have asked.
        if isinstance(model, RoundClientModel) and model.pending:
            return model.next_round()
        raise
    if isinstance(model, RoundClientModel) and model.pending:
        return model.next_round()  # the analysis went on without an answer (a stream failed): ask, then redo it
    return data

"""MCP adapters for MemGOS's chat and chat_history (the `memgos` profile lists them), in the seed's shapes.

chat answers with the configured OpenAI-compatible endpoint when there is one; otherwise, when the calling MCP
client declared the sampling capability, with the client's own model (sampling/createMessage); otherwise
extractively (apps/chat/llm.py). The conversation is this MCP client's (``client_key``).

Sampling follows the protocol version. The handshake-era protocols send the request to the client while the call
runs. 2026-07-28 has no such back-channel: the first round of the call ends, before chat has stored anything, with
an ``InputRequiredResult`` that asks the client to sample; the client retries the call with the model's answer,
and that round's chat (same memories, same prompt) uses it.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, InputRequiredResult, SamplingMessage,
    TextContent,
)
from mcp_types.version import is_version_at_least

from apps.accounts.models import User
from apps.chat.llm import Generate, Message
from apps.chat.selectors import chat_history as chat_history_page
from apps.chat.services import chat_send
from apps.core.timestamps import iso_timestamp
from apps.mcp.errors import parameters
from apps.mcp.server import client_key, tool_context

if TYPE_CHECKING:
    from apps.mcp.profiles.memgos import ChatHistoryInput, ChatInput

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


async def chat(actor: User, params: ChatInput) -> dict[str, Any] | InputRequiredResult:
    generate, key = client_model(tool_context()), client_key()

    def send():
        with parameters(cube="cube_ids"):
            return chat_send(actor=actor, query=params.query, top_k=params.top_k, cube_ids=params.cube_ids,
                             max_tokens=params.max_tokens, generate=generate, client_key=key)

    try:
        reply = await database_sync_to_async(send)()
    except SamplingRequested as asked:
        return InputRequiredResult(input_requests={SAMPLE_KEY: asked.request})
    return {
        "response": reply.response,
        "session_id": reply.session.pk,
        "user_id": str(actor.pk),
        "timestamp": iso_timestamp(reply.message.created_at),
        "context_used": [{"memory_id": str(used.memory.pk), "cube_id": used.memory.cube_id,
                          "relevance_score": round(used.relevance, 4)} for used in reply.context_used],
        "token_count": reply.token_count,
    }


async def chat_history(actor: User, params: ChatHistoryInput) -> dict[str, Any]:
    """The session named, else the actor's latest; a user with no conversation yet gets an empty history."""
    history = await database_sync_to_async(chat_history_page)(
        actor=actor, session_id=params.session_id, limit=params.limit, offset=params.offset)
    session = history.session
    return {"chat_history": {
        "session_id": session.pk if session else None,
        "user_id": str(actor.pk),
        "created_at": iso_timestamp(session.created_at) if session else None,
        "total_messages": history.total,
        "messages": [{"role": message.role, "content": message.content, "timestamp": iso_timestamp(message.created_at)}
                     for message in history.messages],
    }}

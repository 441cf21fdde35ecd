"""MCP adapters for MemGOS's chat and chat_history (the `memgos` profile lists them), in the seed's shapes.

chat answers with the configured OpenAI-compatible endpoint when there is one; otherwise, when the calling MCP
client declared the sampling capability, with the client's own model (sampling/createMessage); otherwise
extractively (apps/chat/llm.py). The conversation is this MCP client's (``client_key``). An extractive answer
says how to configure a model once, on the session's first answer, as the dashboard says it once per page.

Sampling follows the protocol version. The handshake-era protocols send the request to the client while the call
runs. 2026-07-28 has no such back-channel: the first round of the call ends, before chat has stored anything, with
an ``InputRequiredResult`` that asks the client to sample; the client retries the call with the model's answer,
and that round's chat (same memories, same prompt) uses it.
"""
from __future__ import annotations

from typing import Any

from mcp_types import InputRequiredResult

from apps.accounts.models import User
from apps.chat.llm import NO_MODEL_NOTE
from apps.chat.selectors import chat_history as chat_history_page
from apps.chat.models import ChatMessage
from apps.chat.services import chat_send
from apps.core.threads import run_sync
from apps.core.timestamps import iso_timestamp
from apps.mcp.profiles.memgos.inputs import ChatHistoryInput, ChatInput
from apps.mcp.sampling import SAMPLE_KEY, SamplingRequested, client_model
from apps.mcp.server import client_key, tool_context


async def chat(actor: User, params: ChatInput) -> dict[str, Any] | InputRequiredResult:
    generate, key = client_model(tool_context()), client_key()

    def send():
        return chat_send(actor=actor, query=params.query, top_k=params.top_k, cube_ids=params.cube_ids,
                         max_tokens=params.max_tokens, generate=generate, client_key=key)

    try:
        reply = await run_sync(send)()
    except SamplingRequested as asked:
        return InputRequiredResult(input_requests={SAMPLE_KEY: asked.request})
    note = reply.started and reply.method == ChatMessage.Method.EXTRACTIVE
    return {
        "response": f"{reply.response}\n\n{NO_MODEL_NOTE}" if note else reply.response,
        "session_id": reply.session.pk,
        "user_id": str(actor.pk),
        "timestamp": iso_timestamp(reply.message.created_at),
        "context_used": [{"memory_id": str(used.memory.pk), "cube_id": used.memory.cube_id,
                          "relevance_score": round(used.relevance, 4)} for used in reply.context_used],
        "token_count": reply.token_count,
    }


async def chat_history(actor: User, params: ChatHistoryInput) -> dict[str, Any]:
    """The session named, else the actor's latest; a user with no conversation yet gets an empty history."""
    history = await run_sync(chat_history_page)(
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

"""Writes of chat: answer a query from the user's memories, and clear a conversation.

chat_send, step by step:
1. Validate (query 1-10000 characters, top_k 1-10, max_tokens 50-4000, cube_ids each readable).
2. Retrieve the top_k memories of the readable cubes (or of ``cube_ids``) for the query (its first
   MAX_QUERY_CHARS characters, retrieval's limit), without reinforcing them: being read as chat context is
   not a use the user chose. context_used reports each memory's relevance to the query (0-1).
3. Prompt: system instructions with the numbered memories, the session's recent history (the last
   HISTORY_MESSAGES messages, newest kept first within HISTORY_CHARS), then the query.
4. Answer with the first backend available (apps/chat/llm.py), outside any transaction: a model may take
   seconds, and no row is locked meanwhile.
5. Store both turns and the session's activity in one transaction.
The user's turn is stored only with its answer: a query the model could not answer is simply sent again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.chat.llm import Completion, Generate, Message, Source, complete, estimate_tokens, excerpt
from apps.chat.models import MAX_TITLE_CHARS, ChatMessage, ChatSession
from apps.chat.selectors import chat_messages, chat_session_get, chat_session_latest
from apps.core.exceptions import InvalidInput, NotFound
from apps.core.limits import CHAT_MAX_TOKENS, CHAT_TOP_K
from apps.memories.models import Memory
from apps.memories.services import memory_retrieve
from apps.memories.validation import MAX_QUERY_CHARS, MemoryFilters

MAX_QUERY_LENGTH = 10000
HISTORY_MESSAGES = 20  # ten turns
HISTORY_CHARS = 8000
MEMORY_PROMPT_CHARS = 2000  # each memory's share of the prompt
SYSTEM_PROMPT = (
    "You are Engram's assistant. Answer the user's question from their memories below when they are "
    "relevant, citing each memory you use as [n]. If the memories do not hold the answer, say so and answer "
    "only what you know for certain. Be concise."
)


class UsedMemory(NamedTuple):
    memory: Memory
    relevance: float  # the retrieval's relevance of the memory to the query, 0-1


@dataclass(frozen=True)
class ChatReply:
    session: ChatSession
    response: str
    context_used: list[UsedMemory]
    token_count: int
    method: str  # "llm" | "sampling" | "extractive"
    model: str
    message: ChatMessage  # the stored assistant turn (its created_at is the reply's timestamp)


def chat_send(*, actor: User, query, session_id=None, top_k=CHAT_TOP_K.default, cube_ids=None,
              max_tokens=CHAT_MAX_TOKENS.default, generate: Generate | None = None,
              client_key: str | None = None) -> ChatReply:
    """Answer ``query`` in a session: the one named, else (with ``client_key``, the MCP edge's
    apps.mcp.server.client_key()) that client's latest session, else a new one."""
    query = _clean_query(query)
    top_k = CHAT_TOP_K.clean(top_k, field="top_k")
    max_tokens = CHAT_MAX_TOKENS.clean(max_tokens, field="max_tokens")
    filters = MemoryFilters.build(cube_ids=cube_ids)
    if session_id is not None:
        session = chat_session_get(actor=actor, session_id=session_id)
    elif client_key is not None:
        session = chat_session_latest(actor=actor, client_key=client_key)
    else:
        session = None
    retrieved = memory_retrieve(actor=actor, text=query[:MAX_QUERY_CHARS], filters=filters, limit=top_k,
                                reinforce=False).items
    used = [UsedMemory(memory=item.memory, relevance=item.relevance) for item in retrieved]
    sources = [Source(number=index, content=item.memory.content) for index, item in enumerate(used, start=1)]
    history = _recent_history(session) if session is not None else []
    completion = complete(messages=build_prompt(query=query, sources=sources, history=history),
                          max_tokens=max_tokens, sources=sources, query=query, generate=generate)
    session, message = _store_turns(actor=actor, session=session, client_key=client_key or "", query=query,
                                    completion=completion, used=used)
    return ChatReply(session=session, response=completion.text, context_used=used,
                     token_count=completion.token_count, method=completion.method, model=completion.model,
                     message=message)


def chat_clear(*, actor: User, session_id) -> None:
    """Delete the actor's session and all its messages, for good (see apps/chat/models.py)."""
    with transaction.atomic():
        chat_session_get(actor=actor, session_id=session_id).delete()


def build_prompt(*, query: str, sources: list[Source], history: list[Message]) -> list[Message]:
    if sources:
        numbered = "\n".join(f"[{source.number}] {_clip(source.content)}" for source in sources)
        memories = f"Memories:\n{numbered}"
    else:
        memories = "Memories: none matched this question."
    return [{"role": "system", "content": f"{SYSTEM_PROMPT}\n\n{memories}"}, *history,
            {"role": "user", "content": query}]


def context_used_records(used: list[UsedMemory]) -> list[dict]:
    """context_used as stored and returned: [{memory_id, cube_id, relevance_score}]."""
    return [{"memory_id": str(item.memory.pk), "cube_id": item.memory.cube_id, "relevance_score": item.relevance}
            for item in used]


def _recent_history(session: ChatSession) -> list[Message]:
    """The session's last HISTORY_MESSAGES messages, oldest first, dropping the oldest past HISTORY_CHARS."""
    recent = list(chat_messages(session=session).order_by("-created_at", "-id")
                  .values_list("role", "content")[:HISTORY_MESSAGES])
    kept, budget = [], HISTORY_CHARS
    for role, content in recent:
        if len(content) > budget:
            break
        budget -= len(content)
        kept.append({"role": role, "content": content})
    return kept[::-1]


def _store_turns(*, actor: User, session: ChatSession | None, client_key: str, query: str, completion: Completion,
                 used: list[UsedMemory]) -> tuple[ChatSession, ChatMessage]:
    now = timezone.now()
    with transaction.atomic():
        if session is None:
            session = ChatSession.objects.create(owner=actor, title=excerpt(query, MAX_TITLE_CHARS),
                                                 client_key=client_key, last_activity=now)
        elif not ChatSession.objects.filter(pk=session.pk).update(last_activity=now, updated_at=now):
            # Cleared while the model was answering.
            raise NotFound(f"Chat session {session.pk!r} not found.", code="session_not_found",
                           extra={"field": "session_id"})
        ChatMessage.objects.create(session=session, role=ChatMessage.Role.USER, content=query,
                                   token_count=estimate_tokens(query))
        message = ChatMessage.objects.create(
            session=session, role=ChatMessage.Role.ASSISTANT, content=completion.text,
            context_used=context_used_records(used), token_count=completion.token_count,
            method=completion.method, model=completion.model[:200],
        )
    session.last_activity = now
    return session, message


def _clean_query(value) -> str:
    if not isinstance(value, str):
        raise InvalidInput("query must be a string.", field="query")
    if "\x00" in value:
        raise InvalidInput("query cannot contain NUL bytes.", field="query")
    query = value.strip()
    if not query:
        raise InvalidInput("query is empty: ask something.", field="query")
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidInput(f"query has at most {MAX_QUERY_LENGTH} characters, got {len(query)}: shorten it.",
                           field="query")
    return query


def _clip(text: str) -> str:
    return text if len(text) <= MEMORY_PROMPT_CHARS else f"{text[:MEMORY_PROMPT_CHARS - 1]}…"

"""Writes of chat: answer a query from the user's memories, and clear a conversation.

chat_send, step by step:
1. Validate (query 1-10000 characters, top_k 1-10, max_tokens 50-4000, cube_ids each readable).
2. Retrieve the top_k memories of the readable cubes (or of ``cube_ids``) for the query (its first
   MAX_QUERY_CHARS characters, retrieval's limit), without reinforcing them: being read as chat context is
   not a use the user chose. Each is scored by chat's relevance (apps/chat/relevance.py: the cosine and the
   share of the query's words it holds, 0-1); those below RELEVANCE_FLOOR are dropped, the rest numbered
   [1], [2], ... most relevant first. context_used reports them with that relevance.
3. No memory left: the answer says nothing relevant was found and no model is asked, unless the session has
   history and a model can answer (a follow-up such as "and what colour is she?" names nothing a memory holds;
   the conversation may answer it, and the prompt says no memory is relevant).
4. Prompt: system instructions with the numbered memories, the session's recent history (the last
   HISTORY_MESSAGES messages, newest kept first within HISTORY_CHARS), then the query.
5. Answer with the first backend available (apps/chat/llm.py), outside any transaction: a model may take
   seconds, and no row is locked meanwhile. An extractive answer keeps only the memories it quotes.
6. Store both turns and the session's activity in one transaction.
The user's turn is stored only with its answer: a query the model could not answer is simply sent again.

The dashboard streams answers of a configured endpoint: chat_prepare does steps 1-4, chat_stream writes the
answer as the model sends it and stores it once the model has finished (chat_send's steps 5-6).
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.chat.llm import (
    Completion, EndpointStream, Generate, Message, Source, complete, endpoint_configured, estimate_tokens, excerpt,
    nothing_relevant_completion,
)
from apps.chat.models import MAX_TITLE_CHARS, ChatMessage, ChatSession
from apps.chat.relevance import RELEVANCE_FLOOR, chat_relevance, content_words
from apps.chat.selectors import chat_messages, chat_session_get, chat_session_latest
from apps.core.exceptions import InvalidInput, NotFound
from apps.core.limits import CHAT_MAX_TOKENS, CHAT_TOP_K
from apps.core.threads import run_sync
from apps.memories.models import Memory
from apps.memories.services import memory_retrieve
from apps.memories.validation import MAX_QUERY_CHARS, MemoryFilters

MAX_QUERY_LENGTH = 10000
HISTORY_MESSAGES = 20  # ten turns
HISTORY_CHARS = 8000
MEMORY_PROMPT_CHARS = 2000  # each memory's share of the prompt
SYSTEM_PROMPT = (
    "You are Engram's assistant. Answer the user's question from their memories below when they are "
    "relevant, citing each memory you use once, as [n] after what it says. If the memories do not hold the "
    "answer, say so and answer only what you know for certain. Be concise."
)
NO_RELEVANT_MEMORIES = ("Memories: none of the user's memories is relevant to this question. Answer from the "
                        "conversation if it holds the answer; otherwise say that nothing in their memories is "
                        "relevant.")


class UsedMemory(NamedTuple):
    memory: Memory
    relevance: float  # chat's relevance of the memory to the query, 0-1 (apps/chat/relevance.py)


@dataclass(frozen=True)
class ChatReply:
    session: ChatSession
    response: str
    context_used: list[UsedMemory]
    token_count: int
    method: str  # "llm" | "sampling" | "extractive" | "none" (nothing relevant)
    model: str
    message: ChatMessage  # the stored assistant turn (its created_at is the reply's timestamp)
    started: bool = False  # this answer started the session

    @property
    def nothing_relevant(self) -> bool:
        return not self.context_used


@dataclass(frozen=True)
class ChatTurn:
    """A question ready to answer (chat_prepare): validated, its memories chosen, its prompt built."""

    actor: User
    session: ChatSession | None  # None: the answer starts a new session
    client_key: str
    query: str
    max_tokens: int
    used: list[UsedMemory]
    sources: list[Source]
    history: list[Message]
    messages: list[Message]

    @property
    def streams(self) -> bool:
        """Whether chat_stream writes this answer as the configured model sends it."""
        return endpoint_configured() and bool(self.used or self.history)


def chat_prepare(*, actor: User, query, session_id=None, top_k=CHAT_TOP_K.default, cube_ids=None,
                 max_tokens=CHAT_MAX_TOKENS.default, client_key: str | None = None) -> ChatTurn:
    """Steps 1-4 of chat_send (see the module docstring); raises what chat_send raises for bad input."""
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
    query_words = content_words(query)
    scored = [UsedMemory(memory=item.memory,
                         relevance=chat_relevance(query_words=query_words, content=item.memory.content,
                                                  dense=item.dense))
              for item in retrieved]
    used = sorted((item for item in scored if item.relevance >= RELEVANCE_FLOOR), key=lambda item: -item.relevance)
    sources = [Source(number=index, content=item.memory.content) for index, item in enumerate(used, start=1)]
    history = _recent_history(session) if session is not None else []
    return ChatTurn(actor=actor, session=session, client_key=client_key or "", query=query, max_tokens=max_tokens,
                    used=used, sources=sources, history=history,
                    messages=build_prompt(query=query, sources=sources, history=history))


def chat_send(*, actor: User, query, session_id=None, top_k=CHAT_TOP_K.default, cube_ids=None,
              max_tokens=CHAT_MAX_TOKENS.default, generate: Generate | None = None,
              client_key: str | None = None) -> ChatReply:
    """Answer ``query`` in a session: the one named, else (with ``client_key``, the MCP edge's
    apps.mcp.server.client_key()) that client's latest session, else a new one."""
    turn = chat_prepare(actor=actor, query=query, session_id=session_id, top_k=top_k, cube_ids=cube_ids,
                        max_tokens=max_tokens, client_key=client_key)
    if not turn.used and not (turn.history and (endpoint_configured() or generate is not None)):
        completion = nothing_relevant_completion(floor=RELEVANCE_FLOOR)
    else:
        completion = complete(messages=turn.messages, max_tokens=turn.max_tokens, sources=turn.sources,
                              query=turn.query, generate=generate)
    return chat_store(turn, completion)


@dataclass(frozen=True)
class StreamPiece:
    """What chat_stream yields: the answer's next ``text``, then (last) the stored ``reply``."""

    text: str = ""
    reply: ChatReply | None = None


async def chat_stream(turn: ChatTurn) -> AsyncIterator[StreamPiece]:
    """The answer to a prepared turn as it is written, then the stored reply. Only a configured endpoint writes
    as it goes (``turn.streams``); any other answer comes as one piece. Raises LLMUnavailable when the model
    fails, before or during its answer: nothing is stored then. Runs on the event loop; its database work on
    the sync pool (apps.core.threads.run_sync)."""
    if turn.streams:
        stream = EndpointStream(turn.messages, turn.max_tokens)
        async for text in stream:
            yield StreamPiece(text=text)
        completion = stream.completion()
    else:
        completion = (complete(messages=turn.messages, max_tokens=turn.max_tokens, sources=turn.sources,
                               query=turn.query) if turn.used else nothing_relevant_completion(floor=RELEVANCE_FLOOR))
        yield StreamPiece(text=completion.text)
    yield StreamPiece(reply=await run_sync(chat_store)(turn, completion))


def chat_store(turn: ChatTurn, completion: Completion) -> ChatReply:
    """Step 6: store the question and its answer (an extractive answer with only the memories it quotes)."""
    used = turn.used if completion.cited is None else [turn.used[number - 1] for number in completion.cited]
    session, message = _store_turns(actor=turn.actor, session=turn.session, client_key=turn.client_key,
                                    query=turn.query, completion=completion, used=used)
    return ChatReply(session=session, response=completion.text, context_used=used,
                     token_count=completion.token_count, method=completion.method, model=completion.model,
                     message=message, started=turn.session is None)


def chat_clear(*, actor: User, session_id) -> None:
    """Delete the actor's session and all its messages, for good (see apps/chat/models.py)."""
    with transaction.atomic():
        chat_session_get(actor=actor, session_id=session_id).delete()


def build_prompt(*, query: str, sources: list[Source], history: list[Message]) -> list[Message]:
    if sources:
        numbered = "\n".join(f"[{source.number}] {_clip(source.content)}" for source in sources)
        memories = f"Memories:\n{numbered}"
    else:
        memories = NO_RELEVANT_MEMORIES
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

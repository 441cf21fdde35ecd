"""Reads of chat: a user's sessions and their messages.

A chat session belongs to the user who started it and nobody else reads it (not members of the cubes its
answers drew on, not staff through the API): another user's session, an unknown id and a malformed one are
all the same "not found".
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from apps.accounts.models import User
from apps.chat.models import ChatMessage, ChatSession
from apps.core.exceptions import NotFound
from apps.core.limits import HISTORY_LIMIT, OFFSET
from apps.cubes.access import OWNER, AccessDecision

MAX_SESSION_ID_CHARS = ChatSession._meta.get_field("id").max_length


@dataclass(frozen=True)
class ChatHistory:
    session: ChatSession | None  # None: the actor has no session yet
    total: int  # messages in the session
    messages: list[ChatMessage]  # the page asked for, oldest first
    offset: int = 0  # of the page's first message


def chat_sessions_of(*, actor: User) -> QuerySet[ChatSession]:
    return ChatSession.objects.filter(owner=actor)


def chat_session_get(*, actor: User, session_id, field: str = "session_id") -> ChatSession:
    # An id that cannot exist (too long, a NUL byte PostgreSQL cannot compare) never reaches SQL.
    valid = isinstance(session_id, str) and len(session_id) <= MAX_SESSION_ID_CHARS and "\x00" not in session_id
    session = chat_sessions_of(actor=actor).filter(pk=session_id).first() if valid else None
    if session is None:
        raise NotFound(f"Chat session {session_id!r} not found.", code="session_not_found", extra={"field": field})
    return session


def chat_session_access(*, actor: User, session_id) -> AccessDecision:
    """Chat sessions are private to their owner, for every action."""
    try:
        chat_session_get(actor=actor, session_id=session_id)
    except NotFound:
        return AccessDecision(False, "chat session not found")
    return AccessDecision(True, "owner of the chat session", OWNER)


def chat_session_list(*, actor: User) -> QuerySet[ChatSession]:
    """The actor's sessions, latest activity first, each with ``message_count``."""
    return chat_sessions_of(actor=actor).annotate(message_count=Count("messages")).order_by("-last_activity", "-pk")


def chat_session_latest(*, actor: User, client_key: str | None = None) -> ChatSession | None:
    """The actor's most recently active session (of that MCP client, when ``client_key`` is given)."""
    sessions = chat_sessions_of(actor=actor)
    if client_key is not None:
        sessions = sessions.filter(client_key=client_key)
    return sessions.order_by("-last_activity", "-pk").first()


def chat_messages(*, session: ChatSession) -> QuerySet[ChatMessage]:
    return ChatMessage.objects.filter(session=session).order_by("created_at", "id")


def chat_history(*, actor: User, session_id=None, limit=HISTORY_LIMIT.default, offset=0) -> ChatHistory:
    """A page of a session's messages, oldest first, from ``offset`` (None: the last ``limit`` messages);
    without ``session_id``, of the actor's latest session. Three queries whatever the page: the session, the
    count, the page."""
    limit = HISTORY_LIMIT.clean(limit, field="limit")
    if offset is not None:
        offset = OFFSET.clean(offset, field="offset")
    if session_id is None:
        session = chat_session_latest(actor=actor)
        if session is None:
            return ChatHistory(session=None, total=0, messages=[])
    else:
        session = chat_session_get(actor=actor, session_id=session_id)
    messages = chat_messages(session=session)
    total = messages.count()
    if offset is None:
        offset = max(0, total - limit)
    return ChatHistory(session=session, total=total, messages=list(messages[offset:offset + limit]), offset=offset)

"""temporary_scratchpad: short-term thoughts of one agent in one session, kept SCRATCHPAD_TTL_MINUTES.

A pad is keyed (user, session_id, agent_id). What an agent reads from it: its own items, the items its session's
other agents marked ``team`` or ``shared``, and the items any agent of the same user marked ``shared`` in any
session. Nothing crosses users. Clearing removes the agent's own items only. Each item's surprise (delta S) is
computed when it is stored, against the session's latest items and the nearest live node the user can read, as
for every other item of a session (apps/cognition/utl.py).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import (
    RECENT_ITEMS, SCRATCHPAD_AUTO_COMMIT, SCRATCHPAD_AUTO_COMMIT_DEFAULT, SCRATCHPAD_CONTENT_CHARS,
    SCRATCHPAD_ITEMS_SHOWN, SCRATCHPAD_TAGS, SCRATCHPAD_TTL_MINUTES, Privacy,
)
from apps.cognition.models import ScratchpadItem, SessionItem
from apps.cognition.services.curators import curator_scope
from apps.cognition.services.sessions import session_start
from apps.core.exceptions import InvalidInput
from apps.memories.embeddings import embed_texts
from apps.memories.selectors import memories_readable
from apps.memories.vectors import nearest_in_scope

AGENT_ID_CHARS = ScratchpadItem._meta.get_field("agent_id").max_length
TAG_CHARS = ScratchpadItem._meta.get_field("tags").base_field.max_length
# The pad's own id: the same (user, session, agent) always has the same one.
_PAD_NAMESPACE = uuid.UUID("6f1d8a52-3c4e-4f0b-9a51-2a7c0e5d9b13")


@dataclass(frozen=True)
class Scratchpad:
    pad_id: str
    items: list[ScratchpadItem]
    # Every item the agent can see (items holds the newest SCRATCHPAD_ITEMS_SHOWN of them).
    items_count: int
    stored: ScratchpadItem | None = None
    cleared: int = 0


def _key(*, session_id, agent_id) -> tuple[uuid.UUID, str]:
    try:
        session = uuid.UUID(str(session_id))
    except ValueError:
        raise InvalidInput("session_id must be a UUID: the session whose scratchpad this is.",
                           field="session_id") from None
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise InvalidInput("agent_id must name the agent whose scratchpad this is (its pad is its own).",
                           field="agent_id")
    if len(agent_id) > AGENT_ID_CHARS:
        raise InvalidInput(f"agent_id must be at most {AGENT_ID_CHARS} characters.", field="agent_id")
    return session, agent_id.strip()


def pad_id(*, actor: User, session_id: uuid.UUID, agent_id: str) -> str:
    return str(uuid.uuid5(_PAD_NAMESPACE, f"{actor.pk}:{session_id}:{agent_id}"))


def visible_items(*, actor: User, session_id: uuid.UUID, agent_id: str, now: datetime) -> QuerySet[ScratchpadItem]:
    own = Q(session_id=session_id, agent_id=agent_id)
    team = Q(session_id=session_id, privacy__in=[Privacy.TEAM, Privacy.SHARED])
    shared = Q(privacy=Privacy.SHARED)
    return ScratchpadItem.objects.filter(own | team | shared, owner=actor, expires_at__gt=now)


def _view(actor: User, session_id: uuid.UUID, agent_id: str, now: datetime, **extra) -> Scratchpad:
    visible = visible_items(actor=actor, session_id=session_id, agent_id=agent_id, now=now)
    newest = list(visible.order_by("-created_at", "-id")[:SCRATCHPAD_ITEMS_SHOWN])
    count = len(newest) if len(newest) < SCRATCHPAD_ITEMS_SHOWN else visible.count()
    return Scratchpad(pad_id=pad_id(actor=actor, session_id=session_id, agent_id=agent_id), items=newest[::-1],
                      items_count=count, **extra)


def scratchpad_retrieve(*, actor: User, session_id, agent_id, now: datetime | None = None) -> Scratchpad:
    """What the agent sees of its session's scratchpads (see the module), oldest first; expired items are gone."""
    session, agent = _key(session_id=session_id, agent_id=agent_id)
    return _view(actor, session, agent, now or timezone.now())


def scratchpad_clear(*, actor: User, session_id, agent_id, now: datetime | None = None,
                     curator: bool = False) -> Scratchpad:
    """Remove the agent's own items of this session (others' team and shared items stay: they are theirs).
    ``curator``: the pad of whichever user holds this session (a session is one user's), as that user would."""
    session, agent = _key(session_id=session_id, agent_id=agent_id)
    owner = curator_scope(actor=actor, curator=curator,
                          rows=ScratchpadItem.objects.filter(session_id=session, agent_id=agent))
    cleared, _ = ScratchpadItem.objects.filter(owner=owner, session_id=session, agent_id=agent).delete()
    return _view(owner, session, agent, now or timezone.now(), cleared=cleared)


def _clean_content(content) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("content is required to store a thought: the note to keep.", field="content")
    if len(content) > SCRATCHPAD_CONTENT_CHARS:
        raise InvalidInput(f"content must be at most {SCRATCHPAD_CONTENT_CHARS} characters: store a longer text "
                           "with store_memory.", field="content")
    return content


def _clean_tags(tags) -> list[str]:
    tags = list(tags or [])
    if len(tags) > SCRATCHPAD_TAGS:
        raise InvalidInput(f"tags holds at most {SCRATCHPAD_TAGS} tags.", field="tags")
    cleaned = []
    for index, tag in enumerate(tags):
        if not isinstance(tag, str) or not tag.strip() or len(tag) > TAG_CHARS:
            raise InvalidInput(f"Each tag must be a word or phrase of 1 to {TAG_CHARS} characters.",
                               field=f"tags[{index}]")
        if tag.strip() not in cleaned:
            cleaned.append(tag.strip())
    return cleaned


def scratchpad_store(*, actor: User, session_id, agent_id, content, privacy: str = Privacy.PRIVATE, tags=None,
                     auto_commit_threshold: float | None = None, now: datetime | None = None) -> Scratchpad:
    """Keep a thought in the agent's pad for SCRATCHPAD_TTL_MINUTES, with its surprise against the session. The
    session is started under ``session_id`` when it is new (another user's session is not found)."""
    session_uuid, agent = _key(session_id=session_id, agent_id=agent_id)
    content = _clean_content(content)
    if privacy not in Privacy.values:
        raise InvalidInput(f"privacy must be one of {', '.join(Privacy.values)}.", field="privacy")
    tags = _clean_tags(tags)
    threshold = SCRATCHPAD_AUTO_COMMIT.clean(auto_commit_threshold, field="auto_commit_threshold")
    now = now or timezone.now()
    session = session_start(actor=actor, session_id=session_uuid, agent_id=agent)
    [vector] = embed_texts([content])
    recent = [np.asarray(value, dtype=np.float64) for value in SessionItem.objects.filter(session=session)
              .order_by("-created_at").values_list("vector", flat=True)[:RECENT_ITEMS]]
    nearest = nearest_in_scope(memories_readable(actor=actor), vector, limit=1)
    surprise = utl.delta_s(vector, recent, 1.0 - float(nearest[0][1]) if nearest else None)
    item = ScratchpadItem.objects.create(
        owner=actor, session_id=session_uuid, agent_id=agent, privacy=privacy, content=content, tags=tags,
        delta_s=round(surprise, 6), auto_commit_threshold=SCRATCHPAD_AUTO_COMMIT_DEFAULT if threshold is None
        else threshold, expires_at=now + timedelta(minutes=SCRATCHPAD_TTL_MINUTES),
    )
    return _view(actor, session_uuid, agent, now, stored=item)

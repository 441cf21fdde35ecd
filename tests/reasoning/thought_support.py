"""Helpers for tests of thought sessions (other reasoning tests may import them too).

Everything goes through the real services: the embedded PostgreSQL and the real MiniLM model.
"""
from __future__ import annotations

from apps.reasoning.services.thoughts import ThoughtAdded, thought_add

CLIENT = "token-1:mcp-session-1"


def think(actor, number: int, text: str | None = None, *, total: int = 5, more: bool = True,
          client_key: str = CLIENT, **fields) -> ThoughtAdded:
    """Add thought ``number`` for ``client_key`` (text defaults to one naming the number)."""
    return thought_add(actor=actor, client_key=client_key, thought=text or f"Step {number}: reasoning about the cache.",
                       thought_number=number, total_thoughts=total, next_thought_needed=more, **fields)


def branched_session(actor, *, client_key: str = CLIENT):
    """A session with the seed's four shapes: main line 1-2, a branch from 2, a revision of 2, a final thought.
    Returns the ThoughtAdded of each step, in order."""
    steps = [
        think(actor, 1, "First, let me understand the problem...", client_key=client_key,
              session_title="Debugging memory leak", session_tags=["project:myapp", "task:debugging"]),
        think(actor, 2, "The leak grows with every request: the cache never evicts.", client_key=client_key),
        think(actor, 3, "Alternative approach: what if we use caching?", client_key=client_key,
              branch_from_thought=2, branch_id="caching-approach"),
        think(actor, 4, "Actually, my earlier analysis missed a key factor...", client_key=client_key,
              is_revision=True, revises_thought=2),
        think(actor, 5, "Bound the cache with an LRU policy and a size limit.", client_key=client_key, more=False),
    ]
    return steps

"""A user's queries (retrieval and search), told to whoever listens: a dream stops when its owner asks something.

The memory services announce each query before they run it; apps above memories (cognition's dream) ``register``
a listener at start-up, so memories never import them. A listener must be quick: the query waits for it."""
from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

Listener = Callable[[int], None]
_listeners: list[Listener] = []


def register(listener: Listener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def announce(user_id: int) -> None:
    for listener in _listeners:
        try:
            listener(user_id)
        except Exception:  # a query is never refused because a listener failed
            logger.exception("A query listener failed for user %s", user_id)

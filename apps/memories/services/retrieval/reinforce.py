"""Reinforcement: every memory a retrieval or search returns is accessed, so its access count rises and its
strength is reinforced (callers that only read context, like chat, pass reinforce=False)."""
from __future__ import annotations

from apps.memories.services.lifecycle import memory_reinforce

from .scoring import ScoredMemory


def reinforce_returned(items: list[ScoredMemory]) -> None:
    memory_reinforce(memory_ids=[item.memory.pk for item in items])

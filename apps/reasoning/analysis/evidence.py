"""The caller's memories that bear on a problem: the evidence every reasoning analysis draws on.

Evidence comes from the memory core's retrieval (memory_retrieve: hybrid dense + lexical over the cubes the actor
may read, every kind of node: memories, Mind decisions, issues, sharp edges, episodes, earlier thoughts), with
``reinforce=False``: consulting a memory as evidence is not the user recalling it, so it neither counts as an
access nor strengthens the memory.

Relevance floor. Retrieval ranks every memory in scope, related or not, and its lexical score is relative to the
best match of the query, so one shared word can look like a perfect lexical match. A memory is evidence only when
its meaning is close: cosine similarity >= STRONG_SIMILARITY on its own (the threshold search uses for meaning-only
matches), or >= SHARED_WORD_SIMILARITY when it also shares a word with the text. On MiniLM, unrelated sentences
sit around 0-0.15 and paraphrases above 0.5.
"""
from __future__ import annotations

from apps.accounts.models import User
from apps.memories.services import memory_retrieve
from apps.memories.services.retrieval import SEARCH_MIN_SIMILARITY
from apps.memories.validation import MAX_QUERY_CHARS
from apps.reasoning.analysis.common import EvidenceItem

STRONG_SIMILARITY = SEARCH_MIN_SIMILARITY
SHARED_WORD_SIMILARITY = 0.25
# Retrieval is asked for more than the limit, since the floor removes some.
CANDIDATES_PER_ITEM = 2
# What of a node's metadata says which Mind entity it stands for.
ENTITY_KEYS = ("entity", "entity_id", "project_id")


def gather_evidence(*, actor: User, text: str, limit: int = 6) -> list[EvidenceItem]:
    """Up to ``limit`` of the actor's readable memories most relevant to ``text``, by relevance (retrieval ranks by
    a composite that also weighs salience and recency); [] for no text."""
    query = " ".join(text.replace("\x00", " ").split())[:MAX_QUERY_CHARS]
    if not query:
        return []
    ranked = memory_retrieve(actor=actor, text=query, limit=limit * CANDIDATES_PER_ITEM, reinforce=False).items
    relevant = sorted((item for item in ranked if _is_relevant(dense=item.dense, lexical=item.lexical)),
                      key=lambda item: item.relevance, reverse=True)
    return [
        EvidenceItem(id=str(item.memory.pk), kind=item.memory.kind, content=item.memory.content, score=item.relevance,
                     metadata={key: item.memory.metadata[key] for key in ENTITY_KEYS if key in item.memory.metadata})
        for item in relevant[:limit]
    ]


def _is_relevant(*, dense: float, lexical: float) -> bool:
    return dense >= STRONG_SIMILARITY or (lexical > 0 and dense >= SHARED_WORD_SIMILARITY)

"""Context Graph's search_graph: the memory core's fused retrieval (dense + lexical + graph signals), narrowed by the
search's filters and perspective lock (selectors/graph.node_filters), recorded as a query of the caller's session
so that surprise, entropy and coherence follow what the agent asks. The session's neuromodulation re-ranks what
retrieval found (services/neuromod.py)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition.limits import SEARCH_TOP_K
from apps.cognition.models import CgSession, NodeProfile
from apps.cognition.selectors.graph import node_filters
from apps.cognition.services.neuromod import Levels, candidates, levels_of, rerank
from apps.cognition.services.sessions import session_record, session_start
from apps.core.commits import unflushed_commit
from apps.core.exceptions import InvalidInput
from apps.memories.services import memory_reinforce, memory_retrieve
from apps.memories.services.retrieval import ScoredMemory
from apps.memories.validation import MAX_QUERY_CHARS


@dataclass(frozen=True)
class NodeSearch:
    items: list[ScoredMemory]
    session: CgSession
    levels: Levels


def node_search(*, actor: User, query, top_k=None, min_importance=None, johari_quadrants=None, created_after=None,
                domain=None, agent_ids=None, exclude_agent_ids=None) -> NodeSearch:
    """The ``top_k`` best nodes for ``query`` among the live memories the actor may read: retrieval's composite
    score, re-ranked with the neuromodulation of the actor's latest session (started if they have none) over
    ``top_k`` + breadth candidates. What it returns counts as accessed (the memory core reinforces it), and the
    query becomes an item of that session with the nodes it activated."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query cannot be empty: say what to search for.", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query has at most {MAX_QUERY_CHARS} characters.", field="query")
    limit = SEARCH_TOP_K.clean(top_k, field="top_k")
    filters = node_filters(min_importance=min_importance, johari_quadrants=johari_quadrants,
                           created_after=created_after, domain=domain, agent_ids=agent_ids,
                           exclude_agent_ids=exclude_agent_ids)
    session = session_start(actor=actor)
    levels = levels_of(session)
    found = memory_retrieve(actor=actor, text=query, filters=filters, limit=candidates(limit, levels),
                            reinforce=False)
    items = rerank(found.items, levels=levels, score=lambda item: item.score,
                   importance=lambda item: item.memory.importance, limit=limit)
    # Only what is returned counts as accessed, not the candidates the re-rank left out.
    memory_reinforce(memory_ids=[item.memory.pk for item in items])
    session_record(session=session, kind="query", text=query.strip(), vector=found.query_vector,
                   activated=[(item.memory.pk, item.score) for item in items],
                   nearest_node_cosine=found.best_similarity)
    # A node's profile counts its activations (a memory without one has its access count, which retrieval raised).
    # Bookkeeping of a read, as the retrieval's reinforcement: it need not wait for the WAL flush.
    NodeProfile.objects.filter(unflushed_commit(), memory_id__in=[item.memory.pk for item in items]).update(
        activations=F("activations") + 1, last_activated_at=timezone.now())
    return NodeSearch(items=items, session=session, levels=levels)

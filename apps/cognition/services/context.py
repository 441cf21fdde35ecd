"""inject_context: the context an agent asks for, from the graph, within its token budget.

1. Retrieval: memory_retrieve (dense + lexical + graph, fused) ranks a pool sized by ``priority`` (CONTEXT_POOL:
   low 5, normal 10, high 20, critical 40 memories), chosen by the session's neuromodulation from the pool and
   breadth more candidates (services/neuromod.py); the 1-hop expansion adds, over links either way, up to as
   many live neighbours the actor may read, each scored as its best retrieved neighbour's score times the link's
   weight; all are ordered by the same re-rank.
2. Text: apps/cognition/distill.py writes the nodes out within max_tokens (raw or distilled, with citation tags).
3. Session: the query is recorded in the Context Graph session (surprise, entropy, coherence, learning score) with
   the nodes it activated and their scores; their profiles count the activation.
4. Conflicts: two retrieved nodes with cosine > CONFLICT_COSINE conflict when no path of CONFLICT_HOPS links or
   fewer joins them, or when their texts clash (apps/cognition/conflicts.py); each conflicting pair gets an
   ambiguity_detected task in the curation inbox.
5. Tool gating: entropy above GATING_ENTROPY warns that retrieval quality may be low.
6. Bundles, only those asked for: the 2-hop neighbourhood (get_neighborhood's), causal chains, entailment cones, the
   conflicting pairs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import F
from django.utils import timezone

from apps.accounts.models import User
from apps.cognition import conflicts as clashes
from apps.cognition.citations import citation_tag
from apps.cognition.distill import Distilled, Source, distill
from apps.cognition.limits import (
    CONFLICT_COSINE, CONFLICT_HOPS, CONFLICT_PAIRS, CONTEXT_POOL, CONTEXT_QUERY_CHARS, CONTEXT_TOKENS, GATING_ENTROPY,
    NEIGHBORHOOD_HOPS, NEIGHBORHOOD_NODES, VERBOSITY, ContextMetadata, DistillationMode, Priority,
)
from apps.cognition.models import CgSession, CurationTask, NodeProfile, SessionItem
from apps.cognition.representations import edge_summary, node_summary
from apps.cognition.selectors.bundles import (
    Edge, causal_paths_list, entailment_cones_list, links_touching, visible_nodes,
)
from apps.cognition.selectors.graph import node_neighborhood
from apps.cognition.services.inbox import Proposal, tasks_open
from apps.cognition.services.neuromod import Levels, candidates, levels_of, rerank
from apps.cognition.services.sessions import Recorded, session_record, session_start
from apps.core.commits import unflushed_commit
from apps.core.exceptions import InvalidInput
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.selectors import memories_readable
from apps.memories.services import memory_reinforce, memory_retrieve
from apps.memories.validation import MAX_QUERY_CHARS

# Tools that lower entropy, as the tool-gating warning suggests them: the seed's list, all served now.
ENTROPY_TOOLS = ("generate_search_plan", "epistemic_action", "expand_causal_path")
INSIGHT_LINKS = 3


@dataclass(frozen=True)
class Node:
    """A retrieved node: its row's fields, stored vector and profile's surprise (None without a profile)."""

    node_id: str
    content: str
    kind: str
    importance: float
    vector: np.ndarray | None
    delta_s: float | None
    score: float


@dataclass(frozen=True)
class ConflictPair:
    nodes: tuple[str, str]
    cosine: float
    reason: str  # "negation", "numbers" or "unconnected"
    topic: str

    def as_dict(self) -> dict:
        return {"nodes": list(self.nodes), "cosine": round(self.cosine, 4), "reason": self.reason,
                "topic": self.topic}


@dataclass
class InjectedContext:
    session: CgSession
    distilled: Distilled
    nodes: list[Node]
    recorded: Recorded
    conflicts: list[ConflictPair]
    bundled: dict | None
    levels: Levels | None = None
    latency_ms: int = 0

    @property
    def gated(self) -> bool:
        return self.recorded.entropy > GATING_ENTROPY

    def as_dict(self) -> dict:
        """The seed's answer (with the session it ran in)."""
        data = {
            "context": self.distilled.text,
            "tokens_used": self.distilled.tokens_used,
            "tokens_before_distillation": self.distilled.tokens_before,
            "distillation_applied": self.distilled.applied,
            "compression_ratio": self.distilled.compression_ratio,
            "nodes_retrieved": [node.node_id for node in self.nodes],
            "utl_metrics": {"entropy": round(self.recorded.entropy, 4), "coherence": round(self.recorded.coherence, 4),
                            "learning_score": round(self.recorded.learning_score, 4)},
            "latency_ms": self.latency_ms,
            "conflict_alert": self._conflict_alert(),
            "tool_gating_warning": self._gating_warning(),
            "session_id": str(self.session.pk),
        }
        if self.bundled is not None:
            data["bundled_metadata"] = self.bundled
        if self.levels is not None:
            data["neuromodulation"] = self.levels.applied()
        return data

    def _conflict_alert(self) -> dict:
        if not self.conflicts:
            return {"has_conflict": False, "conflicting_nodes": [], "topic": "", "suggested_action": "ignore",
                    "message": "No conflicting memories among the retrieved nodes."}
        strongest = self.conflicts[0]
        nodes = list(dict.fromkeys(node for pair in self.conflicts for node in pair.nodes))
        clash = strongest.reason != "unconnected"
        return {
            "has_conflict": True,
            "conflicting_nodes": nodes,
            "topic": strongest.topic,
            # Contradicting texts need someone who knows which is true; similar, unconnected ones may be one memory.
            "suggested_action": "ask_user" if clash else "merge_concepts",
            "message": f"Warning: Found conflicting memories about [{strongest.topic or 'one subject'}]. "
                       + ("Ask the user which is right, then annotate_node the other as deprecated."
                          if clash else "Consider merge_concepts or ask user.")
                       + f" {len(self.conflicts)} pair(s); see the curation inbox.",
        }

    def _gating_warning(self) -> dict:
        entropy = round(self.recorded.entropy, 4)
        if not self.gated:
            return {"triggered": False, "entropy_score": entropy, "message": "", "suggested_tools": [],
                    "auto_retry_after": False}
        return {"triggered": True, "entropy_score": entropy, "suggested_tools": list(ENTROPY_TOOLS),
                "auto_retry_after": False,
                "message": f"Retrieval quality may be low due to high entropy ({entropy:.2f}). Suggest calling "
                           "epistemic_action first to reduce entropy before retrying."}


def context_inject(*, actor: User, query, max_tokens=None, session_id=None, priority=None, distillation_mode=None,
                   include_metadata=None, verbosity_level=None) -> InjectedContext:
    started = time.perf_counter()
    query = _clean_query(query)
    max_tokens = CONTEXT_TOKENS.clean(max_tokens, field="max_tokens")
    priority = _choice(priority, Priority, field="priority", default=Priority.NORMAL)
    mode = _choice(distillation_mode, DistillationMode, field="distillation_mode", default=DistillationMode.AUTO)
    metadata = _clean_metadata(include_metadata)
    verbosity = VERBOSITY.clean(verbosity_level, field="verbosity_level")
    session = session_start(actor=actor, session_id=session_id)

    pool = CONTEXT_POOL[priority]
    levels = levels_of(session)
    # The model reads far less than MAX_QUERY_CHARS of a query; a longer one is matched by its start.
    retrieved = memory_retrieve(actor=actor, text=query[:MAX_QUERY_CHARS], limit=candidates(pool, levels),
                                reinforce=False)
    chosen = rerank(retrieved.items, levels=levels, score=lambda item: item.score,
                    importance=lambda item: item.memory.importance, limit=pool)
    # Only the pool counts as accessed, not the candidates the re-rank left out.
    memory_reinforce(memory_ids=[item.memory.pk for item in chosen])
    seeds = {str(item.memory.pk): item.score for item in chosen}
    seed_edges, nodes = _expanded(actor, seeds, pool, levels) if seeds else ([], [])
    # The model reads a query's first 256 tokens, well within MAX_QUERY_CHARS: retrieval's vector is the query's.
    query_vector = np.asarray(retrieved.query_vector, dtype=np.float64)

    similar = _similar_pairs(nodes)
    beyond_seeds = any(a.node_id not in seeds or b.node_id not in seeds for a, b, _ in similar)
    edges = _edges_of(nodes, seeds, seed_edges, needed=verbosity >= 2 or beyond_seeds)
    insights = _insights(actor, nodes, edges) if verbosity >= 2 else {}
    distilled = distill(
        sources=[Source(node.node_id, node.content, node.score, insights.get(node.node_id, ""), node.vector)
                 for node in nodes],
        query_vector=query_vector, max_tokens=max_tokens, mode=mode, verbosity=verbosity)

    recorded = session_record(session=session, kind=SessionItem.Kind.QUERY, text=query, vector=query_vector.tolist(),
                              activated=[(node.node_id, node.score) for node in nodes],
                              nearest_node_cosine=retrieved.best_similarity)
    # Only nodes with a profile count activations; the expansion read which have one (delta S is known): plain
    # memories cost no statement.
    profiled = [node.node_id for node in nodes if node.delta_s is not None]
    if profiled:
        NodeProfile.objects.filter(unflushed_commit(), memory_id__in=profiled).update(
            activations=F("activations") + 1, last_activated_at=timezone.now())  # a read's bookkeeping: no WAL wait

    pairs = _conflicts(similar, edges)
    _open_tasks(actor, pairs, query)
    bundled = _bundle(actor, metadata, session, nodes, pairs) if metadata else None
    result = InjectedContext(session=session, distilled=distilled, nodes=nodes, recorded=recorded, conflicts=pairs,
                             bundled=bundled, levels=levels)
    result.latency_ms = round((time.perf_counter() - started) * 1000)
    return result


# --- arguments -------------------------------------------------------------------------------------------------------

def _clean_query(query) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be a non-empty text: what you want context about.", field="query")
    if len(query) > CONTEXT_QUERY_CHARS:
        raise InvalidInput(f"query has at most {CONTEXT_QUERY_CHARS} characters, got {len(query)}: shorten it.",
                           field="query")
    if "\x00" in query:
        raise InvalidInput("query cannot contain NUL characters.", field="query")
    return query.strip()


def _choice(value, choices, *, field: str, default: str) -> str:
    if value is None:
        return default
    if value not in choices.values:
        raise InvalidInput(f"{field} must be one of {', '.join(choices.values)}, got {value!r}.", field=field)
    return value


def _clean_metadata(value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise InvalidInput(f"include_metadata must be a list of {', '.join(ContextMetadata.values)}.",
                           field="include_metadata")
    for index, item in enumerate(value):
        if item not in ContextMetadata.values:
            raise InvalidInput(f"include_metadata[{index}] must be one of {', '.join(ContextMetadata.values)}, "
                               f"got {item!r}.", field=f"include_metadata[{index}]")
    return list(dict.fromkeys(value))


# --- retrieval and expansion -----------------------------------------------------------------------------------------

def _expanded(actor: User, seeds: dict[str, float], pool: int, levels: Levels) -> tuple[list[Edge], list[Node]]:
    """The links at either end of the retrieved nodes (strongest first), and the retrieved nodes with up to ``pool``
    of their live, readable neighbours, best first by the re-rank: one statement for both."""
    seed_edges, found = _seed_graph(actor, list(seeds))
    reached: dict[str, float] = {}
    for edge in seed_edges:
        for node, other in ((edge.source, edge.target), (edge.target, edge.source)):
            if node in seeds and other not in seeds:
                reached[other] = max(reached.get(other, 0.0), seeds[node] * edge.weight)
    neighbours = sorted((node for node in reached if node in found), key=lambda node: -reached[node])[:pool]
    scores = {**{node: score for node, score in seeds.items() if node in found},
              **{node: reached[node] for node in neighbours}}
    ordered = rerank(list(scores), levels=levels, score=scores.__getitem__, importance=lambda node: found[node][2])
    return seed_edges, [Node(node, found[node][0], found[node][1], found[node][2],
                             None if found[node][3] is None else _vector(found[node][3]), found[node][4],
                             round(scores[node], 6))
                        for node in ordered]


def _seed_graph(actor: User, seeds: list[str]) -> tuple[list[Edge], dict[str, tuple]]:
    """The links touching ``seeds``, and the live rows the actor may read among the seeds and the nodes at the links'
    other ends (id -> content, kind, importance, vector as text, profile's delta S): a read of the links and one of
    the nodes they reach were two round trips on every call. The vector as text is parsed by numpy: pgvector's own
    parser (a float() per component) cost more than the statement."""
    memory, link = Memory._meta.db_table, MemoryLink._meta.db_table
    vector, profile = MemoryVector._meta.db_table, NodeProfile._meta.db_table
    scope_sql, scope_params = memories_readable(actor=actor).order_by().values("pk").query.sql_with_params()
    sql = (f"WITH touching AS MATERIALIZED (SELECT source_id, target_id, link_type, weight FROM {link} "
           f"WHERE source_id = ANY(%s::uuid[]) OR target_id = ANY(%s::uuid[])) "
           f"SELECT 'edge', source_id::text, target_id::text, link_type, weight, NULL, NULL FROM touching "
           f"UNION ALL SELECT 'node', m.id::text, m.kind, m.content, m.importance, v.embedding::text, p.delta_s "
           f"FROM (SELECT unnest(%s::uuid[]) UNION SELECT source_id FROM touching UNION SELECT target_id FROM touching) "
           f"ends (id) JOIN {memory} m ON m.id = ends.id LEFT JOIN {vector} v ON v.memory_id = m.id "
           f"LEFT JOIN {profile} p ON p.memory_id = m.id WHERE m.id IN ({scope_sql})")
    with connection.cursor() as cursor:
        cursor.execute(sql, [seeds, seeds, seeds, *scope_params])
        rows = cursor.fetchall()
    edges = sorted((Edge(a, b, kind, weight) for row, a, b, kind, weight, _, _ in rows if row == "edge"),
                   key=lambda edge: -edge.weight)
    return edges, {a: (content, kind, importance, embedding, delta_s)
                   for row, a, kind, content, importance, embedding, delta_s in rows if row == "node"}


def _vector(text: str) -> np.ndarray:
    return np.fromstring(text[1:-1], dtype=np.float64, sep=",")


def _edges_of(nodes: list[Node], seeds: dict[str, float], seed_edges: list[Edge], *, needed: bool) -> list[Edge]:
    """The links at either end of every retrieved node: the seeds' are loaded already, the neighbours' only when
    insights or a conflict check need them."""
    others = [node.node_id for node in nodes if node.node_id not in seeds]
    if not needed or not others:
        return seed_edges
    known = {(edge.source, edge.target) for edge in seed_edges}
    return seed_edges + [edge for edge in links_touching(others) if (edge.source, edge.target) not in known]


def _similar_pairs(nodes: list[Node]) -> list[tuple[Node, Node, float]]:
    """The pairs of retrieved nodes whose vectors' cosine is above CONFLICT_COSINE, with it."""
    with_vectors = [node for node in nodes if node.vector is not None]
    if len(with_vectors) < 2:
        return []
    matrix = np.array([node.vector for node in with_vectors])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1.0, norms)
    similarity = matrix @ matrix.T
    return [(with_vectors[i], with_vectors[j], float(similarity[i, j]))
            for i, j in zip(*np.nonzero(np.triu(similarity, k=1) > CONFLICT_COSINE))]


# --- insights (verbosity 2) ------------------------------------------------------------------------------------------

def _insights(actor: User, nodes: list[Node], edges: list[Edge]) -> dict[str, str]:
    """Per node: importance, surprise (delta S, when Context Graph stored it) and its strongest links to nodes the
    actor may read."""
    ends = {edge.other(node.node_id) for node in nodes for edge in edges
            if node.node_id in (edge.source, edge.target)}
    visible = set(visible_nodes(actor=actor, node_ids=ends)) | {node.node_id for node in nodes}
    lines = {}
    for node in nodes:
        own = [edge for edge in edges if node.node_id in (edge.source, edge.target)
               and edge.other(node.node_id) in visible]
        shown = ", ".join(
            f"{edge.edge_type} {'->' if edge.source == node.node_id else '<-'} "
            f"{citation_tag(edge.other(node.node_id))} {edge.weight:.2f}"
            for edge in sorted(own, key=lambda edge: -edge.weight)[:INSIGHT_LINKS])
        surprise = f"{node.delta_s:.2f}" if node.delta_s is not None else "n/a"
        count = f"{len(own)} link" + ("" if len(own) == 1 else "s")
        lines[node.node_id] = (f"(importance {node.importance:.2f}; delta S {surprise}; {count}"
                               + (f": {shown}" if shown else "") + ")")
    return lines


# --- conflicts -------------------------------------------------------------------------------------------------------

def _conflicts(similar: list[tuple[Node, Node, float]], edges: list[Edge]) -> list[ConflictPair]:
    """The similar pairs that clash, or that no path of CONFLICT_HOPS links joins; clashes first, then the most
    similar, CONFLICT_PAIRS at most."""
    neighbours: dict[str, set[str]] = {}
    for edge in edges:
        neighbours.setdefault(edge.source, set()).add(edge.target)
        neighbours.setdefault(edge.target, set()).add(edge.source)
    found = []
    for a, b, similarity in similar:
        clash = clashes.clash(a.content, b.content)
        if clash is not None:
            found.append(ConflictPair((a.node_id, b.node_id), similarity, clash.reason, clash.topic))
        elif not _joined(a.node_id, b.node_id, neighbours):
            found.append(ConflictPair((a.node_id, b.node_id), similarity, "unconnected",
                                      clashes.topic(a.content, b.content)))
    found.sort(key=lambda pair: (pair.reason == "unconnected", -pair.cosine))
    return found[:CONFLICT_PAIRS]


def _joined(a: str, b: str, neighbours: dict[str, set[str]]) -> bool:
    """A path of at most CONFLICT_HOPS links between a and b, either direction."""
    frontier, seen = {a}, {a}
    for _ in range(CONFLICT_HOPS):
        frontier = {step for node in frontier for step in neighbours.get(node, ())} - seen
        if b in frontier:
            return True
        seen |= frontier
    return False


REASONS = {
    "negation": "one says the opposite of the other (a negation in one only)",
    "numbers": "they give different numbers for the same thing",
    "unconnected": f"no path of {CONFLICT_HOPS} links or fewer joins them",
}


def _open_tasks(actor: User, pairs: list[ConflictPair], query: str) -> None:
    """An ambiguity_detected task for each conflicting pair (the inbox keeps one open task per pair)."""
    proposals = [
        Proposal(pair.nodes, f"Retrieved together for \"{query[:80]}\" (cosine {pair.cosine:.2f}) about "
                             f"[{pair.topic}]: {REASONS[pair.reason]}.",
                 # A contradiction is settled by marking the wrong one; similar unconnected nodes may be one memory.
                 CurationTask.SuggestedTool.MERGE_CONCEPTS if pair.reason == "unconnected"
                 else CurationTask.SuggestedTool.ANNOTATE_NODE)
        for pair in pairs
    ]
    tasks_open(owner=actor, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED, proposals=proposals)


# --- bundles ---------------------------------------------------------------------------------------------------------

def _bundle(actor: User, metadata: list[str], session: CgSession, nodes: list[Node],
            pairs: list[ConflictPair]) -> dict:
    node_ids = [node.node_id for node in nodes]
    bundled: dict = {}
    if ContextMetadata.NEIGHBORHOOD in metadata:
        # get_neighborhood's, around the best nodes this query activated (the session's latest item).
        found = node_neighborhood(actor=actor, session_id=session.pk, max_hops=NEIGHBORHOOD_HOPS.default,
                                  max_nodes=NEIGHBORHOOD_NODES.high)
        bundled["neighborhood"] = {"nodes": [node_summary(memory, score) for memory, score in found.nodes],
                                   "edges": [edge_summary(*edge) for edge in found.edges],
                                   "focal_point": found.focal_point}
    if ContextMetadata.CAUSAL_LINKS in metadata:
        bundled["causal_links"] = causal_paths_list(actor=actor, node_ids=node_ids)
    if ContextMetadata.ENTAILMENT_CONES in metadata:
        bundled["entailment_cones"] = entailment_cones_list(actor=actor, node_ids=node_ids)
    if ContextMetadata.CONFLICTS in metadata:
        bundled["conflicts"] = [pair.as_dict() for pair in pairs]
    return bundled

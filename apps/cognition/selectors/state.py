"""What the state tools read (docs/context_graph.md, "Neuromodulation and state"): a session's UTL status, the
neuromodulation of a session (services/neuromod.py computes the levels), and the homeostasis of the caller's graph
in a fixed number of statements whatever its size. Every read starts from the actor: their sessions, their tasks,
the live memories of the cubes they may read."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import Johari, Stage
from apps.cognition.models import CgSession, CurationTask, Event, NodeProfile, SessionItem
from apps.cognition.services.neuromod import Levels, levels_of
from apps.cognition.services.sessions import session_get
from apps.core.exceptions import InvalidInput
from apps.cubes.access import cube_ids_readable
from apps.memories.models import Memory, MemoryLink

# utl_status lists this many of the session's latest items, each with its first few activated nodes.
UTL_ITEMS = 20
UTL_ITEM_NODES = 5
UTL_TEXT_CHARS = 300
# A session's Johari quadrant: surprise above this is high, coherence above this is high.
JOHARI_SPLIT = 0.5
# A node this important that sits on a directed causal cycle, or in an open conflict task, is a suspect.
SUSPECT_IMPORTANCE = 0.7
# Cycles are looked for up to this many causal links (query_causal's horizon), from at most this many nodes.
CYCLE_HOPS = 6
CYCLE_STARTS = 1000
SUSPECTS_LISTED = 20
# Importance variance at which balance counts 0: the gardener scales importance toward 0.5 above it (issue 20).
VARIANCE_LIMIT = 0.15
# The Event detail a homeostatic scaling of importance writes (the gardener's), read for last_scaling_time.
SCALING_OPERATION = "importance_scaling"
CONFLICT_TASKS = (CurationTask.TaskType.AMBIGUITY_DETECTED, CurationTask.TaskType.SEMANTIC_CANCER)


# --- utl_status -----------------------------------------------------------------------------------------------

def johari_of(*, surprise: float, coherence: float) -> str:
    """open: expected and coherent; blind: surprising and incoherent; hidden: expected but incoherent; unknown:
    surprising yet coherent (the frontier)."""
    surprising, coherent = surprise > JOHARI_SPLIT, coherence > JOHARI_SPLIT
    if coherent:
        return Johari.UNKNOWN if surprising else Johari.OPEN
    return Johari.BLIND if surprising else Johari.HIDDEN


@dataclass(frozen=True)
class UtlStatus:
    session: CgSession
    stage: Stage
    johari: str
    entropy_high: bool
    coherence_low: bool
    items: list[SessionItem]


def utl_status_get(*, actor: User, session_id) -> UtlStatus:
    """A session's UTL state: its cached entropy, coherence and learning score, lifecycle stage, Johari quadrant
    and latest UTL_ITEMS items (two queries). Another user's session is not found, as an unknown one is."""
    if session_id is None:
        raise InvalidInput("session_id is required: the session whose learning state to read.", field="session_id")
    session = session_get(actor=actor, session_id=session_id)
    stage = utl.stage_of(session.interactions)
    items = list(SessionItem.objects.filter(session=session).order_by("-created_at", "-id")
                 .only("kind", "text", "delta_s", "activated", "created_at")[:UTL_ITEMS])
    return UtlStatus(session=session, stage=stage, johari=johari_of(surprise=session.entropy,
                                                                    coherence=session.coherence),
                     entropy_high=utl.entropy_is_high(session.entropy, stage),
                     coherence_low=utl.coherence_is_low(session.coherence, stage), items=items)


# --- get_neuromodulation ----------------------------------------------------------------------------------------

def neuromodulation_get(*, actor: User, session_id=None) -> Levels:
    """The levels of the actor's session ``session_id`` (their latest without it; at rest without any): one
    query. Another user's session is not found, as an unknown one is."""
    return levels_of(session_get(actor=actor, session_id=session_id))


# --- homeostatic_status -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Suspect:
    node_id: str
    importance: float
    reasons: tuple[str, ...]  # "causal_cycle", "conflict"


@dataclass(frozen=True)
class Homeostasis:
    nodes: int
    edges: int
    mean_importance: float
    importance_variance: float
    important_nodes: int
    linked_nodes: int
    quarantined_nodes: int
    conflicted_nodes: int
    suspects: list[Suspect]
    last_scaling_time: datetime | None

    @property
    def parts(self) -> dict[str, float]:
        """health_score's four parts, each 0-1 (all 1 for an empty graph: nothing is wrong with it)."""
        if not self.nodes:
            return {"balance": 1.0, "connectedness": 1.0, "consistency": 1.0, "immunity": 1.0}
        flagged = min(self.nodes, self.quarantined_nodes + len(self.suspects))
        return {"balance": 1.0 - min(1.0, self.importance_variance / VARIANCE_LIMIT),
                "connectedness": self.linked_nodes / self.nodes,
                "consistency": 1.0 - min(self.nodes, self.conflicted_nodes) / self.nodes,
                "immunity": 1.0 - flagged / self.nodes}

    @property
    def health_score(self) -> float:
        parts = self.parts
        return sum(parts.values()) / len(parts)


def homeostasis_get(*, actor: User) -> Homeostasis:
    """The health of the live graph the actor may read: its importance distribution, links, quarantined nodes,
    nodes in open conflict tasks, and the suspects (important nodes on a directed causal cycle or in an open
    conflict task). Four queries whatever the graph's size."""
    cubes = [str(cube) for cube in cube_ids_readable(actor=actor).values_list("id", flat=True)]
    params = {"cubes": cubes, "owner": actor.pk, "open": CurationTask.Status.OPEN, "types": list(CONFLICT_TASKS),
              "important": SUSPECT_IMPORTANCE, "hops": CYCLE_HOPS, "starts": CYCLE_STARTS,
              "causal": MemoryLink.LinkType.CAUSAL}
    with connection.cursor() as cursor:
        cursor.execute(_figures_sql(), params)
        nodes, mean, variance, important, linked, quarantined, edges, conflicted = cursor.fetchone()
        cursor.execute(_suspects_sql(), params)
        found: dict[str, tuple[float, set[str]]] = {}
        for reason, node_id, importance in cursor.fetchall():
            found.setdefault(node_id, (importance, set()))[1].add(reason)
    suspects = sorted((Suspect(node_id, float(importance), tuple(sorted(reasons)))
                       for node_id, (importance, reasons) in found.items()),
                      key=lambda suspect: (-suspect.importance, suspect.node_id))
    scaled = (Event.objects.filter(owner=actor, detail__operation=SCALING_OPERATION).order_by("-created_at")
              .values_list("created_at", flat=True).first())
    return Homeostasis(nodes=nodes, edges=edges, mean_importance=float(mean), importance_variance=float(variance),
                       important_nodes=important, linked_nodes=linked, quarantined_nodes=quarantined,
                       conflicted_nodes=conflicted, suspects=suspects, last_scaling_time=scaled)


MEMORIES, LINKS = Memory._meta.db_table, MemoryLink._meta.db_table
PROFILES, TASKS = NodeProfile._meta.db_table, CurationTask._meta.db_table


def _live(alias: str) -> str:
    return f"{alias}.cube_id = ANY(%(cubes)s::text[]) AND {alias}.deleted_at IS NULL"


def _quarantine_sql() -> str:
    # NodeProfile.quarantined comes with the immune system (issue 20); before it no node is quarantined.
    if "quarantined" not in {field.name for field in NodeProfile._meta.get_fields()}:
        return "0"
    return (f"count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {PROFILES} p WHERE p.memory_id = m.id "
            f"AND p.quarantined))")


def _figures_sql() -> str:
    """Node figures, links among live readable nodes and the nodes of open conflict tasks, in one statement."""
    return (
        f"SELECT count(*), coalesce(avg(m.importance), 0), coalesce(var_pop(m.importance), 0), "
        f"count(*) FILTER (WHERE m.importance >= %(important)s), "
        f"count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {LINKS} l WHERE l.source_id = m.id) "
        f"OR EXISTS (SELECT 1 FROM {LINKS} l WHERE l.target_id = m.id)), {_quarantine_sql()}, "
        f"(SELECT count(*) FROM {LINKS} l JOIN {MEMORIES} s ON s.id = l.source_id JOIN {MEMORIES} t "
        f"ON t.id = l.target_id WHERE {_live('s')} AND {_live('t')}), "
        f"(SELECT count(DISTINCT n.id) FROM {TASKS} k CROSS JOIN LATERAL unnest(k.node_ids) AS n(id) "
        f"JOIN {MEMORIES} c ON c.id = n.id WHERE k.owner_id = %(owner)s AND k.status = %(open)s "
        f"AND k.task_type = ANY(%(types)s) AND {_live('c')}) "
        f"FROM {MEMORIES} m WHERE {_live('m')}"
    )


def _suspects_sql() -> str:
    """Important nodes that a walk along causal links (live, readable ends, weight > 0) leads back to within
    CYCLE_HOPS links, and important nodes of open conflict tasks: (reason, node id, importance) rows."""
    return (
        f"WITH RECURSIVE causal AS MATERIALIZED (SELECT l.source_id, l.target_id FROM {LINKS} l "
        f"JOIN {MEMORIES} s ON s.id = l.source_id JOIN {MEMORIES} t ON t.id = l.target_id "
        f"WHERE l.link_type = %(causal)s AND l.weight > 0 AND {_live('s')} AND {_live('t')}), "
        f"starts AS MATERIALIZED (SELECT m.id, m.importance FROM {MEMORIES} m WHERE m.importance >= %(important)s "
        f"AND m.id IN (SELECT source_id FROM causal) AND m.id IN (SELECT target_id FROM causal) "
        f"ORDER BY m.importance DESC, m.id LIMIT %(starts)s), "
        f"walk(start, node, depth) AS (SELECT c.source_id, c.target_id, 1 FROM causal c "
        f"JOIN starts ON starts.id = c.source_id "
        f"UNION SELECT w.start, c.target_id, w.depth + 1 FROM walk w JOIN causal c ON c.source_id = w.node "
        f"WHERE w.depth < %(hops)s AND w.node <> w.start) "
        f"SELECT DISTINCT 'causal_cycle', starts.id::text, starts.importance FROM walk "
        f"JOIN starts ON starts.id = walk.start WHERE walk.node = walk.start "
        f"UNION ALL SELECT DISTINCT 'conflict', c.id::text, c.importance FROM {TASKS} k "
        f"CROSS JOIN LATERAL unnest(k.node_ids) AS n(id) JOIN {MEMORIES} c ON c.id = n.id "
        f"WHERE k.owner_id = %(owner)s AND k.status = %(open)s AND k.task_type = ANY(%(types)s) "
        f"AND c.importance >= %(important)s AND {_live('c')}"
    )

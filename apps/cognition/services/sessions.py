"""Context Graph sessions: finding or starting one, recording what happens in it (surprise, entropy, coherence,
learning score; apps/cognition/utl.py), and the pulse every answer carries."""
from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, Q
from django.utils import timezone
from pgvector import HalfVector

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import RECENT_ITEMS
from apps.cognition.models import Annotation, CgSession, CurationTask, SessionItem
from apps.core.commits import unflushed_commit_sql
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import MemoryLink, MemoryVector
from apps.memories.text import valence_arousal
from apps.memories.vectors import vector_text

SESSION_NOT_FOUND = "session_not_found"


def _session_uuid(session_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(session_id))
    except ValueError:
        raise InvalidInput("session_id must be a UUID, e.g. one a Context Graph tool returned.",
                           field="session_id") from None


def _not_found(session_id) -> NotFound:
    return NotFound(f"Session {session_id} not found: it is not one of yours.", code=SESSION_NOT_FOUND,
                    extra={"field": "session_id", "suggestion": "Leave session_id out to use your latest session, or "
                                                                "call an acting tool (inject_context, store_memory) "
                                                                "with a new UUID to start one."})


def session_get(*, actor: User, session_id=None) -> CgSession | None:
    """The actor's session ``session_id``, or their latest when it is left out (None if they have none). Another
    user's session is not found, as an unknown one is."""
    if session_id is None:
        return CgSession.objects.filter(owner=actor).order_by("-updated_at").first()
    session = CgSession.objects.filter(owner=actor, pk=_session_uuid(session_id)).first()
    if session is None:
        raise _not_found(session_id)
    return session


def session_start(*, actor: User, session_id=None, agent_id: str = "") -> CgSession:
    """The session an acting tool works in: ``session_id`` (started under that id if new), or the actor's latest, or
    a new one."""
    if session_id is None:
        return session_get(actor=actor) or CgSession.objects.create(owner=actor, agent_id=agent_id)
    wanted = _session_uuid(session_id)
    session = CgSession.objects.filter(owner=actor, pk=wanted).first()
    if session is not None:
        return session
    try:
        with transaction.atomic():
            return CgSession.objects.create(pk=wanted, owner=actor, agent_id=agent_id)
    except IntegrityError:  # the id is another user's session
        raise _not_found(session_id) from None


@dataclass(frozen=True)
class Recorded:
    item_id: int
    delta_s: float
    entropy: float
    coherence: float
    learning_score: float


def session_record(*, session: CgSession, kind: str, text: str, vector: Sequence[float],
                   activated: list[tuple[str, float]], nearest_node_cosine: float | None) -> Recorded:
    """Add a query or store to the session and bring its UTL state up to date: delta S against the latest items
    and the nearest live node, entropy as their EWMA, coherence over the nodes the latest items activated, L."""
    sent = vector_text(vector)
    current = list(dict.fromkeys(str(node_id) for node_id, _ in activated))
    best_recent, centroid_cosine, facts = _recent_and_facts(session, sent, current)
    surprise = utl.surprise([best_recent, nearest_node_cosine])
    entropy = utl.entropy_next(session.entropy, surprise, first=session.interactions == 0)
    coherence = _coherence(facts)
    stage = utl.stage_of(session.interactions + 1)
    centroid_cosine = 1.0 if centroid_cosine is None else centroid_cosine
    score = utl.learning_score(surprise=surprise, coherence_score=coherence, stage=stage,
                               valence=valence_arousal(text)[0], centroid_cosine=max(0.0, centroid_cosine))
    item_id, session.interactions, session.updated_at = _write_record(
        session, kind=kind, text=text, vector=sent, delta_s=round(surprise, 6), entropy=entropy,
        coherence=coherence, learning_score=score,
        activated=[{"node_id": str(node_id), "score": round(float(score_), 6)} for node_id, score_ in activated])
    session.entropy, session.coherence, session.learning_score = entropy, coherence, score
    return Recorded(item_id=item_id, delta_s=surprise, entropy=entropy, coherence=coherence, learning_score=score)


def _write_record(session: CgSession, *, kind, text, vector, delta_s, entropy, coherence, learning_score,
                  activated) -> tuple[int, int, object]:
    """The item's INSERT and the session's UPDATE as one statement: atomic by itself, one round trip. Outside a
    caller's transaction it commits without waiting for the WAL flush (apps/core/commits.py: a crash may forget
    the latest items of a session, docs/guarantees.md); inside one (a store) it waits with the caller's writes."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH item AS (INSERT INTO {SessionItem._meta.db_table} (session_id, kind, text, vector, delta_s, "
            f"activated, created_at) VALUES (%s, %s, %s, %s::halfvec, %s, %s::jsonb, %s) RETURNING id) "
            f"UPDATE {CgSession._meta.db_table} SET entropy = %s, coherence = %s, learning_score = %s, "
            f"interactions = interactions + 1, updated_at = %s WHERE id = %s{unflushed_commit_sql()} "
            f"RETURNING (SELECT id FROM item), interactions, updated_at",
            [session.pk, kind, text, vector, delta_s, json.dumps(activated), now,
             entropy, coherence, learning_score, now, session.pk])
        return cursor.fetchone()


@dataclass(frozen=True)
class SubgraphFacts:
    """What coherence reads about the active nodes: the links among them, their vectors, the flagged ones."""
    node_ids: list[str]
    edges: list[tuple[str, str]]
    vectors: dict[str, np.ndarray]
    flagged: set[str]


def _recent_and_facts(session: CgSession, vector: str, current: list[str]) -> tuple[float | None, float | None,
                                                                                     SubgraphFacts]:
    """In one statement: the best cosine of the vector (``vector``: vector_text's) to the session's latest items, its
    cosine to their centroid, and the facts of the active nodes (the ones this item activated, then the ones each of
    the latest items did, newest first; RECENT_ITEMS of them): the links among them, their vectors (in pgvector's
    binary form: 50 parsed from text cost more than the rest of a session record), and the nodes an open ambiguity
    task or a correction note flags. One statement instead of two in sequence: the nodes come from the items."""
    item, link, stored = SessionItem._meta.db_table, MemoryLink._meta.db_table, MemoryVector._meta.db_table
    task, note = CurationTask._meta.db_table, Annotation._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH recent AS MATERIALIZED (SELECT vector, activated, row_number() OVER (ORDER BY created_at DESC) AS n "
            f"FROM {item} WHERE session_id = %(session)s ORDER BY created_at DESC LIMIT %(recent)s), "
            f"listed AS (SELECT node, 0::bigint AS n, ord FROM unnest(%(current)s::text[]) WITH ORDINALITY AS c (node, ord) "
            f"UNION ALL SELECT e.value ->> 'node_id', r.n, e.ord FROM recent r "
            f"CROSS JOIN LATERAL jsonb_array_elements(r.activated) WITH ORDINALITY AS e (value, ord)), "
            f"chosen AS MATERIALIZED (SELECT node, min(ARRAY[n, ord]) AS first FROM listed GROUP BY node "
            f"ORDER BY first LIMIT %(recent)s), "
            f"ids AS MATERIALIZED (SELECT coalesce(array_agg(node::uuid), '{{}}') AS ids FROM chosen) "
            f"SELECT 'recent', max(1 - (vector <=> %(vector)s::halfvec))::text, "
            f"(1 - (avg(vector::vector) <=> %(vector)s::vector))::text, NULL::bytea FROM recent "
            f"UNION ALL SELECT 'node', node, NULL, NULL FROM chosen "
            f"UNION ALL SELECT 'edge', source_id::text, target_id::text, NULL FROM {link}, ids "
            f"WHERE source_id = ANY(ids.ids) AND target_id = ANY(ids.ids) "
            f"UNION ALL SELECT 'vector', memory_id::text, NULL, halfvec_send(embedding) FROM {stored}, ids "
            f"WHERE memory_id = ANY(ids.ids) "
            f"UNION ALL SELECT 'flagged', unnest(node_ids)::text, NULL, NULL FROM {task}, ids WHERE owner_id = %(owner)s "
            f"AND status = %(open)s AND task_type = %(ambiguity)s AND node_ids && ids.ids "
            f"UNION ALL SELECT 'flagged', memory_id::text, NULL, NULL FROM {note}, ids "
            f"WHERE memory_id = ANY(ids.ids) AND annotation_type = %(correction)s",
            {"session": session.pk, "recent": RECENT_ITEMS, "current": current, "vector": vector,
             "owner": session.owner_id, "open": CurationTask.Status.OPEN,
             "ambiguity": CurationTask.TaskType.AMBIGUITY_DETECTED,
             "correction": Annotation.AnnotationType.CORRECTION})
        rows = cursor.fetchall()
    best = centroid = None
    node_ids, edges, vectors, flagged = [], [], {}, set()
    for kind, a, b, data in rows:
        if kind == "recent":
            best, centroid = (None if a is None else float(a)), (None if b is None else float(b))
        elif kind == "node":
            node_ids.append(a)
        elif kind == "edge":
            edges.append((a, b))
        elif kind == "vector":
            vectors[a] = HalfVector.from_binary(data).to_numpy().astype(np.float64)
        else:
            flagged.add(a)
    return best, centroid, SubgraphFacts(node_ids, edges, vectors, flagged)


def _coherence(facts: SubgraphFacts) -> float:
    """Coherence of the active subgraph: connectivity and cluster fit of the nodes (groups: their connected
    components), and the share of them free of open ambiguity tasks and correction notes."""
    if not facts.node_ids:
        return 0.0
    groups = utl.components(facts.node_ids, facts.edges)
    consistency = sum(1 for node in facts.node_ids if node not in facts.flagged) / len(facts.node_ids)
    return utl.coherence(connectivity_share=utl.connectivity(facts.node_ids, facts.edges),
                         fit=utl.cluster_fit(facts.vectors, groups), consistency=consistency)


def pulse_get(*, actor: User, session_id=None) -> utl.Pulse:
    """The pulse from the session's cached state (its latest when ``session_id`` is left out or unknown), with
    whether a high-priority curation task waits: one query."""
    urgent = CurationTask.objects.filter(owner=actor, status=CurationTask.Status.OPEN,
                                         priority=CurationTask.Priority.HIGH)
    sessions = CgSession.objects.filter(owner=actor).annotate(urgent=Exists(urgent)).order_by("-updated_at")
    wanted = _maybe_uuid(session_id)
    session = (sessions.filter(Q(pk=wanted)) if wanted else sessions).first()
    if session is None:
        return utl.Pulse(entropy=0.0, coherence=0.0, suggested="get_memetic_status" if urgent.exists() else None)
    return pulse_of(session, urgent_task=session.urgent)


def pulse_of(session: CgSession, *, urgent_task: bool) -> utl.Pulse:
    if session.interactions == 0:  # nothing to judge yet
        return utl.Pulse(0.0, 0.0, "get_memetic_status" if urgent_task else None)
    stage = utl.stage_of(session.interactions)
    return utl.Pulse(session.entropy, session.coherence, utl.suggestion(
        entropy=session.entropy, coherence_score=session.coherence, stage=stage, urgent_task=urgent_task))


def _maybe_uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value)) if value is not None else None
    except ValueError:
        return None

"""Context Graph sessions: finding or starting one, recording what happens in it (surprise, entropy, coherence,
learning score; apps/cognition/utl.py), and the pulse every answer carries."""
from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q

from apps.accounts.models import User
from apps.cognition import utl
from apps.cognition.limits import RECENT_ITEMS
from apps.cognition.models import Annotation, CgSession, CurationTask, SessionItem
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.models import MemoryLink, MemoryVector
from apps.memories.text import valence_arousal

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
    item: SessionItem
    delta_s: float
    entropy: float
    coherence: float
    learning_score: float


def session_record(*, session: CgSession, kind: str, text: str, vector: Sequence[float],
                   activated: list[tuple[str, float]], nearest_node_cosine: float | None) -> Recorded:
    """Add a query or store to the session and bring its UTL state up to date: delta S against the latest items
    and the nearest live node, entropy as their EWMA, coherence over the nodes the latest items activated, L."""
    recent = list(SessionItem.objects.filter(session=session).order_by("-created_at")
                  .values_list("vector", "activated")[:RECENT_ITEMS])
    recent_vectors = [np.asarray(vector_, dtype=np.float64) for vector_, _ in recent]
    surprise = utl.delta_s(vector, recent_vectors, nearest_node_cosine)
    entropy = utl.entropy_next(session.entropy, surprise, first=session.interactions == 0)
    nodes = [node_id for node_id, _ in activated]
    for _, earlier in recent:
        nodes.extend(entry["node_id"] for entry in earlier)
    nodes = list(dict.fromkeys(nodes))[:RECENT_ITEMS]
    coherence = active_coherence(owner=session.owner, node_ids=nodes)
    stage = utl.stage_of(session.interactions + 1)
    centroid_cosine = utl.cosine(vector, np.mean(recent_vectors, axis=0)) if recent_vectors else 1.0
    score = utl.learning_score(surprise=surprise, coherence_score=coherence, stage=stage,
                               valence=valence_arousal(text)[0], centroid_cosine=max(0.0, centroid_cosine))
    with transaction.atomic():
        item = SessionItem.objects.create(
            session=session, kind=kind, text=text, vector=list(vector), delta_s=round(surprise, 6),
            activated=[{"node_id": str(node_id), "score": round(float(score_), 6)} for node_id, score_ in activated],
        )
        session.entropy, session.coherence, session.learning_score = entropy, coherence, score
        session.interactions += 1
        session.save(update_fields=["entropy", "coherence", "learning_score", "interactions", "updated_at"])
    return Recorded(item=item, delta_s=surprise, entropy=entropy, coherence=coherence, learning_score=score)


def active_coherence(*, owner: User, node_ids: list[str]) -> float:
    """Coherence of the active subgraph: connectivity and cluster fit of the nodes (groups: their connected
    components), and the share of them free of open ambiguity tasks and correction notes."""
    if not node_ids:
        return 0.0
    edges = list(MemoryLink.objects.filter(source_id__in=node_ids, target_id__in=node_ids)
                 .values_list("source_id", "target_id"))
    edges = [(str(a), str(b)) for a, b in edges]
    groups = utl.components(node_ids, edges)
    vectors = {str(memory_id): np.asarray(vector, dtype=np.float64) for memory_id, vector in
               MemoryVector.objects.filter(memory_id__in=node_ids).values_list("memory_id", "embedding")}
    disputed = {str(node) for nodes in CurationTask.objects.filter(
        owner=owner, status=CurationTask.Status.OPEN, task_type=CurationTask.TaskType.AMBIGUITY_DETECTED,
        node_ids__overlap=node_ids).values_list("node_ids", flat=True) for node in nodes}
    corrected = {str(memory_id) for memory_id in Annotation.objects.filter(
        memory_id__in=node_ids, annotation_type=Annotation.AnnotationType.CORRECTION).values_list("memory_id",
                                                                                                   flat=True)}
    consistency = sum(1 for node in node_ids if node not in disputed | corrected) / len(node_ids)
    return utl.coherence(connectivity_share=utl.connectivity(node_ids, edges),
                         fit=utl.cluster_fit(vectors, groups), consistency=consistency)


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

"""What the dream tests share: session items built by hand (the nodes each one activated, with scores), the graph of
a user as plain values (to compare runs), and the Hebbian update written out again, independently of the code."""
from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from apps.cognition.models import CgSession, SessionItem
from apps.memories.models import Memory, MemoryLink

UNIT = [1.0] + [0.0] * (settings.ENGRAM_EMBEDDING_DIMENSIONS - 1)


def session(user) -> CgSession:
    return CgSession.objects.create(owner=user)


def item(cg_session: CgSession, *activated: tuple[Memory, float], text: str = "a query") -> SessionItem:
    """A query of the session that activated these nodes with these scores (best first, as retrieval lists them)."""
    return SessionItem.objects.create(session=cg_session, kind="query", text=text, vector=UNIT, delta_s=0.5,
                                      activated=[{"node_id": str(node.pk), "score": score} for node, score in activated])


def expected(weight: float, a_i: float, a_j: float, eta: float = 0.01) -> float:
    """w' = clamp(w (1 - 0.001) + eta a_i a_j, 0.05, 1.0), as REFERENCE.md writes it."""
    return min(1.0, max(0.05, weight * 0.999 + eta * a_i * a_j))


def weight(source: Memory, target: Memory) -> float | None:
    return MemoryLink.objects.filter(source=source, target=target).values_list("weight", flat=True).first()


def graph_of(user) -> dict:
    """The user's live graph by content (ids differ between two users' copies): nodes with kind and importance, and
    edges with type, origin and weight."""
    live = Memory.objects.filter(owner=user, deleted_at__isnull=True)
    content = dict(live.values_list("pk", "content"))
    edges = sorted((content[s], content[t], kind, origin, round(w, 9)) for s, t, kind, origin, w in
                   MemoryLink.objects.filter(Q(source__in=live) & Q(target__in=live))
                   .values_list("source_id", "target_id", "link_type", "origin", "weight"))
    nodes = sorted(live.values_list("content", "kind", "importance"))
    return {"nodes": nodes, "edges": edges}

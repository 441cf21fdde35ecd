"""What the Context Graph status tests share: nodes with a known link structure, and session items recorded the way
retrieval records them (apps/cognition/services/sessions.session_record, with the real MiniLM vectors)."""
from __future__ import annotations

from apps.cognition.models import CgSession
from apps.cognition.services.sessions import session_record, session_start
from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_store
from apps.memories.services.curation import memory_link


def node(user, content: str, keyword: str) -> Memory:
    return memory_store(actor=user, content=content, keywords=[keyword]).memory


def unlinked(user) -> None:
    """Drop the links the stores made, so that a test draws exactly the graph it means."""
    MemoryLink.objects.filter(source__owner=user).delete()


def link(user, a: Memory, b: Memory, weight: float = 0.8) -> None:
    memory_link(actor=user, source_id=a.pk, target_id=b.pk, link_type="semantic", weight=weight)


def record(session: CgSession, text: str, activated: list[tuple[Memory, float]], kind: str = "query"):
    [vector] = embed_texts([text])
    return session_record(session=session, kind=kind, text=text, vector=vector,
                          activated=[(str(memory.pk), score) for memory, score in activated], nearest_node_cosine=None)


def new_session(user, session_id=None) -> CgSession:
    return session_start(actor=user, session_id=session_id)


def set_state(session: CgSession, *, entropy: float, coherence: float, interactions: int) -> CgSession:
    CgSession.objects.filter(pk=session.pk).update(entropy=entropy, coherence=coherence, interactions=interactions)
    session.refresh_from_db()
    return session


def staging_graph(user) -> dict:
    """Two linked nodes about a staging cluster and an unlinked one about soup, and a session whose one query
    activated the two linked ones."""
    kube = node(user, "The staging cluster runs Kubernetes 1.30 on three nodes.", "kubernetes")
    helm = node(user, "Helm deploys every service to the staging Kubernetes cluster.", "helm")
    soup = node(user, "Grandma's tomato soup needs a pinch of sugar.", "soup")
    unlinked(user)
    link(user, kube, helm)
    session = new_session(user)
    record(session, "what runs on the staging cluster", [(kube, 0.9), (helm, 0.8)])
    return {"kube": kube, "helm": helm, "soup": soup, "session": session}

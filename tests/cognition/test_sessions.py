"""session_record against the UTL formulas run by hand on the same vectors: PostgreSQL computes the cosines, the
test recomputes them in Python."""
import numpy as np
import pytest

from apps.cognition import utl
from apps.cognition.services.sessions import session_record, session_start
from apps.memories.embeddings import embed_texts
from apps.memories.models import MemoryVector
from tests.cognition.curation_support import link, nodes

pytestmark = pytest.mark.django_db

QUERIES = ("when does the staging database restart", "which editor theme does the user like",
           "how are deploys reviewed")


def _vector(memory) -> np.ndarray:
    return np.asarray(MemoryVector.objects.get(memory=memory).embedding, dtype=np.float64)


def test_surprise_entropy_and_coherence_match_the_formulas(user):
    db, theme, deploys, review = nodes(user, "The staging database restarts every night at two.",
                                       "The user likes a dark editor theme.", "Deploys go out on Fridays.",
                                       "Every deploy is reviewed by the platform team.")
    link(user, deploys, review, 0.8)
    session = session_start(actor=user)
    queries = embed_texts(list(QUERIES))
    first = session_record(session=session, kind="query", text=QUERIES[0], vector=queries[0],
                           activated=[(str(db.pk), 0.9)], nearest_node_cosine=None)
    assert (first.delta_s, first.entropy) == (1.0, 1.0)
    second = session_record(session=session, kind="query", text=QUERIES[1], vector=queries[1],
                            activated=[(str(theme.pk), 0.8)], nearest_node_cosine=0.31)
    by_hand = utl.surprise([utl.cosine(queries[1], queries[0]), 0.31])
    assert second.delta_s == pytest.approx(by_hand, abs=1e-3)  # halfvec storage rounds the stored query
    assert second.entropy == pytest.approx(0.3 * by_hand + 0.7 * 1.0, abs=1e-3)
    third = session_record(session=session, kind="query", text=QUERIES[2], vector=queries[2],
                           activated=[(str(deploys.pk), 0.7), (str(review.pk), 0.6)], nearest_node_cosine=None)
    # The active subgraph: deploys-review linked, the two others alone; no tasks or corrections.
    active = [str(deploys.pk), str(review.pk), str(theme.pk), str(db.pk)]
    groups = utl.components(active, [(str(deploys.pk), str(review.pk))])
    vectors = {str(m.pk): _vector(m) for m in (db, theme, deploys, review)}
    expected = utl.coherence(connectivity_share=0.5, fit=utl.cluster_fit(vectors, groups), consistency=1.0)
    assert third.coherence == pytest.approx(expected, abs=1e-3)
    centroid = np.mean([queries[0], queries[1]], axis=0)
    expected_l = utl.learning_score(surprise=third.delta_s, coherence_score=third.coherence, stage=utl.stage_of(3),
                                    valence=0.0, centroid_cosine=max(0.0, utl.cosine(queries[2], centroid)))
    assert third.learning_score == pytest.approx(expected_l, abs=1e-3)
    session.refresh_from_db()
    assert (session.interactions, session.coherence) == (3, pytest.approx(third.coherence))


def test_a_record_is_one_statement_relaxed_alone_and_waiting_with_a_callers_writes(user, django_assert_num_queries):
    from django.db import connection, transaction

    from apps.cognition.models import SessionItem

    [node] = nodes(user, "The staging database restarts every night at two.")
    session = session_start(actor=user)
    [vector] = embed_texts([QUERIES[0]])
    facts = dict(kind="query", text=QUERIES[0], vector=vector, activated=[(str(node.pk), 0.9)],
                 nearest_node_cosine=None)
    recorded = session_record(session=session, **facts)  # autocommit: its own transaction, not waiting for the flush
    item = SessionItem.objects.get(pk=recorded.item_id)
    assert (item.session_id, item.activated) == (session.pk, [{"node_id": str(node.pk), "score": 0.9}])
    with transaction.atomic(), connection.cursor() as cursor:  # a store's record commits with the store
        with django_assert_num_queries(2):  # the recent items with the active subgraph, the record
            session_record(session=session, **facts)
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    session.refresh_from_db()
    assert session.interactions == 2 and SessionItem.objects.filter(session=session).count() == 2


def test_the_active_nodes_are_this_items_then_the_newest_items(user, monkeypatch):
    """RECENT_ITEMS caps the active subgraph: this item's nodes come first, then each earlier item's, newest first."""
    from apps.cognition.services import sessions

    monkeypatch.setattr(sessions, "RECENT_ITEMS", 3)
    a, b, c, d = nodes(user, "The staging database restarts every night at two.", "The user likes a dark editor theme.",
                       "Deploys go out on Fridays.", "Every deploy is reviewed by the platform team.")
    session = session_start(actor=user)
    [vector] = embed_texts([QUERIES[0]])
    for activated in ([a], [b, c]):
        session_record(session=session, kind="query", text=QUERIES[0], vector=vector,
                       activated=[(str(node.pk), 0.5) for node in activated], nearest_node_cosine=None)
    _, _, facts = sessions._recent_and_facts(session, sessions.vector_text(vector), [str(d.pk)])
    assert set(facts.node_ids) == {str(d.pk), str(b.pk), str(c.pk)}
    assert set(facts.vectors) == set(facts.node_ids)

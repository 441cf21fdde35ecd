"""gather_evidence: the caller's relevant memories of every kind, a relevance floor, no access bumps, isolation,
and a fixed number of queries."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memories.models import Memory
from apps.reasoning.analysis.evidence import gather_evidence
from tests.reasoning.model_server import knowledge  # noqa: F401

pytestmark = pytest.mark.django_db

QUESTION = "Why does the payment service time out under load?"


def test_relevant_memories_of_every_kind_and_nothing_unrelated(user, knowledge):  # noqa: F811
    evidence = gather_evidence(actor=user, text=QUESTION)
    found = {item.id: item for item in evidence}
    expected = [knowledge.memory, knowledge.thought, knowledge.decision_node, knowledge.edge_node]
    assert {str(memory.pk) for memory in expected} <= set(found)
    assert {found[str(memory.pk)].kind for memory in expected} == {"memory", "thought", "decision", "sharp_edge"}
    assert str(knowledge.unrelated.pk) not in found
    assert [item.score for item in evidence] == sorted((item.score for item in evidence), reverse=True)
    assert all(0 < item.score <= 1 for item in evidence)
    edge = found[str(knowledge.edge_node.pk)]
    assert edge.content.startswith("Sharp edge: Payment service connection pool exhaustion")
    assert edge.metadata["entity"] == "sharp_edge" and edge.metadata["entity_id"]
    assert edge.as_dict() == {"id": edge.id, "kind": "sharp_edge", "content": edge.content, "score": edge.score}


def test_bobs_memories_never_appear_in_alices_evidence(user, other_user, knowledge):  # noqa: F811
    alices = {item.id for item in gather_evidence(actor=user, text=QUESTION)}
    assert str(knowledge.bobs.pk) not in alices
    bobs = gather_evidence(actor=other_user, text=QUESTION)
    assert [item.id for item in bobs] == [str(knowledge.bobs.pk)]


def test_consulting_evidence_does_not_count_as_access(user, knowledge):  # noqa: F811
    before = Memory.objects.get(pk=knowledge.memory.pk)
    assert str(before.pk) in {item.id for item in gather_evidence(actor=user, text=QUESTION)}
    after = Memory.objects.get(pk=knowledge.memory.pk)
    assert (after.access_count, after.strength, after.last_accessed_at) == (
        before.access_count, before.strength, before.last_accessed_at)


def test_limit_and_empty_text(user, knowledge):  # noqa: F811
    assert len(gather_evidence(actor=user, text=QUESTION, limit=2)) == 2
    assert gather_evidence(actor=user, text="   \n ") == []


def test_unrelated_text_finds_nothing(user, knowledge):  # noqa: F811
    assert gather_evidence(actor=user, text="Which telescope is best for watching Saturn's rings?") == []


def test_query_count_does_not_grow_with_the_evidence(user, store):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            gather_evidence(actor=user, text="How do we speed up the nightly invoice export job?")
        return len(captured)

    store(user, "The nightly invoice export job takes two hours.")
    few = queries()
    for index in range(5):
        store(user, f"Invoice export job note {index}: the export is slow because it renders PDFs one by one.")
    assert len(gather_evidence(actor=user, text="How do we speed up the nightly invoice export job?")) == 6
    # Retrieval's lexical planning may skip a statement as the counts change, never add one per memory.
    assert queries() <= few

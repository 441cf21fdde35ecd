"""critique_context (apps/cognition/services/critique.py) on the real graph and model: each kind of contradiction
found and not found, the threshold, focal nodes, bad input naming its field, and user A against user B."""
from __future__ import annotations

import uuid

import pytest

from apps.cognition.models import Annotation
from apps.cognition.services.critique import critique_context
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.services import memory_store_many
from apps.memories.services.curation import memory_link
from apps.projects.services.entities import decision_add
from apps.projects.services.projects import project_create

pytestmark = pytest.mark.django_db

WEBHOOKS = "The payments service does not retry failed webhooks."
RATE = "The public API rate limit is 100 requests per minute for each key."
LEAK = "Memory leaks build up in the background worker."
RESTART = "The background worker restarts every night."


def stored(user, *contents):
    return [result.memory for result in memory_store_many(actor=user, items=[{"content": c} for c in contents],
                                                          link=False)]


def kinds(critique) -> set[tuple[str, str]]:
    return {(finding.kind, finding.node_id) for finding in critique.contradictions}


def test_a_negation_is_found_and_an_agreement_is_not(user):
    [webhooks] = stored(user, WEBHOOKS)
    found = critique_context(actor=user, reasoning_summary="The payments service retries failed webhooks. "
                                                           "So a lost webhook will arrive later.")
    assert ("negation", str(webhooks.pk)) in kinds(found)
    [finding] = [f for f in found.contradictions if f.kind == "negation"]
    assert finding.sentence_index == 0 and finding.score >= 0.5 and "payments" in finding.explanation
    assert found.sentences[0] == "The payments service retries failed webhooks."
    assert str(webhooks.pk) in [node for node, _ in found.nearest[0]]
    agreeing = critique_context(actor=user, reasoning_summary="The payments service never retries failed webhooks.")
    assert agreeing.contradictions == [] and agreeing.as_dict()["consistent"] is True


def test_a_number_clash_is_found(user):
    [rate] = stored(user, RATE)
    found = critique_context(actor=user, reasoning_summary="The public API rate limit is 500 requests per minute "
                                                           "for each key.")
    assert ("numbers", str(rate.pk)) in kinds(found)
    same = critique_context(actor=user, reasoning_summary="The public API rate limit is 100 requests per minute.")
    assert same.contradictions == []


@pytest.fixture
def leak_graph(user):
    leak, restart = stored(user, LEAK, RESTART)
    memory_link(actor=user, source_id=leak.pk, target_id=restart.pk, link_type="causal", weight=0.7)
    return leak, restart


def test_a_reversed_causal_edge_is_found(user, leak_graph):
    leak, restart = leak_graph
    found = critique_context(actor=user, reasoning_summary="The background worker restarts every night, which "
                                                           "causes memory leaks in the background worker.")
    [finding] = [f for f in found.contradictions if f.kind == "reversed_causal_edge"]
    assert finding.evidence["graph_edge"] == {"source": str(leak.pk), "target": str(restart.pk), "weight": 0.7}
    assert finding.evidence["claimed"] == {"cause": str(restart.pk), "effect": str(leak.pk)}
    along = critique_context(actor=user, reasoning_summary="Memory leaks in the background worker cause the "
                                                           "background worker to restart every night.")
    assert [f for f in along.contradictions if f.kind == "reversed_causal_edge"] == []


def test_a_correction_note_counts_more_when_the_sentence_contradicts_it(user):
    [rate] = stored(user, RATE)
    Annotation.objects.create(memory=rate, author=user, annotation_type="correction",
                              text="Since March the limit is 300 requests per minute.")
    relying = critique_context(actor=user, reasoning_summary="The public API allows requests per minute for each "
                                                             "key as documented.", contradiction_threshold=0.3)
    [note] = [f for f in relying.contradictions if f.kind == "correction"]
    assert note.evidence["contradicts_correction"] is False and "300" in note.explanation
    contradicting = critique_context(actor=user, reasoning_summary="The public API limit is 150 requests per minute "
                                                                   "for each key.", contradiction_threshold=0.3)
    [strong] = [f for f in contradicting.contradictions if f.kind == "correction"]
    assert strong.evidence["contradicts_correction"] is True and strong.score > note.score


def test_a_superseded_decision_is_found(user):
    project = project_create(actor=user, name="Ledger")
    old = decision_add(actor=user, project_id=project.pk, title="Ledger database",
                       description="Store the ledger in MySQL.").decision
    new = decision_add(actor=user, project_id=project.pk, title="Ledger database",
                       description="Store the ledger in PostgreSQL.").decision
    old.refresh_from_db()
    assert old.status == "superseded"
    found = critique_context(actor=user, reasoning_summary="We decided to store the ledger database in MySQL.")
    [finding] = [f for f in found.contradictions if f.kind == "superseded_decision"]
    assert finding.node_id == str(old.node_id) and finding.evidence["superseded_by_node"] == str(new.node_id)


def test_the_threshold_decides_what_is_reported(user):
    stored(user, WEBHOOKS)
    summary = "The payments service retries failed webhooks."
    low = critique_context(actor=user, reasoning_summary=summary, contradiction_threshold=0.3)
    high = critique_context(actor=user, reasoning_summary=summary, contradiction_threshold=0.9)
    assert low.contradictions and not high.contradictions
    assert high.below_threshold >= len(low.contradictions)
    assert all(finding.score >= 0.3 for finding in low.contradictions)


def test_focal_nodes_are_compared_with_every_sentence(user):
    [webhooks] = stored(user, WEBHOOKS)
    # Closer to the sentence than the webhook note: without focal_nodes, the note is not among its nearest five.
    stored(user, *[f"The payments service retries failed webhooks for merchant {n}." for n in range(6)])
    summary = "The payments service retries failed webhooks."
    alone = critique_context(actor=user, reasoning_summary=summary)
    assert str(webhooks.pk) not in [node for node, _ in alone.nearest[0]] and alone.contradictions == []
    found = critique_context(actor=user, reasoning_summary=summary, focal_nodes=[str(webhooks.pk)])
    assert str(webhooks.pk) in [node for node, _ in found.nearest[0]]
    assert ("negation", str(webhooks.pk)) in kinds(found)


def test_user_a_never_cites_user_bs_nodes(user, other_user):
    [bobs] = stored(other_user, WEBHOOKS)
    found = critique_context(actor=user, reasoning_summary="The payments service retries failed webhooks.")
    assert found.contradictions == [] and all(node != str(bobs.pk) for row in found.nearest for node, _ in row)
    with pytest.raises(NotFound) as error:
        critique_context(actor=user, reasoning_summary="The payments service retries failed webhooks.",
                         focal_nodes=[str(bobs.pk)])
    assert error.value.extra["field"] == "focal_nodes[0]"


@pytest.mark.parametrize("arguments, field", [
    ({"reasoning_summary": "Too short."}, "reasoning_summary"),
    ({"reasoning_summary": "x" * 2001}, "reasoning_summary"),
    ({"reasoning_summary": 42}, "reasoning_summary"),
    ({"reasoning_summary": "A summary long enough.", "contradiction_threshold": 0.95}, "contradiction_threshold"),
    ({"reasoning_summary": "A summary long enough.", "contradiction_threshold": "high"}, "contradiction_threshold"),
    ({"reasoning_summary": "A summary long enough.", "focal_nodes": ["nope"]}, "focal_nodes[0]"),
    ({"reasoning_summary": "A summary long enough.", "focal_nodes": "nope"}, "focal_nodes"),
    ({"reasoning_summary": "A summary long enough.", "focal_nodes": [str(uuid.uuid4())] * 21}, "focal_nodes"),
])
def test_bad_input_names_the_field(user, arguments, field):
    with pytest.raises((InvalidInput, NotFound)) as error:
        critique_context(actor=user, **arguments)
    assert (error.value.field if isinstance(error.value, InvalidInput) else error.value.extra["field"]) == field

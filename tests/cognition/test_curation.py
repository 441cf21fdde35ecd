"""Curation services: annotations, boosts, merges (strategies, edges, priors, kinds, cubes) and forgets (soft, hard,
cascading), with their events, tombstones and closed tasks."""
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from apps.cognition.models import Annotation, CurationTask, Event, NodeProfile, Tombstone, UndoEntry
from apps.cognition.selectors.tombstones import tombstones_search
from apps.cognition.services.curation import (
    SENTENCE_END, annotation_add, extractive_summary, node_boost, node_forget, nodes_merge,
)
from apps.cognition.services.inbox import task_open
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.services import cube_register, cube_share
from apps.graph.models import GraphEvent
from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.services import memory_store
from tests.cognition.curation_support import link, nodes

pytestmark = pytest.mark.django_db

DARK_MODE = ("The user prefers dark mode in every editor.", "Dark mode is what the user wants in all their editors.")


def _actions(memory) -> list[str]:
    return list(Event.objects.filter(node_ids__contains=[memory.pk]).order_by("id").values_list("action", flat=True))


def _task(user, memories, task_type=CurationTask.TaskType.POTENTIAL_MERGE):
    return task_open(owner=user, task_type=task_type, node_ids=[m.pk for m in memories], reason="near-duplicates",
                     suggested_tool="merge_concepts")


# --- annotate_node --------------------------------------------------------------------------------------------------

def test_an_annotation_is_a_row_with_an_event_and_it_closes_the_nodes_tasks(user):
    node, other = nodes(user, "The API rate limit is 100 requests a minute.", "Rate limits moved to the gateway.")
    task = _task(user, [node, other])
    note = annotation_add(actor=user, node_id=str(node.pk), text="Now 500 a minute since v2.",
                          annotation_type="correction", reference_node_id=str(other.pk))
    assert Annotation.objects.get() == note
    assert (note.memory, note.reference, note.annotation_type, note.author) == (node, other, "correction", user)
    event = Event.objects.get(action="annotated")
    assert event.node_ids == [node.pk] and event.detail["annotation_id"] == str(note.pk)
    task.refresh_from_db()
    assert (task.status, task.closed_by) == (CurationTask.Status.DONE, user)


def test_annotation_input_is_checked_and_names_the_field(user, other_user):
    [node] = nodes(user, "A node to annotate.")
    [theirs] = nodes(other_user, "Bob's node.")
    for arguments, field in (({"text": ""}, "annotation"), ({"text": "x" * 1025}, "annotation"),
                             ({"text": "ok", "annotation_type": "gossip"}, "annotation_type"),
                             ({"text": "ok", "reference_node_id": str(node.pk)}, "reference_node_id")):
        with pytest.raises(InvalidInput) as raised:
            annotation_add(actor=user, node_id=str(node.pk), **arguments)
        assert raised.value.field == field
    with pytest.raises(NotFound) as raised:
        annotation_add(actor=user, node_id=str(node.pk), text="see", reference_node_id=str(theirs.pk))
    assert raised.value.extra["field"] == "reference_node_id"
    with pytest.raises(NotFound):
        annotation_add(actor=other_user, node_id=str(node.pk), text="not mine")
    assert not Annotation.objects.exists()


# --- boost_importance -----------------------------------------------------------------------------------------------

def test_a_boost_multiplies_importance_and_clamps_it(user):
    node = memory_store(actor=user, content="Backups run at 02:00 UTC.", importance=0.4).memory
    boosted = node_boost(actor=user, node_id=str(node.pk), boost_factor=1.5, reason="ops relies on it")
    assert (boosted.previous_importance, boosted.memory.importance) == (0.4, pytest.approx(0.6))
    assert node_boost(actor=user, node_id=str(node.pk), boost_factor=2.0).memory.importance == 1.0
    assert node_boost(actor=user, node_id=str(node.pk), boost_factor=0.1).memory.importance == pytest.approx(0.1)
    first = Event.objects.filter(action="boosted").order_by("id").first()
    assert (first.reason, first.detail["fields"]["importance"]) == ("ops relies on it", [0.4, 0.6])


@pytest.mark.parametrize("factor", [0.05, 2.5, True, "2"])
def test_a_boost_factor_outside_its_range_is_refused(user, factor):
    [node] = nodes(user, "Importance stays put.")
    with pytest.raises(InvalidInput) as raised:
        node_boost(actor=user, node_id=str(node.pk), boost_factor=factor)
    assert raised.value.field == "factor"
    node.refresh_from_db()
    assert node.importance == 0.5


# --- merge_concepts -------------------------------------------------------------------------------------------------

def test_a_merge_redirects_every_edge_keeps_the_highest_weight_and_makes_no_self_loop(
        user, django_capture_on_commit_callbacks):
    a, b, x, y = nodes(user, *DARK_MODE, "Editors are configured by the dotfiles repository.",
                       "The user works late at night.")
    Memory.objects.filter(pk=a.pk).update(importance=0.3)
    Memory.objects.filter(pk=b.pk).update(importance=0.8)
    link(user, a, x, 0.4, "causal")
    link(user, b, x, 0.7)
    link(user, y, a, 0.5, "temporal")
    link(user, a, b, 0.9)
    task = _task(user, [a, b])
    with django_capture_on_commit_callbacks(execute=True):
        merged = nodes_merge(actor=user, source_node_ids=[str(a.pk), str(b.pk)], target_name="Dark mode preference")
    m = merged.merged
    assert (merged.nodes_merged, merged.edges_redirected, merged.priors_compatible) == (2, 2, True)
    edges = {(link.source_id, link.target_id): (link.link_type, link.weight) for link in MemoryLink.objects.all()}
    assert edges == {(m.pk, x.pk): ("semantic", 0.7), (y.pk, m.pk): ("temporal", 0.5)}
    assert (m.content, m.importance, m.kind) == (b.content, 0.8, "memory")  # keep_highest
    assert NodeProfile.objects.get(memory=m).name == "Dark mode preference"
    # Re-embedded: the merged node's vector is its content's.
    vector = np.asarray(MemoryVector.objects.get(memory=m).embedding, dtype=float)
    assert float(vector @ np.asarray(embed_texts([m.content])[0])) > 0.99
    # The sources are hidden, not deleted, until the undo expires.
    for source in (a, b):
        source.refresh_from_db()
        tombstone = Tombstone.objects.get(memory=source)
        assert source.deleted_at is not None and tombstone.reason == "merged"
        assert tombstone.deadline == UndoEntry.objects.get().expires_at
        assert "merged" in _actions(source)
    assert _actions(m) == ["created", "linked", "merged"]
    assert UndoEntry.objects.get().reversal_hash == merged.reversal_hash and len(merged.reversal_hash) == 64
    task.refresh_from_db()
    assert task.status == CurationTask.Status.DONE
    assert GraphEvent.objects.filter(kind="memories.merged", payload__node__id=str(m.pk)).exists()


def test_merge_strategies(user):
    older, newer = nodes(user, "Deploys happen on Fridays. The release branch is frozen on Thursdays.",
                         "Deploys happen on Fridays. Hotfixes skip the freeze.")
    Memory.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(days=2), importance=0.9)

    def merge(strategy):
        result = nodes_merge(actor=user, source_node_ids=[str(older.pk), str(newer.pk)], target_name="Deploys",
                             merge_strategy=strategy)
        Memory.objects.filter(pk__in=[older.pk, newer.pk]).update(deleted_at=None)  # sources back for the next one
        Tombstone.objects.all().delete()
        return result.merged

    assert merge("keep_newest").content == newer.content
    assert merge("keep_highest").content == older.content
    concatenated = merge("concatenate")
    assert concatenated.content == f"{older.content}\n\n{newer.content}" and concatenated.kind == "memory"
    summary = merge("summarize")
    assert summary.kind == "summary"
    sentences = ["Deploys happen on Fridays.", "The release branch is frozen on Thursdays.",
                 "Hotfixes skip the freeze."]
    chosen = SENTENCE_END.split(summary.content)
    # Extractive: the sources' own sentences in their order, the shared one once, no longer than the average source.
    assert chosen and all(sentence in sentences for sentence in chosen)
    assert chosen == sorted(chosen, key=sentences.index)
    assert len(summary.content) <= (len(older.content) + len(newer.content)) / 2


def test_a_merge_that_keeps_a_sources_words_keeps_its_vector_without_the_model(user, monkeypatch):
    older, newer = nodes(user, "Deploys happen on Fridays. The release branch is frozen on Thursdays.",
                         "Deploys happen on Fridays. Hotfixes skip the freeze.")
    kept = MemoryVector.objects.get(memory=newer)

    def no_model(texts):
        raise AssertionError(f"the model was asked for {texts}")

    monkeypatch.setattr("apps.memories.sectors.embed_texts", no_model)
    merged = nodes_merge(actor=user, source_node_ids=[str(older.pk), str(newer.pk)], target_name="Deploys",
                         merge_strategy="keep_newest").merged
    stored = MemoryVector.objects.get(memory=merged)
    assert (list(stored.embedding), stored.tokens) == (list(kept.embedding), kept.tokens)
    monkeypatch.undo()
    # A text of its own is embedded: the concatenation is neither source's.
    Memory.objects.filter(pk__in=[older.pk, newer.pk]).update(deleted_at=None)
    Tombstone.objects.all().delete()
    joined = nodes_merge(actor=user, source_node_ids=[str(older.pk), str(newer.pk)], target_name="Deploys",
                         merge_strategy="concatenate").merged
    vector = np.asarray(MemoryVector.objects.get(memory=joined).embedding, dtype=np.float64)
    expected = np.asarray(embed_texts([joined.content])[0])
    assert float(vector @ expected / np.linalg.norm(vector) / np.linalg.norm(expected)) > 0.999


def test_an_extractive_summary_keeps_the_most_central_sentence():
    cache = ["The cache is invalidated on every deploy.", "Cache invalidation runs when a deploy finishes."]
    assert extractive_summary([*cache, "Lunch is at noon."]) in cache


def test_only_memory_and_summary_nodes_merge_and_the_error_names_the_kinds_profile(user):
    [memory] = nodes(user, "A plain memory about deploys.")
    decision = memory_store(actor=user, content="Decision: deploy on Fridays.", kind="decision").memory
    with pytest.raises(InvalidInput) as raised:
        nodes_merge(actor=user, source_node_ids=[str(memory.pk), str(decision.pk)], target_name="x")
    assert raised.value.field == "source_node_ids" and "mind" in raised.value.message
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 2


def test_a_merge_stays_in_one_writable_cube(user, other_user):
    [mine] = nodes(user, "Dark mode everywhere.")
    cube = cube_register(actor=user, cube_id="team-notes")
    [elsewhere] = nodes(user, "Dark mode in the terminal too.", cube_id=cube.pk)
    with pytest.raises(InvalidInput) as raised:
        nodes_merge(actor=user, source_node_ids=[str(mine.pk), str(elsewhere.pk)], target_name="x")
    assert raised.value.field == "source_node_ids"
    # Shared with Bob to read: he sees the nodes but may not merge them.
    [second] = nodes(user, "Dark mode in the browser as well.", cube_id=cube.pk)
    cube_share(actor=user, cube_id=cube.pk, user=other_user.username, role="reader")
    with pytest.raises(PermissionDenied):
        nodes_merge(actor=other_user, source_node_ids=[str(elsewhere.pk), str(second.pk)], target_name="x")
    with pytest.raises(InvalidInput) as raised:
        nodes_merge(actor=user, source_node_ids=[str(mine.pk), str(mine.pk)], target_name="x")
    assert raised.value.field == "source_node_ids"
    with pytest.raises(NotFound):
        nodes_merge(actor=other_user, source_node_ids=[str(mine.pk), str(elsewhere.pk)], target_name="x")


def test_different_domains_are_linked_not_merged_unless_forced(user):
    python, java = nodes(user, "In Python, a list is a dynamic array.", "In Java, a List is an interface.")
    NodeProfile.objects.create(memory=python, domain="code", name="python lists")
    NodeProfile.objects.create(memory=java, domain="research")
    result = nodes_merge(actor=user, source_node_ids=[str(python.pk), str(java.pk)], target_name="Lists")
    assert (result.merged, result.priors_compatible, result.relational_edge_created) == (None, False, True)
    assert len(result.reversal_hash) == 64  # the undo removes the edge (test_undo.py)
    assert "code" in result.relational_note and "research" in result.relational_note
    assert "dynamic array" in result.relational_note and "interface" in result.relational_note
    edge = MemoryLink.objects.get()
    assert (edge.source_id, edge.target_id, edge.link_type) == (python.pk, java.pk, "analogical")
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 2
    forced = nodes_merge(actor=user, source_node_ids=[str(python.pk), str(java.pk)], target_name="Lists",
                         force_merge=True)
    assert forced.merged is not None and forced.priors_compatible is False and not forced.relational_edge_created


def test_agents_whose_centroids_differ_are_linked_not_merged(user):
    coder = nodes(user, "Python lists grow by over-allocation.", "Django migrations run in order.",
                  "A pytest fixture sets up the database.", agent_id="coder")
    cook = nodes(user, "Knead the bread dough for ten minutes.", "Simmer the tomato sauce slowly.",
                 "Salt the pasta water generously.", agent_id="cook")
    result = nodes_merge(actor=user, source_node_ids=[str(coder[0].pk), str(cook[0].pk)], target_name="x")
    assert result.priors_compatible is False and result.relational_edge_created
    assert "coder" in result.relational_note and "cook" in result.relational_note
    # One agent's near-duplicates merge.
    same = nodes_merge(actor=user, source_node_ids=[str(coder[1].pk), str(coder[2].pk)], target_name="y")
    assert same.priors_compatible is True and same.merged.agent_id == "coder"


# --- forget_concept -------------------------------------------------------------------------------------------------

def test_a_soft_forget_hides_the_node_keeps_its_vector_and_edges_in_the_snapshot(
        user, django_capture_on_commit_callbacks):
    node, x, y = nodes(user, "The staging password is hunter2.", "Staging runs on port 8443.", "Staging is in eu-west.")
    link(user, node, x, 0.6)
    link(user, y, node, 0.3)
    task = _task(user, [node], CurationTask.TaskType.SEMANTIC_CANCER)
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        forgotten = node_forget(actor=user, node_id=str(node.pk), reason="adversarial_injection")
    assert (forgotten.soft, forgotten.edges_removed) == (True, 2)
    assert not MemoryLink.objects.exists()
    node.refresh_from_db()
    assert node.deleted_at is not None and MemoryVector.objects.filter(memory=node).exists()
    tombstone = Tombstone.objects.get(memory=node)
    assert (tombstone.reason, tombstone.actor) == ("adversarial_injection", user)
    assert before + timedelta(days=30) <= tombstone.deadline <= timezone.now() + timedelta(days=30)
    entry = UndoEntry.objects.get(pk=forgotten.reversal_hash)
    assert len(entry.snapshot["links"]) == 2 and entry.operation == "forget"
    assert _actions(node)[-3:] == ["unlinked", "deleted", "forgotten"]
    task.refresh_from_db()
    assert task.status == CurationTask.Status.DONE
    assert GraphEvent.objects.filter(kind="memory.forgotten", payload__id=str(node.pk)).exists()


def test_a_forget_without_cascade_keeps_the_edges(user):
    node, x = nodes(user, "Old wiki page about the VPN.", "The VPN moved to WireGuard.")
    link(user, node, x, 0.6)
    assert node_forget(actor=user, node_id=str(node.pk), reason="obsolete", cascade_edges=False).edges_removed == 0
    assert MemoryLink.objects.count() == 1


def test_a_hard_forget_needs_user_requested_and_leaves_nothing(user):
    node, x = nodes(user, "My old phone number is 555-0100.", "Call me on the new number.")
    link(user, node, x, 0.6)
    with pytest.raises(InvalidInput) as raised:
        node_forget(actor=user, node_id=str(node.pk), reason="obsolete", soft_delete=False)
    assert raised.value.field == "soft_delete"
    forgotten = node_forget(actor=user, node_id=str(node.pk), reason="user_requested", soft_delete=False)
    assert (forgotten.soft, forgotten.edges_removed, forgotten.reversal_hash) == (False, 1, None)
    assert not Memory.objects.filter(pk=node.pk).exists() and not MemoryLink.objects.exists()
    assert not UndoEntry.objects.exists() and not Tombstone.objects.exists()
    assert Event.objects.filter(action="forgotten", node_ids__contains=[node.pk]).exists()


def test_forget_refuses_what_it_cannot_do(user, other_user):
    [node] = nodes(user, "Alice's note.")
    with pytest.raises(InvalidInput) as raised:
        node_forget(actor=user, node_id=str(node.pk), reason="bored")
    assert raised.value.field == "reason"
    with pytest.raises(NotFound):
        node_forget(actor=other_user, node_id=str(node.pk), reason="obsolete")
    node_forget(actor=user, node_id=str(node.pk), reason="obsolete")
    with pytest.raises(NotFound):  # forgotten already
        node_forget(actor=user, node_id=str(node.pk), reason="obsolete")


# --- search_tombstones ----------------------------------------------------------------------------------------------

def test_the_trash_is_searched_by_meaning_in_one_query(user, other_user, django_assert_num_queries):
    first, *rest = nodes(user, *[f"Lighthouse log {n}: the lamp at station {n} was checked" for n in range(50)])
    node_forget(actor=user, node_id=str(first.pk), reason="obsolete")
    tombstones_search(actor=user, query="warm the query model up")
    with django_assert_num_queries(1):
        hits = tombstones_search(actor=user, query="lighthouse lamp checks", top_k=100)
    assert [hit.tombstone.memory_id for hit in hits] == [first.pk]
    for node in rest:
        node_forget(actor=user, node_id=str(node.pk), reason="semantic_cancer")
    with django_assert_num_queries(1):
        hits = tombstones_search(actor=user, query="lighthouse lamp checks", top_k=100)
    assert len(hits) == 50 and all(hit.recoverable for hit in hits)
    assert tombstones_search(actor=other_user, query="lighthouse lamp checks") == []


def test_the_trash_says_why_who_and_whether_a_node_can_come_back(user, other_user):
    weather, cooking, a, b = nodes(user, "It rained all week in Lisbon.", "Simmer the tomato sauce slowly.",
                                   *DARK_MODE)
    node_forget(actor=user, node_id=str(weather.pk), reason="adversarial_injection")
    node_forget(actor=user, node_id=str(cooking.pk), reason="obsolete")
    merged = nodes_merge(actor=user, source_node_ids=[str(a.pk), str(b.pk)], target_name="dark mode")
    [hit] = tombstones_search(actor=user, query="rain in Lisbon", deletion_reason="adversarial")
    assert hit.tombstone.memory_id == weather.pk and hit.deleted_by == "alice"
    assert "adversarial injection" in hit.explanation and "can be restored until" in hit.explanation
    assert tombstones_search(actor=user, query="rain", deletion_reason="user_requested") == []
    found = tombstones_search(actor=user, query="editor theme", top_k=2)
    assert {hit.tombstone.memory_id for hit in found} == {a.pk, b.pk}
    assert all(hit.merged_into == str(merged.merged.pk) and "merged" in hit.explanation for hit in found)
    UndoEntry.objects.filter(pk=merged.reversal_hash).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert not any(hit.recoverable for hit in tombstones_search(actor=user, query="editor theme", top_k=2))
    later = timezone.now()
    assert tombstones_search(actor=user, query="rain", deleted_after=later.isoformat()) == []
    for arguments, field in (({"query": ""}, "query"), ({"query": "x", "top_k": 0}, "top_k"),
                             ({"query": "x", "deletion_reason": "merged"}, "deletion_reason"),
                             ({"query": "x", "deleted_after": "last week"}, "deleted_after")):
        with pytest.raises(InvalidInput) as raised:
            tombstones_search(actor=user, **arguments)
        assert raised.value.field == field

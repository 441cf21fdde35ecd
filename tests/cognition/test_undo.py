"""The undo log: an undo puts back exactly what a merge or a cascading forget changed (every field of every row,
vectors, links both ways, profiles, notes), a preview changes nothing, a hash runs once, for its owner, until it
expires; an undo whose plan changed since its preview is refused."""
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.cognition.models import Annotation, Event, NodeProfile, Tombstone, UndoEntry
from apps.cognition.services.curation import annotation_add, node_forget, nodes_merge
from apps.cognition.services.undo import undo_apply, undo_for_node
from apps.core.exceptions import Conflict, InvalidInput, NotFound
from apps.graph.models import GraphEvent
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_restore
from tests.cognition.curation_support import everything, graph_state, link, nodes

pytestmark = pytest.mark.django_db


@pytest.fixture
def graph(user, other_user):
    """Two near-duplicates with profiles, notes and edges both ways (one to the other), and their neighbours."""
    a, b, x, y = nodes(user, "The user prefers dark mode in every editor.",
                       "Dark mode is what the user wants in all their editors.",
                       "Editors are configured by the dotfiles repository.", "The user works late at night.",
                       tags=["ui"], agent_id="assistant")
    NodeProfile.objects.create(memory=a, name="dark mode", rationale="said twice", domain="general", delta_s=0.42)
    annotation_add(actor=user, node_id=str(a.pk), text="Confirmed in the 2026 survey.", reference_node_id=str(y.pk))
    link(user, a, x, 0.4, "causal")
    link(user, b, x, 0.7)
    link(user, y, a, 0.5, "temporal")
    link(user, a, b, 0.9)
    MemoryLink.objects.filter(source=a, target=x).update(traversal_count=7)
    Memory.objects.filter(pk=a.pk).update(access_count=3, last_accessed_at=timezone.now() - timedelta(hours=5))
    return {"a": a, "b": b, "x": x, "y": y}


def test_undo_of_a_merge_is_exact_row_by_row(user, graph, django_capture_on_commit_callbacks):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    merged = nodes_merge(actor=user, source_node_ids=[str(graph["a"].pk), str(graph["b"].pk)], target_name="Dark mode",
                         merge_strategy="summarize")
    assert graph_state(ids) != before
    with django_capture_on_commit_callbacks(execute=True):
        result = undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert result.executed and result.plan.removed_nodes == [str(merged.merged.pk)]
    assert graph_state(ids) == before
    assert not Memory.objects.filter(pk=merged.merged.pk).exists()
    assert not Tombstone.objects.exists()
    assert UndoEntry.objects.get().used_at is not None
    assert Event.objects.filter(action="restored", node_ids__contains=[graph["a"].pk]).exists()
    applied = GraphEvent.objects.get(kind="undo.applied")
    assert applied.payload["removed"] == [str(merged.merged.pk)]
    assert {node["id"] for node in applied.payload["nodes"]} == {str(graph["a"].pk), str(graph["b"].pk)}


def test_undo_of_a_cascading_forget_is_exact_row_by_row(user, graph):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    forgotten = node_forget(actor=user, node_id=str(graph["a"].pk), reason="obsolete")
    assert forgotten.edges_removed == 3 and graph_state(ids) != before
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    assert graph_state(ids) == before


def test_restore_concept_finds_the_undo_of_the_nodes_forget_and_of_a_merge(user, other_user, graph):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    forgotten = node_forget(actor=user, node_id=str(graph["x"].pk), reason="obsolete")
    assert undo_for_node(actor=user, node_id=str(graph["x"].pk)) == forgotten.reversal_hash
    with pytest.raises(NotFound):
        undo_for_node(actor=other_user, node_id=str(graph["x"].pk))
    undo_apply(actor=user, reversal_hash=undo_for_node(actor=user, node_id=str(graph["x"].pk)), preview=False)
    merged = nodes_merge(actor=user, source_node_ids=[str(graph["a"].pk), str(graph["b"].pk)], target_name="m")
    assert undo_for_node(actor=user, node_id=str(graph["b"].pk)) == merged.reversal_hash
    undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert graph_state(ids) == before
    with pytest.raises(NotFound):  # live again: nothing in the trash
        undo_for_node(actor=user, node_id=str(graph["b"].pk))


def test_a_preview_changes_nothing_and_lists_the_plan(user, graph):
    merged = nodes_merge(actor=user, source_node_ids=[str(graph["a"].pk), str(graph["b"].pk)], target_name="m")
    annotation_add(actor=user, node_id=str(merged.merged.pk), text="A note on the merged node.")
    state, events = everything(), Event.objects.count()
    preview = undo_apply(actor=user, reversal_hash=merged.reversal_hash)
    assert not preview.executed
    assert everything() == state and Event.objects.count() == events
    plan = preview.plan.as_dict()
    assert plan["adds"] == {"nodes": sorted([str(graph["a"].pk), str(graph["b"].pk)]), "edges": 4}
    assert plan["removes"] == {"nodes": [str(merged.merged.pk)], "edges": 2, "annotations": 1}
    entry = UndoEntry.objects.get()
    assert entry.used_at is None and entry.previewed_digest == preview.plan.digest
    # Previewing again, unchanged, gives the same plan; executing then does it.
    assert undo_apply(actor=user, reversal_hash=merged.reversal_hash).plan.digest == preview.plan.digest
    undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert not Memory.objects.filter(pk=merged.merged.pk).exists()


def test_an_undo_whose_plan_changed_since_its_preview_is_refused(user, graph):
    merged = nodes_merge(actor=user, source_node_ids=[str(graph["a"].pk), str(graph["b"].pk)], target_name="m")
    undo_apply(actor=user, reversal_hash=merged.reversal_hash)
    annotation_add(actor=user, node_id=str(merged.merged.pk), text="Written after the preview.")
    with pytest.raises(Conflict) as raised:
        undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert raised.value.extra["field"] == "reversal_hash"
    assert Memory.objects.filter(pk=merged.merged.pk).exists() and UndoEntry.objects.get().used_at is None
    # A new preview shows the new plan, and then the undo runs.
    assert undo_apply(actor=user, reversal_hash=merged.reversal_hash).plan.removed_annotations == 1
    undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert not Annotation.objects.filter(memory_id=merged.merged.pk).exists()


def test_a_used_unknown_or_another_users_hash_is_refused(user, other_user, graph):
    forgotten = node_forget(actor=user, node_id=str(graph["y"].pk), reason="obsolete")
    for hash_, actor, error in ((forgotten.reversal_hash, other_user, NotFound), ("f" * 64, user, NotFound),
                                ("", user, InvalidInput)):
        with pytest.raises(error) as raised:
            undo_apply(actor=actor, reversal_hash=hash_, preview=False)
        assert raised.value.extra["field"] == "reversal_hash"
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    with pytest.raises(InvalidInput, match="used already") as raised:
        undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    with pytest.raises(InvalidInput, match="used already"):
        undo_apply(actor=user, reversal_hash=forgotten.reversal_hash)


def test_an_undo_expires_after_thirty_days_on_a_fixed_clock(user, graph, monkeypatch):
    start = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: start)
    forgotten = node_forget(actor=user, node_id=str(graph["y"].pk), reason="obsolete")
    assert forgotten.restore_deadline == start + timedelta(days=30)
    monkeypatch.setattr(timezone, "now", lambda: start + timedelta(days=30) - timedelta(seconds=1))
    assert not undo_apply(actor=user, reversal_hash=forgotten.reversal_hash).executed  # still within
    monkeypatch.setattr(timezone, "now", lambda: start + timedelta(days=30))
    with pytest.raises(InvalidInput, match="expired") as raised:
        undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    assert raised.value.extra["field"] == "reversal_hash"
    with pytest.raises(InvalidInput):
        undo_for_node(actor=user, node_id=str(graph["y"].pk))
    assert Memory.objects.get(pk=graph["y"].pk).deleted_at is not None


def test_an_undo_cannot_bring_back_an_edge_to_a_node_gone_for_good(user, graph):
    forgotten = node_forget(actor=user, node_id=str(graph["a"].pk), reason="obsolete")
    node_forget(actor=user, node_id=str(graph["y"].pk), reason="user_requested", soft_delete=False)
    plan = undo_apply(actor=user, reversal_hash=forgotten.reversal_hash).plan
    assert (plan.restored_edges, plan.lost_edges) == (2, 1)  # a->x and a->b; y->a went with y
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    restored = graph_state([graph["a"].pk])
    assert {(row["source_id"], row["target_id"]) for row in restored["links"].values()} == {
        (graph["a"].pk, graph["x"].pk), (graph["a"].pk, graph["b"].pk)}
    # The note on a referred to y, which is gone: it comes back without its reference.
    [note] = restored["annotations"].values()
    assert note["reference_id"] is None and note["text"] == "Confirmed in the 2026 survey."


def test_an_undo_of_a_merge_removes_the_merged_node_even_when_it_was_forgotten_since(user, graph):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    merged = nodes_merge(actor=user, source_node_ids=[str(graph["a"].pk), str(graph["b"].pk)], target_name="m")
    node_forget(actor=user, node_id=str(merged.merged.pk), reason="obsolete")
    undo_apply(actor=user, reversal_hash=merged.reversal_hash, preview=False)
    assert graph_state(ids) == before
    assert not Memory.objects.filter(pk=merged.merged.pk).exists() and not Tombstone.objects.exists()


def test_an_undo_of_a_forget_that_kept_the_edges_brings_back_only_the_node(user, graph):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    forgotten = node_forget(actor=user, node_id=str(graph["a"].pk), reason="obsolete", cascade_edges=False)
    plan = undo_apply(actor=user, reversal_hash=forgotten.reversal_hash).plan
    assert (plan.added_nodes, plan.restored_edges, plan.lost_edges) == ([str(graph["a"].pk)], 0, 0)
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    assert graph_state(ids) == before


def test_a_link_made_since_between_the_same_nodes_gives_way_to_the_original(user, graph):
    ids = [node.pk for node in graph.values()]
    before = graph_state(ids)
    forgotten = node_forget(actor=user, node_id=str(graph["a"].pk), reason="obsolete")
    memory_restore(actor=user, memory_id=graph["a"].pk)  # from the dashboard's trash, which knows no undo
    link(user, graph["a"], graph["x"], 0.95, "hierarchical")
    plan = undo_apply(actor=user, reversal_hash=forgotten.reversal_hash).plan
    assert plan.added_nodes == [] and str(graph["a"].pk) in plan.changed
    undo_apply(actor=user, reversal_hash=forgotten.reversal_hash, preview=False)
    assert graph_state(ids) == before


def test_the_relational_edge_of_a_declined_merge_is_undone_exactly(user, django_capture_on_commit_callbacks):
    """Priors that disagree link the nodes instead of merging them: a link already on a pair takes the analogical
    type and new weight, a missing one is made. The reversal hash puts the old link back field by field and removes
    the new one."""
    python, java, kotlin = nodes(user, "In Python, a list is a dynamic array.", "In Java, a List is an interface.",
                                 "In Kotlin, a List is read-only.")
    for memory, domain in ((python, "code"), (java, "research"), (kotlin, "research")):
        NodeProfile.objects.create(memory=memory, domain=domain)
    existing = link(user, python, java, 0.3, "causal")
    MemoryLink.objects.filter(pk=existing.pk).update(traversal_count=4)
    ids = [python.pk, java.pk, kotlin.pk]
    before = graph_state(ids)
    related = nodes_merge(actor=user, source_node_ids=[str(node) for node in ids], target_name="Lists")
    assert related.relational_edge_created and len(related.reversal_hash) == 64
    overwritten = MemoryLink.objects.get(pk=existing.pk)
    assert overwritten.link_type == "analogical" and overwritten.weight != 0.3
    assert MemoryLink.objects.filter(source=python, target=kotlin, link_type="analogical").exists()
    entry = UndoEntry.objects.get(pk=related.reversal_hash)
    assert (entry.owner, entry.operation) == (user, "relate")
    plan = undo_apply(actor=user, reversal_hash=related.reversal_hash).plan
    assert plan.as_dict()["adds"] == {"nodes": [], "edges": 1}
    assert plan.as_dict()["removes"] == {"nodes": [], "edges": 1, "annotations": 0}
    with django_capture_on_commit_callbacks(execute=True):
        undo_apply(actor=user, reversal_hash=related.reversal_hash, preview=False)
    assert graph_state(ids) == before
    undone = Event.objects.filter(detail__reason="undo", node_ids__contains=[python.pk])
    assert sorted(undone.values_list("action", flat=True)) == ["linked", "unlinked"]
    assert GraphEvent.objects.filter(kind="memory.relinked").exists()


def test_a_relational_edge_changed_since_the_preview_refuses_the_undo(user, other_user):
    code, legal = nodes(user, "A contract in code is a precondition.", "A contract in law binds two parties.")
    NodeProfile.objects.create(memory=code, domain="code")
    NodeProfile.objects.create(memory=legal, domain="legal")
    related = nodes_merge(actor=user, source_node_ids=[str(code.pk), str(legal.pk)], target_name="Contracts")
    with pytest.raises(NotFound):
        undo_apply(actor=other_user, reversal_hash=related.reversal_hash)
    undo_apply(actor=user, reversal_hash=related.reversal_hash)
    link(user, code, legal, 0.95, "semantic")  # rewritten after the preview
    with pytest.raises(Conflict):
        undo_apply(actor=user, reversal_hash=related.reversal_hash, preview=False)
    undo_apply(actor=user, reversal_hash=related.reversal_hash)
    undo_apply(actor=user, reversal_hash=related.reversal_hash, preview=False)
    assert not MemoryLink.objects.exists()  # there was no link before the merge was declined

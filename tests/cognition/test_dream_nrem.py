"""NREM on the owner's real graph (PostgreSQL, pgvector, MiniLM): Hebbian weights by the formula on a hand-built
replay, pruning at the floor, the co-activation edge, near-duplicate merges and tasks, and the run's one undo that
puts the graph back exactly."""
from __future__ import annotations

import pytest

from apps.cognition.models import ConsolidationRun, CurationTask, Event, UndoEntry, UndoPart
from apps.cognition.services.dream import dream_execute, dream_trigger
from apps.cognition.services.undo import undo_apply
from apps.core.exceptions import Conflict
from apps.memories.models import Memory, MemoryLink
from tests.cognition.curation_support import everything, graph_state, link, nodes
from tests.cognition.dream_support import expected, item, session, weight

pytestmark = pytest.mark.django_db


def merges_of(run: ConsolidationRun) -> list[str]:
    """The reversal hashes of the merges the run made: its undo's parts cover them."""
    return [merge for covers in UndoPart.objects.filter(entry_id=run.reversal_hash).order_by("seq")
            .values_list("snapshot__covers", flat=True) for merge in covers or []]


def dream(user, **options) -> ConsolidationRun:
    run = dream_trigger(actor=user, phase=options.pop("phase", "nrem"), **options)
    return dream_execute(run_id=run.pk)


def test_replay_updates_each_co_activated_edge_by_the_formula_item_after_item(user):
    a, b, c, d = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.",
                       "Gamma queue carries invoice events.", "Delta is a cat.")
    link(user, a, b, 0.5)
    link(user, b, c, 0.4)
    link(user, c, b, 0.6)
    link(user, a, d, 0.7)
    talk = session(user)
    first = item(talk, (a, 0.8), (b, 0.4), (c, 0.2))  # activations 1, 0.5, 0.25
    second = item(talk, (b, 0.9), (c, 0.9))  # 1, 1
    run = dream(user)
    assert run.status == "completed", run.notes
    assert weight(a, b) == pytest.approx(expected(0.5, 1.0, 0.5), abs=1e-12)
    assert weight(b, c) == pytest.approx(expected(expected(0.4, 0.5, 0.25), 1.0, 1.0), abs=1e-12)
    assert weight(c, b) == pytest.approx(expected(expected(0.6, 0.5, 0.25), 1.0, 1.0), abs=1e-12)
    assert weight(a, d) == 0.7  # never co-activated: untouched
    assert MemoryLink.objects.get(source=a, target=b).last_activated_at == first.created_at
    assert MemoryLink.objects.get(source=b, target=c).last_activated_at == second.created_at
    assert MemoryLink.objects.get(source=a, target=d).last_activated_at is None
    counters = run.checkpoint["counters"]
    assert (counters["edges_strengthened"], counters["edges_pruned"], counters["items_replayed"]) == (3, 0, 2)
    # One Event per batch (batches are sized by time, one item first), each under the run's hash, by no user.
    dreamed = list(Event.objects.filter(action=Event.Action.DREAMED, owner=user))
    assert {(event.reversal_hash, event.actor) for event in dreamed} == {(run.reversal_hash, None)}
    assert {node for event in dreamed for node in event.node_ids} == {a.pk, b.pk, c.pk}
    assert run.checkpoint["eta"] == 0.01  # acetylcholine at rest (no neuromodulation yet)
    # The next dream replays only what came after: nothing, and it says so.
    again = dream(user)
    assert weight(a, b) == pytest.approx(expected(0.5, 1.0, 0.5), abs=1e-12)
    assert any("no session item since the last dream" in note for note in again.notes)


def test_an_edge_that_ends_at_the_floor_is_pruned_and_the_undo_brings_it_back(user):
    e, f, g, h = nodes(user, "Echo.", "Foxtrot.", "Golf.", "Hotel.")
    link(user, e, f, 0.05)
    link(user, g, h, 0.05)
    before = graph_state([e.pk, f.pk, g.pk, h.pk])
    talk = session(user)
    item(talk, (e, 1.0), (f, 0.001))  # 0.05 x 0.999 + 0.01 x 0.001 < 0.05: the floor
    item(talk, (g, 1.0), (h, 1.0))  # 0.05 x 0.999 + 0.01: above it
    run = dream(user)
    assert weight(e, f) is None
    assert weight(g, h) == pytest.approx(expected(0.05, 1.0, 1.0), abs=1e-12)
    assert run.checkpoint["counters"]["edges_pruned"] == 1
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert graph_state([e.pk, f.pk, g.pk, h.pk]) == before
    assert ConsolidationRun.objects.get(pk=run.pk).status == "rolled_back"


def test_a_pair_co_activated_three_times_without_an_edge_gets_one(user):
    a, b, c = nodes(user, "Kafka topic for orders.", "Orders consumer group.", "Unrelated lunch menu.")
    talk = session(user)
    for _ in range(3):
        item(talk, (a, 0.9), (b, 0.6))
    last = item(talk, (a, 0.9), (c, 0.5))
    item(talk, (a, 0.9), (c, 0.5))  # twice only
    run = dream(user)
    made = MemoryLink.objects.get(source=a, target=b)  # from the more strongly activated node
    assert (made.link_type, made.origin, made.weight) == ("semantic", "nrem", 0.3)
    assert made.last_activated_at < last.created_at
    assert not MemoryLink.objects.filter(source__in=[a, c], target__in=[a, c]).exists()
    assert run.checkpoint["counters"]["new_edges_created"] == 1
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert not MemoryLink.objects.filter(pk=made.pk).exists()


def test_near_duplicates_are_merged_or_proposed_and_the_runs_undo_restores_the_graph_exactly(user):
    dark, dark_again, kube, kube_again, soup = nodes(
        user, "The user prefers dark mode in every editor.", "The user prefers dark mode in all of their editors.",
        "The staging cluster runs Kubernetes 1.30 on three nodes.", "Staging runs Kubernetes 1.30 on three nodes.",
        "Grandma's tomato soup needs a pinch of sugar.")
    link(user, dark, soup, 0.6)
    link(user, dark_again, soup, 0.5)
    link(user, soup, dark_again, 0.4)
    link(user, kube, soup, 0.3)
    talk = session(user)
    item(talk, (dark, 1.0), (soup, 0.5))
    for _ in range(3):
        item(talk, (kube, 0.7), (dark_again, 0.7))
    before = everything()
    run = dream(user)
    assert run.status == "completed", run.notes
    counters = run.checkpoint["counters"]
    assert (counters["merges"], counters["nodes_merged"], counters["tasks_opened"]) == (1, 2, 1)
    assert counters["new_edges_created"] == 1 and counters["edges_strengthened"] == 1
    assert set(Memory.objects.filter(deleted_at__isnull=False).values_list("pk", flat=True)) == {dark.pk,
                                                                                                dark_again.pk}
    merged = Memory.objects.get(deleted_at__isnull=True, content__startswith="The user prefers")
    assert MemoryLink.objects.filter(source=merged, target=soup).exists()
    [task] = CurationTask.objects.filter(owner=user, task_type="potential_merge")
    assert sorted(task.node_ids) == sorted([kube.pk, kube_again.pk])
    [merge_hash] = merges_of(run)
    assert UndoEntry.objects.get(pk=run.reversal_hash).operation == "dream"
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert everything() == before
    assert UndoEntry.objects.get(pk=merge_hash).used_at is not None  # covered by the dream's undo
    assert ConsolidationRun.objects.get(pk=run.pk).status == "rolled_back"


def test_a_merge_is_undoable_on_its_own_too(user):
    dark, dark_again = nodes(user, "The user prefers dark mode in every editor.",
                             "The user prefers dark mode in all of their editors.")
    before = everything()
    run = dream(user)
    [merge_hash] = merges_of(run)
    undo_apply(actor=user, reversal_hash=merge_hash, preview=False)
    assert everything() == before


def test_incompatible_priors_are_proposed_not_merged(user):
    dark, dark_again = nodes(user, "The user prefers dark mode in every editor.",
                             "The user prefers dark mode in all of their editors.")
    from apps.cognition.models import NodeProfile

    NodeProfile.objects.create(memory=dark, domain="code")
    NodeProfile.objects.create(memory=dark_again, domain="legal")
    run = dream(user)
    assert run.checkpoint["counters"]["merges"] == 0
    [task] = CurationTask.objects.filter(owner=user, task_type="potential_merge")
    assert "different domains" in task.reason
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 2


def test_one_dream_per_user_at_a_time(user, other_user):
    first = dream_trigger(actor=user, phase="nrem")
    with pytest.raises(Conflict):
        dream_trigger(actor=user, phase="nrem")
    dream_trigger(actor=other_user, phase="nrem")  # another user's is their own
    dream_execute(run_id=first.pk)
    assert dream_trigger(actor=user, phase="nrem").pk != first.pk  # finished: a new one may start


def test_the_learning_rate_is_ten_times_the_owners_acetylcholine(user):
    a, b = nodes(user, "Alpha service owns billing.", "Beta service sends invoices.")
    link(user, a, b, 0.5)
    talk = session(user)
    item(talk, (a, 1.0), (b, 1.0))
    talk.learning_score = 0.5  # acetylcholine 0.001 x 1.5
    talk.save(update_fields=["learning_score"])
    run = dream(user)
    assert run.checkpoint["eta"] == pytest.approx(0.015)
    assert weight(a, b) == pytest.approx(expected(0.5, 1.0, 1.0, eta=0.015), abs=1e-12)

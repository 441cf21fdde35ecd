"""A dream at scale (issue 20's 100k findings), on the real graph (PostgreSQL, pgvector, MiniLM): the undo of a run
with many merges takes a number of statements that does not grow with its nodes, records each node once and puts
the graph back exactly; a run's undo is appended batch by batch, never rewritten; batches are sized by the time an
item takes (an injected clock), with counters still equal to the rows changed."""
from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cognition.models import Event, UndoEntry, UndoPart
from apps.cognition.services.dream import dream_execute, dream_trigger, runs
from apps.cognition.services.dream.limits import BATCH_SECONDS
from apps.cognition.services.dream.parts import empty_snapshot
from apps.cognition.services.undo import snapshot_join, undo_apply
from apps.memories.models import MemoryLink
from tests.cognition.curation_support import everything, nodes
from tests.cognition.test_dream_runs import chain, changed_links

pytestmark = pytest.mark.django_db

# Unrelated facts (cosines well under 0.90 to each other); each is stored twice, the copy in capitals, which MiniLM's
# uncased vocabulary reads as the same text: cosine 1.0, a merge.
FACTS = ("The staging cluster runs Kubernetes 1.30 on three nodes.",
         "Invoices are emailed to customers on the first of each month.",
         "The office coffee machine descales itself every Sunday night.",
         "Our mobile app crashes when the camera permission is denied.",
         "Grandma's lasagna recipe uses nutmeg in the bechamel sauce.",
         "The quarterly board meeting moved to the Lisbon office.",
         "Backups of the orders database are kept for ninety days.",
         "The cat refuses to eat anything but salmon on Fridays.")


def duplicated(user, count: int) -> None:
    nodes(user, *FACTS[:count], *[fact.upper() for fact in FACTS[:count]])


def undo_statements(user, merges: int) -> int:
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert run.status == "completed" and run.checkpoint["counters"]["merges"] == merges, run.notes
    with CaptureQueriesContext(connection) as statements:
        undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    restored = Event.objects.filter(owner=user, action=Event.Action.RESTORED)
    purged = Event.objects.filter(owner=user, action=Event.Action.PURGED, detail__reversal_hash=run.reversal_hash)
    # Each record names its own node: the merged nodes the undo removed are each purged once, listed nowhere else.
    assert restored.count() == 2 * merges and purged.count() == merges
    assert all(event.detail == {"reversal_hash": run.reversal_hash, "operation": "dream", "removed_count": merges}
               and len(event.node_ids) == 1 for event in restored)
    return len(statements)


def test_the_undo_of_a_dream_with_twice_the_merges_takes_no_more_statements_and_restores_exactly(user, other_user):
    duplicated(user, 4)
    duplicated(other_user, 8)
    before = everything()
    few = undo_statements(user, 4)
    many = undo_statements(other_user, 8)
    # Rows go back in batched statements: twice the nodes, not one statement more per node.
    assert many == few, (few, many)
    assert everything() == before


class Clock:
    """A clock that moves only when the test says: each replayed item costs ``cost`` seconds of it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.cost = 0.0

    def __call__(self) -> float:
        return self.now


def paced_replay(monkeypatch, clock: Clock, *, slower_after: int | None = None) -> list[int]:
    """The batch sizes the run asks the replay for; each batch's items advance the clock by their cost."""
    sizes: list[int] = []
    replay = runs.BATCHES["nrem_replay"]

    def timed(ctx, cursor, size):
        sizes.append(size)
        work = replay(ctx, cursor, size)
        clock.now += clock.cost * work.items
        if len(sizes) == slower_after:
            clock.cost *= 5
        return work

    monkeypatch.setitem(runs.BATCHES, "nrem_replay", timed)
    return sizes


def test_batches_are_sized_by_the_time_an_item_takes_and_counters_still_equal_the_rows(user, other_user,
                                                                                      monkeypatch):
    chain(user, 41)  # forty items, each reweighting its own edge
    before = dict(MemoryLink.objects.values_list("pk", "weight"))
    clock = Clock()
    clock.cost = BATCH_SECONDS / 5  # five items fit a batch
    sizes = paced_replay(monkeypatch, clock, slower_after=6)
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk, clock=clock)
    assert run.status == "completed", run.notes
    # One item first, doubling while the items are quick, held at the five that fit; once an item takes the whole
    # batch's time (after the sixth), one at a time.
    assert sizes[:8] == [1, 2, 4, 5, 5, 5, 5, 1] and set(sizes[8:]) == {1}, sizes
    assert run.progress["steps"]["nrem_replay"]["batches"] == len(sizes)
    counters = run.checkpoint["counters"]
    assert counters["items_replayed"] == 40
    assert len(changed_links(before)) == counters["edges_strengthened"] == 40
    replayed = Event.objects.filter(owner=user, action=Event.Action.DREAMED, detail__phase="nrem_replay")
    assert sum(event.detail["counters"]["edges_strengthened"] for event in replayed) == 40
    assert replayed.count() == len(sizes)
    # Free items grow to the budget's batch_size and never past it.
    chain(other_user, 41)
    quick = Clock()
    sizes = paced_replay(monkeypatch, quick)
    run = dream_execute(run_id=dream_trigger(actor=other_user, phase="nrem", batch_size=6).pk, clock=quick)
    assert sizes == [1, 2, 4, 6, 6, 6, 6, 6, 6], sizes  # the last one asked for 6, got the 3 left


def test_a_run_of_many_batches_writes_its_undo_once_and_the_undo_reads_it_back_in_order(user):
    chain(user, 41)
    before = everything()
    run = dream_trigger(actor=user, phase="nrem", batch_size=1)
    with CaptureQueriesContext(connection) as statements:
        run = dream_execute(run_id=run.pk)
    assert run.status == "completed" and run.checkpoint["counters"]["edges_strengthened"] == 40
    entry = UndoEntry.objects.get(pk=run.reversal_hash)
    assert entry.snapshot == empty_snapshot()  # never rewritten: each batch appended its part
    parts = list(UndoPart.objects.filter(entry=entry).order_by("seq"))
    assert [part.seq for part in parts] == list(range(len(parts))) and len(parts) >= 40
    whole = empty_snapshot()
    for part in parts:
        snapshot_join(whole, part.snapshot)
    assert len({row["pk"] for row in whole["links"]}) == len(whole["links"]) >= 40  # each link kept once
    # What the run wrote of its undo is about what it keeps (each part once, with its few bytes of frame), not the
    # sum over its batches of everything kept so far (~20 times as much here).
    written = sum(len(query["sql"]) for query in statements.captured_queries
                  if "cognition_undo" in query["sql"] and query["sql"].startswith(("INSERT", "UPDATE")))
    kept = len(json.dumps(whole))
    assert kept < written < 3 * kept, (kept, written)
    undo_apply(actor=user, reversal_hash=run.reversal_hash, preview=False)
    assert everything() == before

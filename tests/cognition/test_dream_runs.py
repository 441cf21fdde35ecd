"""The dream's run: bounded work (a budget stop with counters equal to the rows changed), a query from another thread
stopping it within a batch, resumption from the checkpoint (after a budget stop and after a crash mid-batch) ending
in the graph an uninterrupted run makes, lease take-over, the Celery task, and user A's dream never touching B's."""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.cognition.models import ConsolidationRun
from apps.cognition.services.dream import dream_execute, dream_trigger, runs
from apps.cognition.services.dream.wake import wake
from apps.cognition.tasks import dream_run
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import MemoryLink
from apps.memories.services import memory_retrieve
from tests.cognition.curation_support import everything, graph_state, link, nodes
from tests.cognition.dream_support import graph_of, item, session

pytestmark = pytest.mark.django_db

ANIMALS = ("otter", "falcon", "badger", "heron", "lynx", "walrus", "gecko", "bison", "magpie", "salmon", "tortoise")
THINGS = ("mangoes", "granite", "violins", "tax forms", "snow tyres", "jazz records", "oak barrels")


def chain(user, count: int, *, weight: float = 0.5):
    """``count`` nodes linked one to the next, and a session whose i-th item activates nodes i and i + 1."""
    made = nodes(user, *[f"The {ANIMALS[index % 11]} keeps {THINGS[index % 7]} number {index}."
                         for index in range(count)])  # cosines below 0.81: nothing to dedupe
    for a, b in zip(made, made[1:]):
        link(user, a, b, weight)
    talk = session(user)
    for a, b in zip(made, made[1:]):
        item(talk, (a, 0.9), (b, 0.6))
    return made


def rich_graph(user) -> None:
    """Everything NREM does, once: edges to reweight and prune, pairs to link, a merge and a task."""
    made = chain(user, 7)
    dark, dark_again, kube, kube_again = nodes(
        user, "The user prefers dark mode in every editor.", "The user prefers dark mode in all of their editors.",
        "The staging cluster runs Kubernetes 1.30 on three nodes.", "Staging runs Kubernetes 1.30 on three nodes.")
    link(user, dark, made[0], 0.6)
    link(user, made[3], dark_again, 0.05)
    talk = session(user)
    item(talk, (made[3], 1.0), (dark_again, 0.001))
    for _ in range(3):
        item(talk, (kube, 0.8), (made[5], 0.5), (dark, 0.4))  # no ties: an edge's direction follows activation


def changed_links(before: dict) -> dict:
    now = {row.pk: row.weight for row in MemoryLink.objects.all()}
    return {pk: weight for pk, weight in now.items() if pk in before and before[pk] != weight}


def test_a_budget_stops_the_run_after_its_batches_with_counters_equal_to_the_rows_changed(user):
    chain(user, 11)  # ten items, each reweighting its own edge
    before = dict(MemoryLink.objects.values_list("pk", "weight"))
    run = dream_trigger(actor=user, phase="nrem", batch_size=2, max_items=4)
    run = dream_execute(run_id=run.pk, clock=lambda: 0.0)  # work that takes no time: batches grow at once
    assert (run.status, run.progress["stop_reason"]) == ("interrupted", "budget")
    counters = run.checkpoint["counters"]
    # Sized by time, under the budget's batch_size: one item first, then 2, then the 1 left of max_items.
    assert (counters["batches"], counters["items"], counters["items_replayed"]) == (3, 4, 4)
    assert len(changed_links(before)) == counters["edges_strengthened"] == 4
    assert MemoryLink.objects.filter(last_activated_at__isnull=False).count() == 4
    # The next trigger resumes it from the checkpoint; the rest of the items are replayed once.
    again = dream_trigger(actor=user, phase="full_cycle")
    assert again.pk == run.pk and again.phase == "nrem"
    again = dream_execute(run_id=again.pk)
    assert again.status == "completed"
    assert len(changed_links(before)) == again.checkpoint["counters"]["edges_strengthened"] == 10
    assert any("Resumed" in note for note in again.notes)


def test_a_resumed_run_ends_in_the_graph_an_uninterrupted_run_makes(user, other_user, monkeypatch):
    rich_graph(user)
    rich_graph(other_user)
    whole = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)
    assert whole.status == "completed"
    # The other user's copy: stopped by its budget, crashed in the middle of a batch, resumed until done.
    calls = {"n": 0}
    replay = runs.BATCHES["nrem_replay"]

    def crashing(ctx, cursor, size):
        calls["n"] += 1
        work = replay(ctx, cursor, size)
        if calls["n"] == 3:  # in the second execution, after the batch's writes, before its commit
            raise RuntimeError("worker lost")
        return work

    monkeypatch.setitem(runs.BATCHES, "nrem_replay", crashing)
    run = dream_execute(run_id=dream_trigger(actor=other_user, phase="nrem", batch_size=2, max_items=3).pk)
    assert run.progress["stop_reason"] == "budget"
    with pytest.raises(RuntimeError):
        dream_execute(run_id=dream_trigger(actor=other_user, phase="nrem", batch_size=2, max_items=3).pk)
    assert ConsolidationRun.objects.get(pk=run.pk).progress["stop_reason"] == "error"
    for _ in range(20):
        run = dream_execute(run_id=dream_trigger(actor=other_user, phase="nrem", batch_size=2, max_items=3).pk)
        if run.status == "completed":
            break
    assert run.status == "completed"
    assert graph_of(other_user) == graph_of(user)
    assert run.checkpoint["counters"] | {"batches": 0, "items": 0} == \
        whole.checkpoint["counters"] | {"batches": 0, "items": 0}
    assert graph_of(user)["edges"] != []


def test_a_lease_held_by_a_live_worker_is_left_alone_and_a_silent_one_is_taken_over(user):
    chain(user, 3)
    run = dream_trigger(actor=user, phase="nrem")
    ConsolidationRun.objects.filter(pk=run.pk).update(status="running", lease_owner="elsewhere",
                                                      heartbeat_at=timezone.now() - timedelta(seconds=10))
    assert dream_execute(run_id=run.pk).lease_owner == "elsewhere"  # busy: nothing done
    assert MemoryLink.objects.filter(last_activated_at__isnull=False).count() == 0
    ConsolidationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=61))
    assert dream_trigger(actor=user, phase="nrem").pk == run.pk  # a silent one is resumed, not refused
    done = dream_execute(run_id=run.pk)
    assert (done.status, done.lease_owner) == ("completed", "")
    assert MemoryLink.objects.filter(last_activated_at__isnull=False).count() == 2


def test_the_task_runs_the_dream_and_a_second_delivery_changes_nothing(user):
    chain(user, 4)
    run = dream_trigger(actor=user, phase="nrem")
    answer = dream_run.apply(args=[str(run.pk)]).get()
    assert answer["status"] == "completed"
    state = everything()
    assert dream_run.apply(args=[str(run.pk)]).get()["status"] == "completed"
    assert everything() == state
    assert dream_run.apply(args=["00000000-0000-0000-0000-000000000000"]).get()["status"] is None


def test_user_a_dream_never_touches_user_b_nodes_or_edges(user, other_user):
    cube_register(actor=other_user, cube_id="bob-notes")
    cube_share(actor=other_user, cube_id="bob-notes", user=user.username, role="writer")
    theirs = nodes(other_user, "Bob's deploy checklist.", "Bob's rollback plan.", "Bob's on-call rota.",
                   cube_id="bob-notes")
    link(other_user, theirs[0], theirs[1], 0.05)
    link(other_user, theirs[1], theirs[2], 0.5)
    duplicate = nodes(other_user, "The user prefers dark mode in every editor.", cube_id="bob-notes")
    mine = nodes(user, "Alice's deploy checklist.", "The user prefers dark mode in all of their editors.")
    link(user, mine[0], mine[1], 0.5)
    talk = session(user)  # alice's queries activated bob's nodes (she may read and write his cube)
    for _ in range(3):
        item(talk, (theirs[0], 1.0), (theirs[1], 0.001), (theirs[2], 0.5), (mine[0], 0.5), (mine[1], 0.5))
    bob = session(other_user)
    item(bob, (theirs[1], 0.9), (theirs[2], 0.9))
    before = graph_state([node.pk for node in (*theirs, *duplicate)])
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert run.status == "completed"
    assert graph_state([node.pk for node in (*theirs, *duplicate)]) == before
    assert run.checkpoint["counters"]["edges_strengthened"] == 1  # alice's own edge only
    assert run.checkpoint["counters"]["merges"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_query_from_another_thread_stops_the_dream_within_a_batch(user):
    chain(user, 61)
    run = dream_trigger(actor=user, phase="nrem", batch_size=1)
    seen: dict = {}

    def query_when_dreaming() -> None:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                batches = ConsolidationRun.objects.filter(pk=run.pk).values_list("progress", flat=True)[0]["batches"]
                if batches >= 3:
                    seen["batches"] = batches
                    memory_retrieve(actor=user, text="the otter keeps mangoes", reinforce=False)
                    seen["queried"] = ConsolidationRun.objects.get(pk=run.pk).progress["batches"]
                    return
                time.sleep(0.005)
        finally:
            connection.close()

    thread = threading.Thread(target=query_when_dreaming)
    thread.start()
    stopped = dream_execute(run_id=run.pk)
    thread.join()
    assert (stopped.status, stopped.progress["stop_reason"]) == ("interrupted", "query"), stopped.progress
    assert stopped.abort_requested_at is not None
    # The batch under way when the query came may finish; the next one does not start.
    assert stopped.progress["batches"] <= seen["queried"] + 1 < 60
    resumed = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=200).pk)
    assert resumed.status == "completed" and resumed.checkpoint["counters"]["items_replayed"] == 60


def test_a_dream_that_does_not_stop_for_queries_is_not_woken(user, other_user):
    run = dream_trigger(actor=user, phase="nrem", abort_on_query=False)
    waking = dream_trigger(actor=other_user, phase="nrem")
    ConsolidationRun.objects.filter(pk__in=[run.pk, waking.pk]).update(status="running")
    assert wake([user.pk, other_user.pk]) == 1
    assert ConsolidationRun.objects.get(pk=run.pk).abort_requested_at is None
    assert ConsolidationRun.objects.get(pk=waking.pk).abort_requested_at is not None


def test_a_run_that_cannot_go_on_is_rolled_back_and_one_whose_model_is_away_pauses(user, monkeypatch):
    from apps.core.exceptions import PermissionDenied, Unavailable

    chain(user, 6)
    before = everything()
    replay, calls = runs.BATCHES["nrem_replay"], {"n": 0}

    def failing(error):
        def batch(ctx, cursor, size):
            calls["n"] += 1
            if calls["n"] == 2:
                raise error
            return replay(ctx, cursor, size)
        return batch

    monkeypatch.setitem(runs.BATCHES, "nrem_replay", failing(PermissionDenied("You can no longer write that cube.")))
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)
    assert run.status == "rolled_back" and run.progress["stop_reason"] == "refused"
    assert everything() == before  # the first batch's changes are undone
    calls["n"] = 0
    monkeypatch.setitem(runs.BATCHES, "nrem_replay", failing(Unavailable("The embedding model is not loaded.")))
    paused = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)
    assert (paused.status, paused.progress["stop_reason"]) == ("interrupted", "unavailable")
    monkeypatch.setitem(runs.BATCHES, "nrem_replay", replay)
    done = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)
    assert done.pk == paused.pk and done.status == "completed"
    assert done.checkpoint["counters"]["edges_strengthened"] == 5


def test_memetic_status_says_no_dream_is_available_while_one_is_under_way(user):
    from apps.cognition.selectors.status import dream_available

    chain(user, 3)
    assert dream_available(actor=user) is True
    run = dream_trigger(actor=user, phase="nrem")
    assert dream_available(actor=user) is False
    dream_execute(run_id=run.pk)
    assert dream_available(actor=user) is True


def test_a_run_whose_undo_expired_stops_where_it_was(user):
    from apps.cognition.models import UndoEntry

    chain(user, 6)
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2, max_items=2).pk)
    UndoEntry.objects.filter(pk=run.reversal_hash).delete()  # as cognition.purge_expired does after 30 days
    stopped = dream_execute(run_id=dream_trigger(actor=user, phase="nrem").pk)
    assert (stopped.pk, stopped.status, stopped.progress["stop_reason"]) == (run.pk, "completed", "expired")
    assert stopped.checkpoint["counters"]["items_replayed"] == 2


@pytest.mark.parametrize("seconds", [0.0, 3600.0])
def test_progress_goes_out_on_each_phases_first_and_last_batch_and_at_most_every_progress_seconds(
        user, monkeypatch, seconds):
    told = []
    monkeypatch.setattr(runs, "_progress", lambda run_id, cube_ids, **progress: told.append(progress))
    monkeypatch.setattr(runs, "PROGRESS_SECONDS", seconds)
    nodes(user, *(f"Note {n}: the harbour's crane number {n} was serviced on day {n}." for n in range(12)))
    run = dream_execute(run_id=dream_trigger(actor=user, phase="nrem", batch_size=2).pk)
    assert run.status == "completed", run.notes
    counters = run.checkpoint["counters"]
    by_phase: dict[str, list[int]] = {}
    for progress in told[:-1]:  # the last says how the run ended
        by_phase.setdefault(progress["phase"], []).append(progress["batch"])
    assert told[-1]["status"] == "completed"
    assert list(by_phase) == run.checkpoint["phases_done"]
    batches = [batch for published in by_phase.values() for batch in published]
    assert batches[0] == 1 and batches[-1] == counters["batches"] and batches == sorted(set(batches))
    if seconds:  # within the hour: only each phase's first and last batch
        assert all(len(published) <= 2 for published in by_phase.values())
        assert len(batches) < counters["batches"]
    else:
        assert batches == list(range(1, counters["batches"] + 1))

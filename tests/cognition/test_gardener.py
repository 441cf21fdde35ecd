"""The gardener on the real graph (PostgreSQL, pgvector, MiniLM) and a fake clock: the activity EWMA from counted
queries, the idle thresholds and auto-dream, each step of a cycle on real rows, the cycle's one undo that puts the
graph back exactly, a query that stops a cycle, and one user's gardener never touching another's graph."""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.cognition.models import ActivityState, ConsolidationRun, CurationTask, Event, Tombstone, UndoEntry
from apps.cognition.selectors.state import homeostasis_get
from apps.cognition.services.curation import node_forget
from apps.cognition.services.dream import dream_trigger
from apps.cognition.services.gardener.activity import activity_flush, count_query, ewma_step
from apps.cognition.services.gardener import cycle
from apps.cognition.services.gardener.cycle import gardener_run
from apps.cognition.services.gardener.limits import BATCH_SECONDS
from apps.cognition.services.undo import node_restore, undo_apply
from apps.core.exceptions import Conflict
from apps.graph.models import GraphEvent
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_retrieve, memory_search, retrieval
from tests.cognition.curation_support import everything, graph_state, link, nodes
from tests.cognition.gardener_support import FakeClock, age_link, age_node, idle_for
from tests.cognition.test_gardener_windows import graph

pytestmark = pytest.mark.django_db


def state_of(user) -> ActivityState:
    return ActivityState.objects.get(owner=user)


# --- activity -------------------------------------------------------------------------------------------------------

def test_activity_is_an_ewma_of_the_counted_queries_one_step_per_tick(user):
    clock = FakeClock()
    for _ in range(5):
        count_query(user.pk)
    clock.tick()
    assert state_of(user).activity == pytest.approx(0.3)  # 0.3 x min(1, 5 / 5)
    assert (state_of(user).last_tick_queries, state_of(user).pending_queries) == (5, 0)
    clock.tick()
    assert state_of(user).activity == pytest.approx(0.21)
    assert state_of(user).low_since is None
    clock.tick()
    assert state_of(user).activity == pytest.approx(0.147)
    assert state_of(user).low_since == clock.now
    for _ in range(2):
        count_query(user.pk)
    clock.tick(10)  # too soon after the last tick: the counts wait for the next one
    assert state_of(user).activity == pytest.approx(0.147)
    clock.tick(20)
    assert state_of(user).activity == pytest.approx(0.3 * 0.4 + 0.7 * 0.147)
    assert state_of(user).low_since is None  # two queries in a tick: 0.223, active again
    clock.tick(30)
    assert state_of(user).activity == pytest.approx(0.7 * (0.12 + 0.7 * 0.147))
    assert state_of(user).low_since is None  # 0.156
    clock.tick(30)
    assert state_of(user).low_since == clock.now  # 0.109: idle from this tick
    for _ in range(12):
        count_query(user.pk)
    clock.tick(30)
    assert state_of(user).activity == pytest.approx(0.3 + 0.7 ** 3 * (0.12 + 0.7 * 0.147))
    assert state_of(user).low_since is None
    before = state_of(user).activity
    clock.tick(300)  # ten ticks missed: replayed with nothing counted
    assert state_of(user).activity == pytest.approx(before * 0.7 ** 10)
    assert state_of(user).queries_total == 19 and state_of(user).pending_queries == 0


def test_ewma_spreads_the_queries_of_missed_ticks_over_them():
    assert ewma_step(0.0, 10, ticks=2) == pytest.approx(0.3 + 0.7 * 0.3)
    assert ewma_step(0.5, 0) == pytest.approx(0.35)


def test_retrieval_and_search_are_counted_without_a_statement_of_their_own(user):
    nodes(user, "The otter keeps mangoes in a drawer.")
    activity_flush()
    for announced, unannounced in ((memory_retrieve, retrieval.memory_retrieve),
                                   (memory_search, retrieval.memory_search)):
        unannounced(actor=user, text="otter mangoes", reinforce=False)  # warms retrieval's word cache
        with CaptureQueriesContext(connection) as plain:
            unannounced(actor=user, text="otter mangoes", reinforce=False)
        with CaptureQueriesContext(connection) as counted:
            announced(actor=user, text="otter mangoes", reinforce=False)
        assert len(counted) == len(plain)  # counting the query added no statement to it
    FakeClock().tick()
    assert state_of(user).last_tick_queries == 2 and state_of(user).last_query_at is not None


# --- when cycles and dreams are due ---------------------------------------------------------------------------------

def test_idle_thresholds_decide_cycles_and_the_auto_dream(user, other_user):
    clock = FakeClock()
    report = clock.tick()
    assert user.pk not in report.cycles  # idle since this tick only
    assert state_of(user).low_since == clock.now
    for _ in range(3):
        report = clock.tick()
    assert user.pk not in report.cycles and "a cycle starts after 2 idle minutes" in report.waiting[user.pk][0]
    for _ in range(10):
        count_query(other_user.pk)
    report = clock.tick()  # idle for 2 minutes now
    assert report.cycles == [user.pk]  # bob queried: not idle
    assert other_user.pk not in report.waiting  # only idle users wait
    gardener_run(actor=user, trigger="auto", now=clock.now)
    for _ in range(9):
        report = clock.tick()
        assert user.pk not in report.cycles
    assert any("minutes apart" in reason for reason in report.waiting[user.pk])
    report = clock.tick()  # 5 minutes after the last cycle
    assert report.cycles == [user.pk, other_user.pk] and report.dreams == []  # bob idle for 4 minutes, no cycle yet
    while (clock.now - state_of(user).low_since) < timedelta(minutes=10):
        report = clock.tick()
    [run_id] = report.dreams  # 10 idle minutes: the user's dream, not a cycle
    run = ConsolidationRun.objects.get(pk=run_id)
    assert (run.owner, run.status, user.pk in report.cycles) == (user, "queued", False)
    assert state_of(user).last_dream_at == clock.now
    report = clock.tick()
    assert report.dreams == [] and any("dream of yours is under way" in reason for reason in report.waiting[user.pk])
    ConsolidationRun.objects.filter(pk=run.pk).update(status="completed", updated_at=clock.now)
    report = clock.tick()
    assert user.pk not in [run.owner_id for run in ConsolidationRun.objects.filter(pk__in=report.dreams)]
    assert user.pk in report.cycles  # it dreamt since going idle: no second dream


def test_a_dream_the_user_triggered_since_going_idle_counts_as_the_auto_dream(user):
    clock = FakeClock()
    clock.tick()
    run = dream_trigger(actor=user, phase="nrem")
    ConsolidationRun.objects.filter(pk=run.pk).update(status="completed", updated_at=clock.advance(5))
    for _ in range(21):
        report = clock.tick()
        assert report.dreams == []


def test_one_cycle_at_a_time_and_none_during_a_dream(user):
    nodes(user, "A lone note.")
    ActivityState.objects.create(owner=user, cycle_token="someone", cycle_heartbeat_at=timezone.now())
    with pytest.raises(Conflict, match="under way"):
        gardener_run(actor=user)
    ActivityState.objects.filter(owner=user).update(cycle_heartbeat_at=timezone.now() - timedelta(minutes=5))
    assert gardener_run(actor=user).status == "completed"  # a silent cycle's lease is taken over
    dream_trigger(actor=user, phase="nrem")
    with pytest.raises(Conflict, match="dream"):
        gardener_run(actor=user)


def test_an_automatic_cycle_does_not_start_once_the_user_is_active_again(user):
    ActivityState.objects.create(owner=user, activity=0.5)
    with pytest.raises(Conflict, match="active again"):
        gardener_run(actor=user, trigger="auto")


# --- the steps --------------------------------------------------------------------------------------------------------

def test_prune_removes_weak_links_idle_a_day_and_keeps_the_rest(user, django_capture_on_commit_callbacks):
    a, b, c, d, e = nodes(user, "Alpha.", "Bravo.", "Charlie.", "Delta.", "Echo.")
    idle = age_link(link(user, a, b, 0.05), hours=30)
    never_used = age_link(link(user, a, e, 0.09), hours=48, activated=False)
    recent = age_link(link(user, a, c, 0.05), hours=2)
    strong = age_link(link(user, a, d, 0.5), hours=100)
    with django_capture_on_commit_callbacks(execute=True):
        report = gardener_run(actor=user)
    assert report.counters["edges_pruned"] == 2
    assert not MemoryLink.objects.filter(pk__in=[idle.pk, never_used.pk]).exists()
    assert MemoryLink.objects.filter(pk__in=[recent.pk, strong.pk]).count() == 2
    events = list(Event.objects.filter(owner=user, action=Event.Action.GARDENED))
    assert len(events) == 2  # a batch of one link first, then one of two that found the other
    assert {(event.detail["operation"], event.reversal_hash, event.actor_label) for event in events} == {
        ("prune", report.reversal_hash, "gardener")}
    assert {node for event in events for node in event.node_ids} == {a.pk, b.pk, e.pk}
    progress = list(GraphEvent.objects.filter(kind="gardener.changed").order_by("id"))
    assert [(event.payload["status"], event.payload["batch"]) for event in (progress[0], progress[-1])] == [
        ("running", 0), ("completed", report.counters["batches"])]  # where the cycle stands, batch after batch
    published = [event for event in progress if event.payload["step"] == "prune" and event.payload["relinked"]]
    assert {event.cube_id for event in published} == {a.cube_id} and len(published) == 2
    [relinked] = published[-1].payload["relinked"]
    assert relinked["id"] == str(a.pk)
    assert {edge["target"] for edge in relinked["outgoing_edges"]} == {str(c.pk), str(d.pk)}


def test_the_clock_decides_what_is_idle(user):
    a, b = nodes(user, "Alpha.", "Bravo.")
    weak = age_link(link(user, a, b, 0.05), hours=2)
    assert gardener_run(actor=user).counters["edges_pruned"] == 0
    ActivityState.objects.filter(owner=user).update(last_cycle_at=None)
    report = gardener_run(actor=user, now=timezone.now() + timedelta(hours=23))
    assert report.counters["edges_pruned"] == 1 and not MemoryLink.objects.filter(pk=weak.pk).exists()


def test_dedupe_merges_near_duplicates_as_nrem_does(user):
    dark, dark_again, kube, kube_again = nodes(
        user, "The user prefers dark mode in every editor.", "The user prefers dark mode in all of their editors.",
        "The staging cluster runs Kubernetes 1.30 on three nodes.", "Staging runs Kubernetes 1.30 on three nodes.")
    report = gardener_run(actor=user)
    assert (report.counters["merges"], report.counters["tasks_opened"]) == (1, 1)
    assert set(Memory.objects.filter(deleted_at__isnull=False).values_list("pk", flat=True)) == {dark.pk,
                                                                                                dark_again.pk}
    [task] = CurationTask.objects.filter(owner=user, task_type="potential_merge")
    assert sorted(task.node_ids) == sorted([kube.pk, kube_again.pk])
    # The next cycle compares only what changed since: the merged node.
    again = gardener_run(actor=user)
    assert (again.counters["nodes_compared"], again.counters["merges"]) == (1, 0)


def test_causal_cycles_are_cut_at_their_weakest_link_and_important_ones_open_a_task(user):
    a, b, c, d, e, f = nodes(user, "Stress causes poor sleep.", "Poor sleep causes fatigue.",
                             "Fatigue causes stress.", "Rain wets roads.", "Wet roads cause rain.", "Sunshine.")
    Memory.objects.filter(pk=a.pk).update(importance=0.8)
    Memory.objects.filter(pk__in=[b.pk, c.pk, d.pk, e.pk, f.pk]).update(importance=0.4)
    link(user, a, b, 0.9, "causal")
    weakest = link(user, b, c, 0.3, "causal")
    link(user, c, a, 0.8, "causal")
    link(user, d, e, 0.6, "causal")
    small = link(user, e, d, 0.5, "causal")
    link(user, a, f, 0.2, "semantic")  # not causal: never part of a cycle
    link(user, f, a, 0.2, "semantic")
    report = gardener_run(actor=user)
    assert (report.counters["cycles_broken"], report.counters["edges_cut"]) == (2, 2)
    assert not MemoryLink.objects.filter(pk__in=[weakest.pk, small.pk]).exists()
    assert MemoryLink.objects.filter(link_type="causal").count() == 3
    [task] = CurationTask.objects.filter(owner=user, task_type="semantic_cancer")
    assert sorted(task.node_ids) == sorted([a.pk, b.pk, c.pk]) and task.priority == "high"
    assert homeostasis_get(actor=user).suspects[0].reasons == ("conflict",)  # no cycle left, the task remains


def test_glymphatic_clearance_purges_what_expired_and_forgets_old_unused_orphans(user, other_user):
    orphan, used, linked, young, important, partner = nodes(
        user, "An orphan nobody read.", "An orphan that was read.", "A linked old note.", "A young orphan.",
        "An important orphan.", "The linked note's partner.")
    for memory in (orphan, used, linked, important):
        age_node(memory, days=40)
    Memory.objects.filter(pk__in=[orphan.pk, used.pk, linked.pk, young.pk]).update(importance=0.05)
    Memory.objects.filter(pk=used.pk).update(access_count=1, last_accessed_at=timezone.now() - timedelta(days=35))
    link(user, linked, partner, 0.9)
    expired, = nodes(user, "Forgotten long ago.")
    theirs, = nodes(other_user, "Bob forgot this long ago.")
    for owner, memory in ((user, expired), (other_user, theirs)):
        node_forget(actor=owner, node_id=memory.pk, reason="obsolete")
    Tombstone.objects.update(deadline=timezone.now() - timedelta(days=1))
    report = gardener_run(actor=user)
    assert (report.counters["nodes_forgotten"], report.counters["nodes_purged"]) == (1, 1)
    assert not Memory.objects.filter(pk=expired.pk).exists()
    assert Memory.objects.filter(pk=theirs.pk).exists()  # bob's trash is bob's
    tombstone = Tombstone.objects.get(memory=orphan)
    assert (tombstone.reason, tombstone.actor_label) == ("glymphatic_clearance", "gardener")
    assert set(Memory.objects.filter(deleted_at__isnull=True).values_list("pk", flat=True)) == {
        used.pk, linked.pk, young.pk, important.pk, partner.pk}
    node_restore(actor=user, node_id=orphan.pk)  # restorable from the trash on its own
    assert Memory.objects.get(pk=orphan.pk).deleted_at is None


def test_scaling_pulls_importance_toward_the_centre_and_records_it(user):
    notes = nodes(user, *[f"Scaled note number {index} about topic {index}." for index in range(6)])
    for index, memory in enumerate(notes):
        Memory.objects.filter(pk=memory.pk).update(importance=1.0 if index % 2 else 0.0)
    report = gardener_run(actor=user, batch_size=4, clock=lambda: 0.0)  # items take no time: batches double up to 4
    assert report.counters["nodes_scaled"] == 6
    health = homeostasis_get(actor=user)
    assert health.importance_variance == pytest.approx(0.10)
    assert health.mean_importance == pytest.approx(0.5)
    low, high = 0.5 - 0.5 * (0.10 / 0.25) ** 0.5, 0.5 + 0.5 * (0.10 / 0.25) ** 0.5
    assert sorted({round(value, 9) for value in Memory.objects.filter(owner=user).values_list(
        "importance", flat=True)}) == [round(low, 9), round(high, 9)]
    scalings = Event.objects.filter(owner=user, detail__operation="importance_scaling").order_by("created_at")
    assert [len(event.node_ids) for event in scalings] == [1, 2, 3]
    assert health.last_scaling_time == scalings.last().created_at
    ActivityState.objects.filter(owner=user).update(last_cycle_at=None)
    again = gardener_run(actor=user)
    assert again.counters["nodes_scaled"] == 0 and any("within 0.15" in note for note in again.notes)


# --- undo, abort, isolation -------------------------------------------------------------------------------------------

def test_undo_of_a_cycle_puts_the_graph_back_exactly(user):
    a, b, c, dark, dark_again, orphan = nodes(
        user, "Stress causes poor sleep.", "Poor sleep causes fatigue.", "Fatigue causes stress.",
        "The user prefers dark mode in every editor.", "The user prefers dark mode in all of their editors.",
        "An orphan nobody read.")
    age_link(link(user, a, dark, 0.05), hours=30)
    link(user, a, b, 0.9, "causal")
    link(user, b, c, 0.3, "causal")
    link(user, c, a, 0.8, "causal")
    link(user, dark, b, 0.7)
    age_node(orphan, days=40)
    for memory, importance in ((a, 1.0), (b, 0.0), (c, 1.0), (dark, 0.0), (dark_again, 1.0), (orphan, 0.02)):
        Memory.objects.filter(pk=memory.pk).update(importance=importance)
    before = everything()
    report = gardener_run(actor=user, batch_size=2)
    counters = report.counters
    assert (counters["edges_pruned"], counters["merges"], counters["cycles_broken"], counters["nodes_forgotten"]) \
        == (1, 1, 1, 1)
    assert counters["nodes_scaled"] == 4  # a, b, c and the merged node
    assert UndoEntry.objects.filter(owner=user, operation="gardener").count() == 1
    entry = UndoEntry.objects.get(pk=report.reversal_hash)
    preview = undo_apply(actor=user, reversal_hash=entry.pk)
    assert preview.plan.removed_nodes and not preview.executed
    undo_apply(actor=user, reversal_hash=entry.pk, preview=False)
    assert everything() == before
    assert UndoEntry.objects.filter(pk__in=entry.snapshot["covers"], used_at__isnull=True).count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_query_of_the_owner_stops_the_cycle_at_the_next_batch(user):
    chain = nodes(user, *[f"Link number {index} of a long chain." for index in range(25)])
    links = [MemoryLink(source=chain[i], target=chain[j], weight=0.05,
                        last_activated_at=timezone.now() - timedelta(days=3))
             for i in range(len(chain)) for j in range(len(chain)) if i < j][:200]
    MemoryLink.objects.bulk_create(links)
    seen: dict = {}

    def query_when_gardening() -> None:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                progress = ActivityState.objects.filter(owner=user).values_list("last_cycle", flat=True).first()
                if progress and progress.get("batches", 0) >= 3:
                    seen["before"] = progress["batches"]
                    memory_retrieve(actor=user, text="the otter keeps mangoes", reinforce=False)
                    return
                time.sleep(0.002)
        finally:
            connection.close()

    thread = threading.Thread(target=query_when_gardening)
    thread.start()
    report = gardener_run(actor=user, batch_size=1)
    thread.join()
    assert (report.status, report.stop_reason) == ("interrupted", "query"), report
    assert seen["before"] <= report.counters["batches"] < 200
    assert report.counters["edges_pruned"] == report.counters["batches"]
    assert state_of(user).last_cycle["status"] == "interrupted" and state_of(user).cycle_token == ""
    undo_apply(actor=user, reversal_hash=report.reversal_hash, preview=False)
    assert MemoryLink.objects.count() == 200


class Clock:
    """A clock that moves only when the test says: each pruned link costs ``cost`` seconds of it."""

    def __init__(self, cost: float) -> None:
        self.now = 0.0
        self.cost = cost

    def __call__(self) -> float:
        return self.now


def test_batches_are_sized_by_the_time_an_item_takes(user, monkeypatch):
    graph(user, 42)  # 41 weak idle links, one prune item each
    clock = Clock(BATCH_SECONDS / 5)  # five links fit a batch
    sizes: list[int] = []
    prune = cycle.BATCHES["prune"]

    def timed(tending, cursor, state, size):
        sizes.append(size)
        work = prune(tending, cursor, state, size)
        clock.now += clock.cost * work.items
        if len(sizes) == 6:
            clock.cost *= 5  # from the seventh batch on, one link takes the whole batch's time
        return work

    monkeypatch.setitem(cycle.BATCHES, "prune", timed)
    report = gardener_run(actor=user, clock=clock)
    # One item first, doubling while the items are quick, held at the five that fit; then one at a time.
    assert sizes[:8] == [1, 2, 4, 5, 5, 5, 5, 1] and set(sizes[8:]) == {1}, sizes
    assert report.counters["edges_pruned"] == 41 and MemoryLink.objects.count() == 0
    pruned = Event.objects.filter(owner=user, detail__operation="prune")
    assert sorted(len(event.detail["pruned"]) for event in pruned) == sorted(sizes[:-1])  # the last found none


def test_one_users_gardener_never_touches_anothers_graph(user, other_user):
    mine = nodes(user, "Stress causes poor sleep.", "Tired people snap at their colleagues.", "An orphan nobody read.")
    theirs = nodes(other_user, "Stress causes poor sleep.", "Tired people snap at their colleagues.",
                   "An orphan nobody read.",
                   "The user prefers dark mode in every editor.", "The user prefers dark mode in all editors.")
    for owner, (a, b, orphan) in ((user, mine), (other_user, theirs[:3])):
        link(owner, a, b, 0.9, "causal")
        link(owner, b, a, 0.8, "causal")
        age_node(orphan, days=40)
        Memory.objects.filter(pk=orphan.pk).update(importance=0.01)
    age_link(link(other_user, theirs[3], theirs[4], 0.05), hours=48)
    bobs = graph_state([memory.pk for memory in theirs])
    report = gardener_run(actor=user)
    assert report.counters["cycles_broken"] == 1 and report.counters["nodes_forgotten"] == 1
    assert graph_state([memory.pk for memory in theirs]) == bobs
    assert not Event.objects.filter(owner=other_user, action=Event.Action.GARDENED).exists()
    assert not CurationTask.objects.filter(owner=other_user).exists()
    assert not ActivityState.objects.filter(owner=other_user, last_cycle_at__isnull=False).exists()
    with pytest.raises(Exception):  # bob cannot undo alice's cycle
        undo_apply(actor=other_user, reversal_hash=report.reversal_hash, preview=False)

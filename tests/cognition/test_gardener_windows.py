"""The gardener on a graph larger than a cycle's window (limits.MAX_NODES lowered to WINDOW): successive cycles tend
the graph window by window, each at most WINDOW nodes, and together the whole of it (a round); the importance
variance is read once a round and its factor applied to every window; one window's cycle is undone exactly; a cycle
stopped in the middle of its window leaves the next cycle the same window, and no node is scaled twice; and one
user's windows never hold, read or change another's nodes."""
from __future__ import annotations

import math
import threading
import uuid

import psycopg
import pytest
from django.db import connection, connections

from apps.cognition.models import ActivityState, Event
from apps.cognition.selectors.state import homeostasis_get
from apps.cognition.services.gardener import limits
from apps.cognition.services.gardener.activity import count_query
from apps.cognition.services.gardener.cycle import gardener_run
from apps.cognition.services.undo import undo_apply
from apps.memories.models import Memory, MemoryLink
from tests.cognition.curation_support import everything, graph_state, link, nodes
from tests.cognition.gardener_support import age_link

pytestmark = pytest.mark.django_db

WINDOW = 20
ANIMALS = ("otter", "falcon", "badger", "heron", "lynx", "walrus", "gecko", "moose", "puffin", "marmot")
THINGS = ("mangoes", "granite", "violins", "lanterns", "kites")


@pytest.fixture(autouse=True)
def small_window(monkeypatch):
    monkeypatch.setattr(limits, "MAX_NODES", WINDOW)


def graph(user, count: int, prefix: str = "") -> list[Memory]:
    """``count`` distinct notes (no two near-duplicates), in id order, importance 0 and 1 alternately (variance 0.25),
    each but the last with a weak link idle two days to the next."""
    texts = [f"{prefix}The {ANIMALS[index % 10]} keeps {THINGS[index // 10 % 5]} number {index} in shed "
             f"{index * 37 % 101}." for index in range(count)]
    made = sorted(nodes(user, *texts), key=lambda memory: memory.pk)
    for index, memory in enumerate(made):
        Memory.objects.filter(pk=memory.pk).update(importance=float(index % 2))
    for source, target in zip(made, made[1:]):
        age_link(link(user, source, target, 0.05), hours=48)
    return made


def window_of(report, made: list[Memory]) -> list[Memory]:
    after, upto = report.window["after"], report.window["upto"]
    return [memory for memory in made if (after is None or memory.pk > uuid.UUID(after))
            and (upto is None or memory.pk <= uuid.UUID(upto))]


def scaled(value: float) -> float:
    return 0.5 + (value - 0.5) * math.sqrt(0.10 / 0.25)


def test_successive_cycles_tend_the_whole_graph_one_window_each(user):
    made = graph(user, 50)
    tended: list[str] = []
    for index, size in enumerate((WINDOW, WINDOW, 10), start=1):
        report = gardener_run(actor=user)
        window = window_of(report, made)
        ids = {str(memory.pk) for memory in window}
        assert report.status == "completed" and report.window["index"] == index and report.window["of"] == 3
        assert report.window["nodes"] == len(window) == size and report.window["last"] is (index == 3)
        assert report.counters["nodes_compared"] == size  # dedupe compared the window's nodes only
        # Every node it changed is in its window; a pruned link goes out from one (its target may lie beyond).
        scalings = Event.objects.filter(owner=user, detail__operation="importance_scaling",
                                        detail__started_at=report.started_at)
        changed = {str(node) for event in scalings for node in event.node_ids}
        assert changed == ids and report.counters["nodes_scaled"] == size <= WINDOW
        pruned = [entry for event in Event.objects.filter(owner=user, detail__operation="prune",
                                                          detail__started_at=report.started_at)
                  for entry in event.detail["pruned"]]
        assert {source for source, _, _, _ in pruned} == ids - {str(made[-1].pk)}
        assert report.counters["edges_pruned"] == len(pruned)
        tended.extend(sorted(ids))
    assert tended == [str(memory.pk) for memory in made]  # each node once, in id order
    assert MemoryLink.objects.count() == 0
    # One factor for the round, read before its first window was scaled: the graph's variance is now the target.
    values = sorted({round(value, 9) for value in Memory.objects.filter(owner=user).values_list("importance",
                                                                                               flat=True)})
    assert values == [round(scaled(0.0), 9), round(scaled(1.0), 9)]
    assert homeostasis_get(actor=user).importance_variance == pytest.approx(0.10)
    state = ActivityState.objects.get(owner=user)
    assert state.garden_cursor is None and state.garden_round["finished_at"] and state.garden_round["windows"] == 3
    # The next cycle starts round 2 at the first window; its dedupe compares only what changed since round 1 began.
    again = gardener_run(actor=user)
    assert (again.window["round"], again.window["index"]) == (2, 1)
    assert again.counters["nodes_scaled"] == 0 and any("within 0.15" in note for note in again.notes)


def test_undo_of_each_window_cycle_puts_the_graph_back_exactly(user):
    made = graph(user, 50)
    first, second = made[3], made[30]
    link(user, first, second, 0.9, "causal")
    link(user, second, first, 0.4, "causal")
    befores, reports = [], []
    for _ in range(3):
        befores.append(everything())
        reports.append(gardener_run(actor=user))
    assert sum(report.counters["cycles_broken"] for report in reports) == 1  # found from the window holding either
    for before, report in reversed(list(zip(befores, reports))):
        undo_apply(actor=user, reversal_hash=report.reversal_hash, preview=False)
        assert everything() == before


@pytest.mark.django_db(transaction=True)
def test_a_cycle_stopped_mid_window_leaves_the_same_window_and_scales_no_node_twice(user):
    made = graph(user, 30)
    params = connection.settings_dict
    holder = psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"])
    # The window's sixth node is held: scaling's third batch (1, 2, then 4 nodes, as items take no time on this
    # cycle's clock) waits on it while the test queries.
    holder.execute(f'SELECT 1 FROM "{Memory._meta.db_table}" WHERE id = %s FOR UPDATE', [made[5].pk])
    outcome = {}

    def garden() -> None:
        try:
            outcome["report"] = gardener_run(actor=user, batch_size=5, clock=lambda: 0.0)
        finally:
            connections.close_all()

    worker = threading.Thread(target=garden)
    worker.start()
    try:
        with psycopg.connect(host=params["HOST"], user=params["USER"], dbname=params["NAME"]) as watcher:
            while not watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                                      "datname = %s", [params["NAME"]]).fetchone()[0]:
                watcher.execute("SELECT pg_sleep(0.05)")
        count_query(user.pk)  # a query of the owner: the cycle stops before its next batch
    finally:
        holder.rollback()
        holder.close()
    worker.join(timeout=120)
    stopped = outcome["report"]
    assert (stopped.status, stopped.stop_reason, stopped.counters["nodes_scaled"]) == ("interrupted", "query", 7)
    resumed = gardener_run(actor=user, batch_size=5)
    assert resumed.status == "completed" and resumed.window["index"] == 1
    assert (resumed.window["after"], resumed.window["upto"]) == (stopped.window["after"], stopped.window["upto"])
    assert resumed.counters["nodes_scaled"] == WINDOW - 7
    importance = dict(Memory.objects.filter(owner=user).values_list("pk", "importance"))
    assert [round(importance[memory.pk], 9) for memory in made] == [
        round(scaled(float(index % 2)) if index < WINDOW else float(index % 2), 9) for index in range(30)]
    assert gardener_run(actor=user).window["index"] == 2  # then the next window


def test_one_users_windows_hold_only_their_own_nodes(user, other_user):
    mine = graph(user, 30)
    theirs = graph(other_user, 30, prefix="Bob's note: ")  # interleaved with alice's in id order
    bobs = graph_state([memory.pk for memory in theirs])
    for index in (1, 2):
        report = gardener_run(actor=user)
        window = window_of(report, mine)
        assert report.window["index"] == index and len(window) == report.window["nodes"]
        assert report.window["graph"] == 30 and report.counters["nodes_scaled"] == len(window)
    assert graph_state([memory.pk for memory in theirs]) == bobs
    assert not Event.objects.filter(owner=other_user, action=Event.Action.GARDENED).exists()
    assert not ActivityState.objects.filter(owner=other_user).exclude(garden_round={}).exists()
    first = gardener_run(actor=other_user)  # bob's own round starts at his first node
    assert (first.window["round"], first.window["index"], first.window["nodes"]) == (1, 1, WINDOW)
    assert {str(memory.pk) for memory in window_of(first, theirs)} <= {str(memory.pk) for memory in theirs}

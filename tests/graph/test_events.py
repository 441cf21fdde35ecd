"""Stored events, their pruning (service, task, schedule) and the group names."""
import re
from datetime import timedelta

import pytest
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from apps.cubes.services import cube_ensure_personal
from apps.graph.groups import cube_group
from apps.graph.models import GraphEvent
from apps.graph.selectors import graph_events_since
from apps.graph.services import graph_events_prune
from apps.graph.tasks import prune_graph_events
from apps.memories.services import memory_boost

pytestmark = pytest.mark.django_db


@pytest.fixture
def boosts(user, store, django_capture_on_commit_callbacks):
    """boosts(n) -> the n events of n boosts of one memory of alice's, oldest first."""
    memory = store(user, "A memory that gets boosted")

    def make(count):
        with django_capture_on_commit_callbacks(execute=True):
            for _ in range(count):
                memory_boost(actor=user, memory_id=memory.pk, amount=0.01)
        return list(GraphEvent.objects.order_by("id"))[-count:]

    return make


def _age(events, hours):
    GraphEvent.objects.filter(pk__in=[event.pk for event in events]).update(
        created_at=timezone.now() - timedelta(hours=hours))


def test_a_write_stores_one_event_per_call(user, boosts):
    [event] = boosts(1)
    assert (event.kind, event.cube_id) == ("memory.boosted", cube_ensure_personal(actor=user).pk)
    assert event.payload["node"]["importance"] == 0.51


def test_pruning_forgets_events_older_than_the_retention_but_keeps_the_newest(boosts):
    old, recent = boosts(3), boosts(2)
    _age(old, settings.ENGRAM_GRAPH_EVENT_RETENTION_HOURS + 1)
    assert graph_events_prune() == 3
    assert list(GraphEvent.objects.order_by("id")) == recent
    _age(recent, settings.ENGRAM_GRAPH_EVENT_RETENTION_HOURS + 1)
    assert graph_events_prune() == 1
    assert list(GraphEvent.objects.all()) == recent[-1:]


def test_the_task_calls_the_service_and_beat_runs_it(boosts):
    _age(boosts(2), 1000)
    assert prune_graph_events() == 1
    assert any(entry["task"] == prune_graph_events.name for entry in settings.CELERY_BEAT_SCHEDULE.values())


def test_catching_up_across_pruned_events_asks_for_a_reload(user, boosts):
    first, *rest = boosts(4)
    _age([first, rest[0]], 1000)
    graph_events_prune()
    cube_id = first.cube_id
    stale = graph_events_since(actor=user, cube_id=cube_id, since=first.id - 1, limit=500)
    assert (stale.events, stale.complete) == ([], False)
    fresh = graph_events_since(actor=user, cube_id=cube_id, since=rest[0].id, limit=500)
    assert (fresh.events, fresh.complete) == (rest[1:], True)


def test_catching_up_returns_nothing_of_another_users_cube(other_user, boosts):
    first, _ = boosts(2)
    replay = graph_events_since(actor=other_user, cube_id=first.cube_id, since=first.id - 1, limit=500)
    assert replay.events == []


@pytest.mark.parametrize("cube_id", ["a", "x" * 88, "x" * 89, "y" * 100, "A-b_9" * 20])
def test_group_names_are_valid_for_every_cube_id(cube_id):
    name = cube_group(cube_id)
    assert re.fullmatch(r"[a-zA-Z0-9_.-]+", name) and len(name) < 100
    assert get_channel_layer().require_valid_group_name(name)


def test_long_cube_ids_keep_distinct_groups():
    assert cube_group("z" * 100) != cube_group("z" * 99 + "w")
    assert cube_group("abc") == "graph.cube.abc"


@pytest.mark.django_db(transaction=True)
def test_an_event_that_cannot_be_stored_after_commit_is_logged_and_the_write_stands(user, store, monkeypatch, caplog):
    """The database going away between a write's commit and its event's insert: the write is answered as done
    (it is), and the lost event is logged by name, not turned into an error of its own."""
    memory = store(user, "A memory that gets boosted")

    def database_gone(**fields):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(GraphEvent.objects, "create", database_gone)
    memory_boost(actor=user, memory_id=memory.pk, amount=0.01)
    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.51)
    [record] = [record for record in caplog.records if "on_commit()" in record.getMessage()]
    assert "publish_after_commit" in record.getMessage() and "administrator command" in record.getMessage()

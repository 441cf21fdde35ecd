"""get_node_lineage's and get_system_logs' reads of the Events every memory change records: change types, actors,
merges and forks, what can still be undone and with which tool, filters, isolation and query counts."""
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.cognition.models import Event, Tombstone, UndoEntry
from apps.cognition.selectors.lineage import CHANGE_TYPES, node_lineage, parse_since, system_log
from apps.cognition.services.curation import node_forget
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.services import memory_boost, memory_delete, memory_restore, memory_store, memory_update
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NOW = timezone.now()


@pytest.fixture
def alice():
    return UserFactory()


def _node(user, content="The billing service retries failed charges three times.", **fields):
    return memory_store(actor=user, content=content, **fields).memory


def _event(owner, action, node_ids, *, detail=None, reversal_hash="", reason="", ago=timedelta(0)):
    event = Event.objects.create(owner=owner, actor=owner, action=action, node_ids=list(node_ids),
                                 detail=detail or {}, reversal_hash=reversal_hash, reason=reason)
    if ago:
        Event.objects.filter(pk=event.pk).update(created_at=timezone.now() - ago)
    return event


def _undo(owner, nodes, *, expires_in=timedelta(days=30), used=False):
    return UndoEntry.objects.create(
        reversal_hash=uuid.uuid4().hex * 2, owner=owner, operation=UndoEntry.Operation.FORGET,
        node_ids=[node.pk for node in nodes], snapshot={}, expires_at=timezone.now() + expires_in,
        used_at=timezone.now() if used else None)


# node_lineage

def test_a_nodes_lineage_is_its_changes_newest_first_in_the_seeds_change_types(alice):
    memory = _node(alice, agent_id="coder")
    memory_update(actor=alice, memory_id=memory.pk, content="The billing service retries failed charges five times.")
    memory_boost(actor=alice, memory_id=memory.pk, amount=0.2)
    memory_delete(actor=alice, memory_id=memory.pk)
    memory_restore(actor=alice, memory_id=memory.pk)
    lineage = node_lineage(actor=alice, node_id=memory.pk)
    assert [CHANGE_TYPES[event.action] for event in lineage.events] == [
        "restored", "pruned", "boosted", "annotated", "created"]
    assert lineage.total == 5 and lineage.memory == memory
    created = lineage.events[-1]
    assert (created.actor, created.actor_label) == (alice, "coder")
    assert lineage.events[3].detail["fields"]["content"] == [
        "The billing service retries failed charges three times.",
        "The billing service retries failed charges five times."]
    short = node_lineage(actor=alice, node_id=memory.pk, depth=2)
    assert [event.action for event in short.events] == ["restored", "deleted"] and short.total == 5


def test_every_action_has_a_change_type():
    assert set(CHANGE_TYPES) == set(Event.Action.values)


def test_merges_give_merged_from_and_forked_to(alice):
    merged, first, second, summary = (_node(alice, f"Node {n} about invoices and their due dates.") for n in range(4))
    # A merge lists the merged node first, then its sources.
    _event(alice, Event.Action.MERGED, [merged.pk, first.pk, second.pk])
    # Or says so in its detail, which wins.
    other = _node(alice, "A fifth node merged in later, told by its detail.")
    _event(alice, Event.Action.MERGED, [other.pk, merged.pk], detail={"merged_into": str(merged.pk),
                                                                      "merged_from": [str(other.pk)]})
    # A node made from others lists them after itself, and names them in derived_from.
    _event(alice, Event.Action.DREAMED, [summary.pk, first.pk], detail={"derived_from": [str(first.pk)]})
    into = node_lineage(actor=alice, node_id=merged.pk)
    assert into.merged_from == [str(first.pk), str(second.pk), str(other.pk)] and into.forked_to == []
    source = node_lineage(actor=alice, node_id=first.pk)
    assert source.merged_from == [] and source.forked_to == [str(merged.pk), str(summary.pk)]
    assert node_lineage(actor=alice, node_id=other.pk).forked_to == [str(merged.pk)]


def test_lineage_of_a_node_the_caller_cannot_read_is_not_found(alice):
    memory = _node(alice)
    with pytest.raises(NotFound) as refused:
        node_lineage(actor=UserFactory(), node_id=memory.pk)
    assert refused.value.extra["field"] == "node_id"
    with pytest.raises(NotFound):
        node_lineage(actor=alice, node_id=uuid.uuid4())
    with pytest.raises(InvalidInput) as bad:
        node_lineage(actor=alice, node_id="node_abc")
    assert bad.value.field == "node_id"
    with pytest.raises(InvalidInput) as deep:
        node_lineage(actor=alice, node_id=memory.pk, depth=21)
    assert deep.value.field == "depth"


def test_lineage_runs_as_many_queries_for_twenty_changes_as_for_one(alice):
    memory = _node(alice)
    with CaptureQueriesContext(connection) as one:
        assert len(node_lineage(actor=alice, node_id=memory.pk, depth=20).events) == 1
    for _ in range(19):
        memory_boost(actor=alice, memory_id=memory.pk, amount=0.01)
    with CaptureQueriesContext(connection) as twenty:
        assert len(node_lineage(actor=alice, node_id=memory.pk, depth=20).events) == 20
    assert len(twenty) == len(one) + 1  # the total is counted once the page is full


# system_log

def test_the_log_says_what_can_be_undone_and_with_which_tool(alice):
    soft = _node(alice, "A memory deleted from the dashboard.")
    memory_delete(actor=alice, memory_id=soft.pk)
    purged = _node(alice, "A memory deleted for good.")
    memory_delete(actor=alice, memory_id=purged.pk, soft=False)
    forgotten = _node(alice, "A memory forgotten, with a tombstone and an undo snapshot.")
    memory_delete(actor=alice, memory_id=forgotten.pk)
    undo = _undo(alice, [forgotten])
    Tombstone.objects.create(memory=forgotten, reason=Tombstone.Reason.USER_REQUESTED, actor=alice, undo=undo,
                             deadline=timezone.now() + timedelta(days=30))
    _event(alice, Event.Action.FORGOTTEN, [forgotten.pk], reversal_hash=undo.reversal_hash, reason="user_requested")
    expired = _node(alice, "A memory forgotten long ago whose undo expired but whose tombstone holds.")
    memory_delete(actor=alice, memory_id=expired.pk)
    stale = _undo(alice, [expired], expires_in=timedelta(days=-1))
    Tombstone.objects.create(memory=expired, reason=Tombstone.Reason.OBSOLETE, actor=alice,
                             deadline=timezone.now() + timedelta(days=2))
    _event(alice, Event.Action.FORGOTTEN, [expired.pk], reversal_hash=stale.reversal_hash, reason="obsolete")
    _node(alice, "A memory merely created: not in the log.")

    log = system_log(actor=alice)
    by_node = {entry.node_ids[0]: entry for entry in log.entries}
    assert {entry.action for entry in log.entries} == {"prune"}
    # A soft delete, a purge and two forgets: the deletes under the forgets are told by the forgets.
    assert [entry.event.action for entry in log.entries] == ["forgotten", "forgotten", "purged", "deleted"]
    assert (by_node[forgotten.pk].recoverable, by_node[forgotten.pk].recovery_tool) == (True, "restore_from_hash")
    assert (by_node[expired.pk].recoverable, by_node[expired.pk].recovery_tool) == (True, "restore_concept")
    assert (by_node[soft.pk].recoverable, by_node[soft.pk].recovery_tool) == (True, None)
    assert "restore" in by_node[soft.pk].details
    assert (by_node[purged.pk].recoverable, by_node[purged.pk].recovery_tool) == (False, None)
    memory_restore(actor=alice, memory_id=soft.pk)
    restored = system_log(actor=alice, node_id=str(soft.pk))
    assert [entry.action for entry in restored.entries] == ["restore", "prune"]
    assert restored.entries[1].recoverable is False  # already back


def test_a_curation_of_several_nodes_is_one_entry(alice):
    merged, first, second = (_node(alice, f"Invoice rule {n}: invoices go out monthly.") for n in range(3))
    memory_delete(actor=alice, memory_id=first.pk)
    memory_delete(actor=alice, memory_id=second.pk)
    undo = _undo(alice, [first, second, merged])
    # As curation records a merge: one Event on each node, sharing the reversal hash, the merge in the detail.
    detail = {"merged_node_id": str(merged.pk), "merged_from": [str(first.pk), str(second.pk)]}
    for memory in (merged, first, second):
        _event(alice, Event.Action.MERGED, [memory.pk], detail=detail, reversal_hash=undo.reversal_hash)
    [entry] = system_log(actor=alice).entries
    assert entry.node_ids == [merged.pk, *sorted([first.pk, second.pk], key=str)]
    assert (entry.action, entry.recoverable, entry.recovery_tool) == ("merge", True, "restore_from_hash")
    # The sources' deletes are the merge's too, even when only prunes are asked for.
    assert system_log(actor=alice, log_type="prune").entries == []
    lineage = node_lineage(actor=alice, node_id=first.pk)
    assert lineage.forked_to == [str(merged.pk)]
    assert node_lineage(actor=alice, node_id=merged.pk).merged_from == [str(first.pk), str(second.pk)]


@pytest.mark.django_db(transaction=True)  # each call commits on its own, as in production
def test_a_plain_delete_right_after_a_forget_is_an_entry_of_its_own(alice):
    """The delete a forget makes is told by the forget (same node, same transaction); a delete of the same node a
    moment later, by another call, is a change of its own however soon it comes."""
    memory = _node(alice)
    node_forget(actor=alice, node_id=memory.pk, reason="obsolete")
    memory_restore(actor=alice, memory_id=memory.pk)
    memory_delete(actor=alice, memory_id=memory.pk)
    log = system_log(actor=alice, node_id=str(memory.pk))
    assert [entry.event.action for entry in log.entries] == ["deleted", "restored", "forgotten"]
    forget, under_it, later = (Event.objects.filter(node_ids__contains=[memory.pk], action=action).order_by("id")
                               for action in ("forgotten", "deleted", "deleted"))
    assert forget[0].transaction_id == under_it[0].transaction_id != later[1].transaction_id


def test_log_types_since_and_node_filters(alice):
    a, b = _node(alice, "Merged node A."), _node(alice, "Merged node B.")
    merge = _undo(alice, [a, b])
    _event(alice, Event.Action.MERGED, [a.pk, b.pk], reversal_hash=merge.reversal_hash)
    _event(alice, Event.Action.QUARANTINED, [b.pk], reason="circular logic", ago=timedelta(days=2))
    _event(alice, Event.Action.DREAMED, [a.pk], detail={"edges_strengthened": 3})
    _event(alice, Event.Action.ADVERSARIAL_BLOCK, [], reason="prompt injection")
    assert [entry.action for entry in system_log(actor=alice, log_type="merge").entries] == ["merge"]
    assert system_log(actor=alice, log_type="quarantine").entries == []  # two days ago, past the default -24h
    assert [entry.event.reason for entry in system_log(actor=alice, log_type="quarantine", since="-3d").entries] == [
        "circular logic"]
    week_ago = (timezone.now() - timedelta(days=7)).isoformat()
    assert len(system_log(actor=alice, since=week_ago).entries) == 4
    assert {entry.action for entry in system_log(actor=alice).entries} == {
        "merge", "dream_consolidation", "adversarial_block"}
    about_b = system_log(actor=alice, node_id=str(b.pk), since="-7d")
    assert [entry.action for entry in about_b.entries] == ["merge", "quarantine"]
    assert about_b.entries[0].recovery_tool == "restore_from_hash"
    assert [entry.event.action for entry in system_log(actor=alice, limit=1).entries] == ["adversarial_block"]
    dream = system_log(actor=alice, log_type="dream_actions").entries[0]
    assert (dream.recoverable, dream.recovery_tool) == (False, None)


def test_the_log_is_the_callers_own(alice):
    memory = _node(alice)
    memory_delete(actor=alice, memory_id=memory.pk)
    assert len(system_log(actor=alice).entries) == 1
    bob = UserFactory()
    assert system_log(actor=bob).entries == []
    assert system_log(actor=bob, node_id=str(memory.pk)).entries == []


@pytest.mark.parametrize(("arguments", "field"), [
    ({"log_type": "everything"}, "log_type"),
    ({"limit": 0}, "limit"),
    ({"limit": 101}, "limit"),
    ({"since": "yesterday"}, "since"),
    ({"since": "-99999d"}, "since"),
    ({"node_id": "node_abc"}, "node_id"),
])
def test_bad_log_arguments_name_their_field(alice, arguments, field):
    with pytest.raises(InvalidInput) as refused:
        system_log(actor=alice, **arguments)
    assert refused.value.field == field


def test_since_reads_spans_and_date_times():
    assert parse_since("-30m", now=NOW) == NOW - timedelta(minutes=30)
    assert parse_since(None, now=NOW) == NOW - timedelta(hours=24)
    assert parse_since("-2w", now=NOW) == NOW - timedelta(weeks=2)
    assert parse_since("2026-01-31T12:00:00Z", now=NOW).isoformat() == "2026-01-31T12:00:00+00:00"
    assert parse_since("2026-01-31T12:00:00", now=NOW).isoformat() == "2026-01-31T12:00:00+00:00"


def test_the_log_runs_three_queries_however_many_entries(alice):
    memories = [_node(alice, f"Doomed memory number {n}.") for n in range(20)]
    memory_delete(actor=alice, memory_id=memories[0].pk)
    with CaptureQueriesContext(connection) as one:
        assert len(system_log(actor=alice).entries) == 1
    for memory in memories[1:]:
        memory_delete(actor=alice, memory_id=memory.pk)
    with CaptureQueriesContext(connection) as twenty:
        assert len(system_log(actor=alice).entries) == 20
    assert len(twenty) == len(one) == 2  # events, then their nodes' state (no undo hashes to look up)


def test_a_dreams_log_entry_offers_its_undo_until_it_is_applied(alice):
    from apps.cognition.services.dream import dream_execute, dream_trigger
    from apps.cognition.services.undo import undo_apply
    from tests.cognition.curation_support import link, nodes
    from tests.cognition.dream_support import item, session

    a, b = nodes(alice, "Alpha service owns billing.", "Beta service sends invoices.")
    link(alice, a, b, 0.5)
    item(session(alice), (a, 0.9), (b, 0.6))
    run = dream_execute(run_id=dream_trigger(actor=alice, phase="nrem").pk)
    [entry] = system_log(actor=alice, log_type="dream_actions").entries
    assert (entry.recoverable, entry.recovery_tool, entry.event.reversal_hash) == \
        (True, "restore_from_hash", run.reversal_hash)
    undo_apply(actor=alice, reversal_hash=run.reversal_hash, preview=False)
    [entry] = system_log(actor=alice, log_type="dream_actions").entries
    assert (entry.recoverable, entry.recovery_tool) == (False, None)
    assert "applied already or has expired" in entry.details and "no undo" not in entry.details

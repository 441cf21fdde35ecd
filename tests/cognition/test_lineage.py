"""Memory services report every change, in its transaction, and cognition records each as an Event."""
import pytest
from django.db import transaction

from apps.cognition.models import Event
from apps.memories.changes import Action
from apps.memories.services import memory_boost, memory_delete, memory_restore, memory_store, memory_update
from apps.memories.services.curation import memory_link, memory_unlink
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _actions(memory_id):
    return [event.action for event in Event.objects.filter(node_ids__contains=[memory_id]).order_by("id")]


def test_every_memory_change_becomes_an_event_of_its_owner():
    user = UserFactory()
    first = memory_store(actor=user, content="The staging database runs PostgreSQL 16.", agent_id="coder").memory
    second = memory_store(actor=user, content="Staging moved to PostgreSQL 17 last week.").memory
    memory_update(actor=user, memory_id=first.pk, importance=0.9)
    memory_boost(actor=user, memory_id=first.pk, amount=0.05)
    memory_link(actor=user, source_id=first.pk, target_id=second.pk, link_type="causal", weight=0.7)
    memory_unlink(actor=user, source_id=first.pk, target_id=second.pk)
    memory_delete(actor=user, memory_id=first.pk)
    memory_restore(actor=user, memory_id=first.pk)
    assert _actions(first.pk) == ["created", "updated", "boosted", "linked", "unlinked", "deleted", "restored"]
    created, updated, boosted, linked = Event.objects.filter(node_ids__contains=[first.pk]).order_by("id")[:4]
    assert (created.owner, created.actor, created.actor_label) == (user, user, "coder")
    assert updated.detail["fields"] == {"importance": [0.5, 0.9]}
    assert boosted.detail["fields"]["importance"] == [0.9, 0.95]
    assert linked.detail["links"] == [{"target": str(second.pk), "link_type": "causal", "weight": 0.7}]


def test_a_store_records_the_links_it_made():
    user = UserFactory()
    earlier = memory_store(actor=user, content="Deploys go out from the release branch every Friday.").memory
    later = memory_store(actor=user, content="Every Friday the release branch is deployed.")
    event = Event.objects.get(node_ids__contains=[later.memory.pk])
    assert later.links_created == len(event.detail["links"]) > 0
    assert str(earlier.pk) in {link["target"] for link in event.detail["links"]}


def test_a_change_rolled_back_leaves_no_event():
    user = UserFactory()
    memory = memory_store(actor=user, content="A memory whose update is rolled back.").memory
    with pytest.raises(RuntimeError), transaction.atomic():
        memory_update(actor=user, memory_id=memory.pk, importance=0.1)
        raise RuntimeError
    assert _actions(memory.pk) == ["created"]


def test_every_reported_action_is_an_event_action():
    assert {action.value for action in Action} <= set(Event.Action.values)

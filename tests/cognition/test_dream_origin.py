"""MemoryLink.origin: what made each link (issue 20). Store links are `store`, a person's links `manual`; the dream's
own origins (nrem, rem, shortcut) are tested with the dream."""
from __future__ import annotations

import pytest
from django.db import connection

from apps.memories.models import MemoryLink
from apps.memories.services import memory_store
from apps.memories.services.curation import memory_link, memory_link_many
from tests.cognition.curation_support import nodes

pytestmark = pytest.mark.django_db


def test_a_store_link_says_store(user):
    memory_store(actor=user, content="The staging cluster runs Kubernetes 1.30 on three nodes.")
    second = memory_store(actor=user, content="The staging cluster runs Kubernetes 1.30 on three worker nodes.")
    [link] = MemoryLink.objects.filter(source=second.memory)
    assert link.origin == MemoryLink.Origin.STORE
    assert link.last_activated_at is None


def test_links_made_by_hand_say_manual_and_a_relink_takes_the_origin(user):
    a, b, c = nodes(user, "Alpha notes.", "Beta notes.", "Gamma notes.")
    MemoryLink.objects.create(source=a, target=b, weight=0.5)  # as a store would have made it
    assert memory_link(actor=user, source_id=a.pk, target_id=b.pk, weight=0.6).link.origin == "manual"
    assert MemoryLink.objects.get(source=a, target=b).origin == "manual"
    [made] = memory_link_many(actor=user, source_id=c.pk, target_ids=[str(a.pk)], weight=0.7)
    assert MemoryLink.objects.get(pk=made.pk).origin == "manual"


def test_a_raw_insert_without_origin_gets_the_database_default(user):
    a, b = nodes(user, "One thing.", "Another thing.")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {MemoryLink._meta.db_table} (source_id, target_id, link_type, weight, "
                       "traversal_count, created_at, updated_at) VALUES (%s, %s, 'semantic', 0.5, 0, now(), now())",
                       [a.pk, b.pk])
    assert MemoryLink.objects.get(source=a, target=b).origin == "store"

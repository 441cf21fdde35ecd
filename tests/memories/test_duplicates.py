"""The store page warns before it stores a memory the user has already (the same text but for case and whitespace,
or cosine >= 0.97 in the same cube), links to it, and offers to store anyway or merge (cognition's nodes_merge).
REST and MCP stores keep their contracts: they store without asking."""
import pytest
from django.urls import reverse

from apps.cognition.models import Tombstone, UndoEntry
from apps.cubes.models import Cube
from apps.memories.models import Memory
from apps.memories.selectors import NEAR_DUPLICATE_COSINE, memory_duplicates
from apps.memories.services import memory_delete

pytestmark = pytest.mark.django_db
CREATE = reverse("dashboard:memory-create")


def store_form(content, **fields):
    return {"content": content, "primary_sector": "semantic", "importance": "", "tags": "", "keywords": "",
            "category": "", "context": "", **fields}


def test_an_exact_duplicate_is_warned_about_and_stored_only_when_asked(alice, user, store):
    kept = store(user, "The boiler is serviced every October.")
    response = alice.post(CREATE, store_form("  the BOILER is serviced\n every   october. "))
    assert response.status_code == 200 and Memory.objects.count() == 1
    [duplicate] = response.context["duplicates"]
    assert duplicate.memory == kept and duplicate.exact and duplicate.similarity == 1.0
    html = response.content.decode()
    assert f'href="{reverse("dashboard:memory-detail", args=[kept.pk])}"' in html and "the same text" in html
    assert 'name="on_duplicate" value="store"' in html and f'name="merge_with" value="{kept.pk}"' in html
    assert response.context["form"]["content"].value() == "  the BOILER is serviced\n every   october. "

    stored = alice.post(CREATE, store_form("the BOILER is serviced every october.", on_duplicate="store"))
    assert stored.status_code == 302 and Memory.objects.count() == 2


def test_a_near_duplicate_in_the_same_cube_is_warned_about(alice, user, store):
    kept = store(user, "The staging server runs PostgreSQL 16 on Debian.")
    store(user, "The boiler is serviced every October.")
    [duplicate] = alice.post(CREATE, store_form("The staging server runs PostgreSQL 16 on Debian 12.")).context[
        "duplicates"]
    assert duplicate.memory == kept and not duplicate.exact and NEAR_DUPLICATE_COSINE <= duplicate.similarity < 1


def test_no_warning_for_other_cubes_deleted_memories_other_users_or_different_content(alice, user, other_user, store):
    Cube.objects.create(id="work", name="Work", owner=user)
    store(user, "The staging server runs PostgreSQL 16 on Debian.", cube_id="work")
    store(other_user, "The boiler is serviced every October.")
    gone = store(user, "Renew the passport before June.")
    memory_delete(actor=user, memory_id=gone.pk)
    for content in ("The staging server runs PostgreSQL 16 on Debian.", "The boiler is serviced every October.",
                    "Renew the passport before June.", "The car is serviced every March."):
        response = alice.post(CREATE, store_form(content))
        assert response.status_code == 302, response.context["duplicates"]
    assert memory_duplicates(actor=user, content="The boiler is serviced every October.", cube_id="work") == []
    assert memory_duplicates(actor=other_user, content="The boiler is serviced every October.",
                             cube_id="work") == []  # a cube bob cannot read has none


def test_a_stopword_only_memory_is_found_by_its_text(user, store):
    kept = store(user, "To be or not to be")
    assert [d.memory for d in memory_duplicates(actor=user, content="to be  OR not to be")] == [kept]


def test_merge_stores_and_merges_through_nodes_merge(alice, user, store):
    kept = store(user, "Water the tomatoes every other evening in summer.", tags=["garden"], importance=0.8)
    response = alice.post(CREATE, store_form("Water the tomatoes every second evening during summer.",
                                             tags="tomatoes", merge_with=str(kept.pk)))
    [live] = Memory.objects.filter(deleted_at__isnull=True)
    assert response.status_code == 302 and response["Location"] == reverse("dashboard:memory-detail", args=[live.pk])
    assert live.content == "Water the tomatoes every second evening during summer."  # the new wording
    assert live.tags == ["garden", "tomatoes"] and live.importance == 0.8
    assert live.metadata["merge_strategy"] == "keep_newest" and str(kept.pk) in live.metadata["merged_from"]
    assert Tombstone.objects.filter(reason=Tombstone.Reason.MERGED).count() == 2
    assert UndoEntry.objects.filter(operation=UndoEntry.Operation.MERGE).exists()
    assert "merged with the memory it repeats" in alice.get(response["Location"]).content.decode()


def test_merge_with_another_users_memory_is_not_found_and_stores_nothing(alice, other_user, store):
    bobs = store(other_user, "Bob's boiler is serviced every October.")
    response = alice.post(CREATE, store_form("Bob's boiler is serviced every October.", merge_with=str(bobs.pk)))
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == ["Memory not found"]
    assert not Memory.objects.filter(owner__username="alice").exists()


def test_rest_stores_keep_their_contract_and_do_not_warn(api, user, store):
    store(user, "The boiler is serviced every October.")
    response = api.post("/api/v1/memories/", {"content": "The boiler is serviced every October."}, format="json")
    assert response.status_code == 201
    assert Memory.objects.filter(content="The boiler is serviced every October.").count() == 2

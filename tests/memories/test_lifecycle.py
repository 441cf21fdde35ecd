import math
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import CubeMembership
from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.selectors import memory_get
from apps.memories.services import (
    memory_boost, memory_decay, memory_delete, memory_reembed, memory_restore, memory_retrieve, memory_search,
    memory_update,
)
from apps.memories.services import linking
from apps.memories.services.lifecycle import DECAY_FLOOR, SECTOR_DECAY_FACTORS


def test_update_is_selective(user, store):
    memory = store(user, "User prefers dark mode", tags=["ui"], category="prefs")
    vector = MemoryVector.objects.get(memory=memory).embedding
    result = memory_update(actor=user, memory_id=memory.pk, strength=0.4, importance=0.9)
    memory.refresh_from_db()
    assert (memory.strength, memory.importance, memory.tags, memory.category) == (0.4, 0.9, ["ui"], "prefs")
    assert not result.embeddings_regenerated
    assert MemoryVector.objects.get(memory=memory).embedding == vector


def test_new_content_re_embeds_and_relinks(user, store):
    store(user, "Deploys happen on Fridays after the standup", session_id="s")
    memory = store(user, "Lunch was pasta", session_id="s2")
    before = MemoryVector.objects.get(memory=memory).embedding
    result = memory_update(actor=user, memory_id=memory.pk, content="Deploys happen on Friday afternoons after standup")
    memory.refresh_from_db()
    assert result.embeddings_regenerated
    assert MemoryVector.objects.get(memory=memory).embedding != before
    assert "deploys" in memory.keywords
    assert result.connections_updated == MemoryLink.objects.filter(source=memory).count() >= 1
    assert memory_retrieve(actor=user, text="deploys on friday afternoons", limit=1).items[0].memory.pk == memory.pk
    assert memory.pk not in [i.memory.pk for i in memory_search(actor=user, text="pasta").items]


@pytest.mark.parametrize(("changes", "field"), [
    ({"content": ""}, "content"), ({"strength": 3}, "strength"), ({"salience": "x"}, "salience"),
    ({"primary_sector": "nope"}, "primary_sector"),
])
def test_update_refuses_bad_input_and_changes_nothing(user, store, changes, field):
    memory = store(user, "Original content")
    with pytest.raises(InvalidInput) as caught:
        memory_update(actor=user, memory_id=memory.pk, **changes)
    assert caught.value.field == field
    memory.refresh_from_db()
    assert memory.content == "Original content" and memory.strength == 1.0


def test_update_takes_only_its_own_arguments(user, store):
    memory = store(user, "Original content")
    with pytest.raises(TypeError):
        memory_update(actor=user, memory_id=memory.pk, colour="red")


def test_soft_delete_hides_and_restore_brings_back(user, store):
    memory = store(user, "Keep me safe")
    Memory.objects.filter(pk=memory.pk).update(strength=0.7)
    assert memory_delete(actor=user, memory_id=memory.pk) == "soft"
    memory.refresh_from_db()
    assert memory.strength == 0 and memory.deleted_at and memory.deleted_by == user
    assert memory_retrieve(actor=user).total_count == 0
    assert MemoryVector.objects.filter(memory=memory).count() == 1
    restored = memory_restore(actor=user, memory_id=memory.pk)
    assert restored.strength == 0.7 and restored.deleted_at is None
    assert memory_retrieve(actor=user).total_count == 1


def test_restore_of_a_live_memory_is_a_clear_error(user, store):
    memory = store(user, "Alive")
    with pytest.raises(InvalidInput):
        memory_restore(actor=user, memory_id=memory.pk)


def test_hard_delete_cascades(user, store):
    first = store(user, "User prefers dark mode everywhere", session_id="s")
    second = store(user, "User wants dark mode in every app", session_id="s")
    assert MemoryLink.objects.filter(target=first).exists()
    assert memory_delete(actor=user, memory_id=first.pk, soft=False) == "hard"
    assert not Memory.objects.filter(pk=first.pk).exists()
    assert not MemoryVector.objects.filter(memory_id=first.pk).exists()
    assert not MemoryLink.objects.filter(target_id=first.pk).exists()
    assert Memory.objects.filter(pk=second.pk).exists()


def test_others_cannot_touch_a_memory(user, other_user, store):
    memory = store(user, "Mine")
    for call in (
        lambda: memory_get(actor=other_user, memory_id=memory.pk),
        lambda: memory_update(actor=other_user, memory_id=memory.pk, content="hacked"),
        lambda: memory_delete(actor=other_user, memory_id=memory.pk, soft=False),
        lambda: memory_restore(actor=other_user, memory_id=memory.pk),
        lambda: memory_boost(actor=other_user, memory_id=memory.pk),
        lambda: memory_reembed(actor=other_user, memory_id=memory.pk),
    ):
        with pytest.raises(NotFound):
            call()
    memory.refresh_from_db()
    assert memory.content == "Mine" and memory.deleted_at is None


def test_readers_of_a_shared_cube_may_read_but_not_change(user, other_user, store):
    memory = store(user, "Shared note")
    CubeMembership.objects.create(cube=memory.cube, user=other_user, role="reader")
    assert memory_get(actor=other_user, memory_id=memory.pk).pk == memory.pk
    with pytest.raises(PermissionDenied):
        memory_update(actor=other_user, memory_id=memory.pk, content="changed")
    with pytest.raises(PermissionDenied):
        memory_delete(actor=other_user, memory_id=memory.pk)


@pytest.mark.parametrize("memory_id", ["not-a-uuid", "", None, "00000000-0000-0000-0000-000000000000"])
def test_unknown_ids_are_not_found(user, memory_id):
    with pytest.raises(NotFound, match="Memory not found"):
        memory_get(actor=user, memory_id=memory_id)


def test_boost_raises_importance_and_salience(user, store):
    memory = store(user, "Plain note")
    boosted = memory_boost(actor=user, memory_id=memory.pk, amount=0.2)
    assert boosted.importance == pytest.approx(0.7) and boosted.salience == pytest.approx(0.6)


def test_reembed_restores_missing_vectors(user, store):
    memory = store(user, "Vectors matter")
    MemoryVector.objects.filter(memory=memory).delete()
    memory_reembed(actor=user, memory_id=memory.pk)
    assert MemoryVector.objects.filter(memory=memory).count() == 1


def test_decay_follows_the_sector_rate_and_is_consistent_over_runs(user, store):
    episodic = store(user, "We met at the cafe", primary_sector="episodic")
    semantic = store(user, "Paris is in France", primary_sector="semantic")
    start = timezone.now() - timedelta(days=10)
    Memory.objects.update(created_at=start, last_accessed_at=None, decayed_at=None)
    memory_decay(now=start + timedelta(days=5))
    memory_decay(now=start + timedelta(days=10))
    episodic.refresh_from_db()
    semantic.refresh_from_db()
    assert episodic.strength == pytest.approx(math.exp(-0.02 * SECTOR_DECAY_FACTORS["episodic"] * 10), rel=1e-4)
    assert semantic.strength == pytest.approx(math.exp(-0.02 * SECTOR_DECAY_FACTORS["semantic"] * 10), rel=1e-4)


def test_decay_has_a_floor_and_skips_deleted(user, store):
    old = store(user, "Ancient history", primary_sector="episodic")
    gone = store(user, "Deleted thing")
    memory_delete(actor=user, memory_id=gone.pk)
    Memory.objects.update(created_at=timezone.now() - timedelta(days=3650))
    memory_decay()
    old.refresh_from_db()
    gone.refresh_from_db()
    assert old.strength == pytest.approx(DECAY_FLOOR)
    assert gone.strength == 0


def test_an_edit_that_adds_a_topic_keeps_the_link_to_what_the_memory_still_relates_to(user, store):
    bed = store(user, "The tomatoes in the south bed need water every other evening.")
    store(user, "Slugs ate the lettuce seedlings: put copper tape around the raised bed.")
    memory = store(user, "Tomato plants in the south bed were watered this evening.")
    assert MemoryLink.objects.filter(source=memory, target=bed).exists()
    memory_update(actor=user, memory_id=memory.pk, content="Tomato plants in the south bed were watered this evening; "
                  "slugs ate the lettuce seedlings, so copper tape goes around the raised bed.")
    # Its weight fell under the waypoint floor (0.39), not under the floor a link needs to stay.
    kept = MemoryLink.objects.get(source=memory, target=bed)
    assert linking.KEEP_FLOOR <= kept.weight < linking.WAYPOINT_FLOOR


def test_an_edit_redoes_only_the_content_linkers_links(user, store):
    memory = store(user, "Deploys happen on Fridays after the standup.")
    far = store(user, "The cat sleeps on the radiator in winter.")
    MemoryLink.objects.create(source=memory, target=far, weight=0.9, origin=MemoryLink.Origin.MANUAL)
    dreamt = store(user, "Lunch on Fridays is pizza with the team.")
    MemoryLink.objects.create(source=memory, target=dreamt, weight=0.3, origin=MemoryLink.Origin.NREM)
    memory_update(actor=user, memory_id=memory.pk, content="Deploys happen on Friday afternoons after the standup.")
    assert set(MemoryLink.objects.filter(source=memory).exclude(origin__in=["store", "parse"])
               .values_list("target_id", "origin")) == {(far.pk, "manual"), (dreamt.pk, "nrem")}


def test_an_edit_to_something_else_entirely_drops_the_old_links(user, store):
    bed = store(user, "The tomatoes in the south bed need water every other evening.")
    memory = store(user, "Tomato plants in the south bed were watered this evening.")
    memory_update(actor=user, memory_id=memory.pk, content="The quarterly tax return is due at the end of January.")
    assert not MemoryLink.objects.filter(source=memory, target=bed).exists()

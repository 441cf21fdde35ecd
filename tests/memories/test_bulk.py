"""The bulk services of the memories list (apps/memories/services/bulk.py): one transaction each, every memory's change
recorded as a single edit's is, live-graph events after commit, and no way to reach another user's memories."""
import pytest

from apps.cognition.models import Event
from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.graph.models import GraphEvent
from apps.memories.models import Memory
from apps.memories.services import (
    memory_delete, memory_delete_many, memory_move_many, memory_restore_many, memory_store_many, memory_tag_many,
)
from apps.memories.services.bulk import MAX_BULK_MEMORIES

pytestmark = pytest.mark.django_db


def stored(user, *contents, **fields) -> list[Memory]:
    return [result.memory for result in memory_store_many(actor=user, items=[
        {"content": content, **fields} for content in contents])]


def actions(memory) -> list[str]:
    return list(Event.objects.filter(node_ids__contains=[memory.pk]).order_by("id").values_list("action", flat=True))


def ids(memories) -> list[str]:
    return [str(memory.pk) for memory in memories]


def test_delete_many_then_restore_many(user, django_capture_on_commit_callbacks):
    first, second, third = stored(user, "Pick up the dry cleaning on Monday.", "Renew the passport before June.",
                                  "The bike lock code is 4411.")
    memory_delete(actor=user, memory_id=third.pk)
    second.strength = 0.6
    second.save(update_fields=["strength"])
    with django_capture_on_commit_callbacks(execute=True):
        deleted = memory_delete_many(actor=user, memory_ids=ids([first, second, third]))
    assert ids(deleted) == ids([first, second])  # the third was deleted already
    rows = Memory.objects.in_bulk([first.pk, second.pk])
    assert all(row.deleted_at and row.deleted_by == user and row.strength == 0.0 for row in rows.values())
    assert rows[second.pk].strength_before_delete == 0.6
    assert actions(first) == ["created", "deleted"]  # recorded as memory_delete records one
    removed = GraphEvent.objects.filter(kind="memory.soft_deleted").values_list("payload__id", flat=True)
    assert sorted(removed) == sorted(ids([first, second]))

    with django_capture_on_commit_callbacks(execute=True):
        restored = memory_restore_many(actor=user, memory_ids=ids([first, second]) + [str(stored(user, "A live one")[0].pk)])
    assert ids(restored) == ids([first, second])
    second.refresh_from_db()
    assert second.deleted_at is None and second.strength == 0.6 and second.strength_before_delete is None
    assert actions(second)[-1] == "restored"
    assert GraphEvent.objects.filter(kind="memory.restored").count() == 2


def test_move_many_into_a_writable_cube(user, other_user, django_capture_on_commit_callbacks):
    work = Cube.objects.create(id="work", name="Work", owner=user)
    personal = stored(user, "The quarterly report is due on the 5th.", "Standup moved to 9:30.")
    decision = stored(user, "We chose PostgreSQL over MySQL.", kind=Memory.Kind.DECISION)[0]
    home = personal[0].cube_id
    with django_capture_on_commit_callbacks(execute=True):
        result = memory_move_many(actor=user, memory_ids=ids([*personal, decision]), cube_id="work")
    assert result.cube == work and ids(result.moved) == ids(personal) and ids(result.kept) == ids([decision])
    assert result.origins == {str(memory.pk): home for memory in personal}
    assert set(Memory.objects.filter(pk__in=[m.pk for m in personal]).values_list("cube_id", flat=True)) == {"work"}
    assert Memory.objects.get(pk=decision.pk).cube_id == home  # a Mind decision stays with its project's cube
    event = Event.objects.get(node_ids__contains=[personal[0].pk], action="updated")
    assert event.detail == {"fields": {"cube": [home, "work"]}}
    left = GraphEvent.objects.filter(kind="memory.hard_deleted", cube_id=home).values_list("payload__id", flat=True)
    assert sorted(left) == sorted(ids(personal))
    [joined] = GraphEvent.objects.filter(kind="memories.created", cube_id="work")
    assert sorted(node["id"] for node in joined.payload["nodes"]) == sorted(ids(personal))

    back = memory_move_many(actor=user, memory_ids=ids(personal), cube_id=home)
    assert len(back.moved) == 2 and not memory_move_many(actor=user, memory_ids=ids(personal), cube_id=home).moved


def test_move_refuses_a_cube_the_user_may_not_write_and_moves_nothing(user, other_user):
    readable = Cube.objects.create(id="bobs-notes", name="Bob's notes", owner=other_user)
    CubeMembership.objects.create(cube=readable, user=user, role=CubeMembership.Role.READER)
    Cube.objects.create(id="bobs-private", name="Bob's private", owner=other_user)
    memories = stored(user, "The spare key is under the blue pot.")
    with pytest.raises(PermissionDenied) as refused:
        memory_move_many(actor=user, memory_ids=ids(memories), cube_id="bobs-notes")
    assert refused.value.extra["field"] == "cube_id" and "not write to it" in refused.value.message
    with pytest.raises(NotFound) as hidden:
        memory_move_many(actor=user, memory_ids=ids(memories), cube_id="bobs-private")
    assert hidden.value.extra["field"] == "cube_id"
    assert Memory.objects.get(pk=memories[0].pk).cube.is_personal


def test_tag_many_adds_and_removes(user, django_capture_on_commit_callbacks):
    tagged, plain = stored(user, "Water the ferns on Sunday.", tags=["garden"]) + stored(user, "Oil the hinges.")
    with django_capture_on_commit_callbacks(execute=True):
        changed = memory_tag_many(actor=user, memory_ids=ids([tagged, plain]), add=["weekend"])
    assert ids(changed) == ids([tagged, plain])
    assert Memory.objects.get(pk=tagged.pk).tags == ["garden", "weekend"]
    assert Memory.objects.get(pk=plain.pk).tags == ["weekend"]
    assert Event.objects.get(node_ids__contains=[tagged.pk], action="updated").detail == {
        "fields": {"tags": [["garden"], ["garden", "weekend"]]}}
    assert GraphEvent.objects.filter(kind="memory.updated").count() == 2

    changed = memory_tag_many(actor=user, memory_ids=ids([tagged, plain]), remove=["garden"])
    assert ids(changed) == ids([tagged])  # the other had no #garden: unchanged, left out
    assert Memory.objects.get(pk=tagged.pk).tags == ["weekend"]
    with pytest.raises(InvalidInput) as nothing:
        memory_tag_many(actor=user, memory_ids=ids([tagged]), add=["  "])
    assert nothing.value.extra["field"] == "add"


def test_another_users_memories_cannot_be_reached_by_their_ids(user, other_user):
    alices = stored(user, "Alice's safe combination is 12-34-56.")
    bobs = stored(other_user, "Bob's bank PIN hint: the year of the flood.")
    everything = ids(alices + bobs)
    for call in (lambda: memory_delete_many(actor=other_user, memory_ids=everything),
                 lambda: memory_restore_many(actor=other_user, memory_ids=everything),
                 lambda: memory_tag_many(actor=other_user, memory_ids=everything, add=["mine"]),
                 lambda: memory_move_many(actor=other_user, memory_ids=everything, cube_id=bobs[0].cube_id)):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value.extra["field"] == "memory_ids[0]" and "not one of your memories" in caught.value.message
    # one transaction: bob's own memory, named after alice's, was not changed either
    for memory in Memory.objects.filter(pk__in=everything):
        assert memory.deleted_at is None and memory.tags == [] and memory.cube_id in {alices[0].cube_id, bobs[0].cube_id}
    assert Memory.objects.get(pk=alices[0].pk).cube_id == alices[0].cube_id


def test_a_memory_in_a_read_only_cube_is_refused(user, other_user):
    shared = Cube.objects.create(id="family", name="Family", owner=other_user)
    CubeMembership.objects.create(cube=shared, user=user, role=CubeMembership.Role.READER)
    [bobs] = stored(other_user, "Grandma's birthday is on 3 May.")
    Memory.objects.filter(pk=bobs.pk).update(cube=shared)
    with pytest.raises(PermissionDenied) as refused:
        memory_delete_many(actor=user, memory_ids=[str(bobs.pk)])
    assert refused.value.extra["field"] == "memory_ids[0]" and "read but not change" in refused.value.message
    assert Memory.objects.get(pk=bobs.pk).deleted_at is None


@pytest.mark.parametrize(("memory_ids", "field", "message"), [
    ([], "memory_ids", "select at least one"),
    ("not-a-list", "memory_ids", "must be a list"),
    (["0b0e6f1e-3c4f-4a39-9f3c-1f2e3d4c5b6a", "seven"], "memory_ids[1]", "not a memory id"),
    (["0b0e6f1e-3c4f-4a39-9f3c-1f2e3d4c5b6a"] * (MAX_BULK_MEMORIES + 1), "memory_ids", "at most"),
])
def test_bad_ids_are_named(user, memory_ids, field, message):
    with pytest.raises(InvalidInput) as caught:
        memory_delete_many(actor=user, memory_ids=memory_ids)
    assert caught.value.extra["field"] == field and message in caught.value.message

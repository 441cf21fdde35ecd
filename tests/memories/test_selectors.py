import numpy as np
import pytest

from apps.core.exceptions import InvalidInput, NotFound
from apps.cubes.models import Cube
from apps.memories.selectors import memory_counts, memory_list, memory_neighbours, memory_scope_cube_ids
from apps.memories.services import memory_delete
from apps.memories.validation import MemoryFilters


def test_neighbours_are_nearest_in_meaning_and_readable_only(user, other_user, store):
    tomatoes = store(user, "Water the tomatoes every other evening")
    store(user, "The quarterly tax return is due in April")
    close = store(user, "Tomato plants need watering every second night")
    theirs = store(other_user, "Water the tomatoes every evening")
    neighbours = memory_neighbours(actor=user, memory_id=tomatoes.pk)
    assert neighbours[0][0].pk == close.pk
    assert neighbours[0][1] > neighbours[1][1]
    assert theirs.pk not in {memory.pk for memory, _ in neighbours}


def test_neighbours_skip_deleted_memories(user, store):
    first = store(user, "Water the tomatoes every other evening")
    gone = store(user, "Tomato plants need watering every second night")
    memory_delete(actor=user, memory_id=gone.pk)
    assert gone.pk not in {memory.pk for memory, _ in memory_neighbours(actor=user, memory_id=first.pk)}


def test_list_and_counts_in_constant_queries(user, other_user, store, django_assert_num_queries):
    for n in range(4):
        store(user, f"Note number {n} about the garden")
    store(other_user, "Not yours")
    memory_delete(actor=user, memory_id=memory_list(actor=user).first().pk)
    with django_assert_num_queries(1):
        listed = [(m.cube.name, m.link_count) for m in memory_list(actor=user)]
    assert len(listed) == 3
    with django_assert_num_queries(2):
        counts = memory_counts(actor=user)
    assert (counts["total"], counts["deleted"]) == (3, 1)


@pytest.fixture
def crowded(user, other_user, store):
    """Alice's two tomato memories, and 300 of Bob's whose vectors sit right by Alice's first one,
    with the planner made to use the HNSW index, as it does on a large table."""
    from django.db import connection

    from apps.cubes.services import cube_ensure_personal
    from apps.memories.models import Memory, MemoryVector

    first = store(user, "Water the tomatoes every other evening", session_id="a")
    second = store(user, "Tomato plants need watering every second night", session_id="b")
    vector = MemoryVector.objects.get(memory=first).embedding
    cube = cube_ensure_personal(actor=other_user)
    bobs = Memory.objects.bulk_create(
        [Memory(cube=cube, owner=other_user, content=f"Bob's note {n}") for n in range(300)]
    )
    # Distinct vectors (pgvector stores identical ones as one graph element), all right by Alice's.
    nudged = []
    for n in range(len(bobs)):
        near = np.array(vector, dtype=float)
        near[n % len(near)] += 0.001 * (1 + n // len(near))
        nudged.append(near / np.linalg.norm(near))
    MemoryVector.objects.bulk_create(
        [MemoryVector(memory=memory, embedding=near, tokens=8) for memory, near in zip(bobs, nudged)]
    )
    with connection.cursor() as cursor:
        # The exact path needs a sort; the HNSW scan yields rows in order: this makes the planner take it.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
    return first, second


def test_neighbours_are_found_when_other_users_crowd_the_index(user, crowded):
    first, second = crowded
    assert [memory.pk for memory, _ in memory_neighbours(actor=user, memory_id=first.pk)] == [second.pk]


def test_links_are_found_when_other_users_crowd_the_index(user, crowded):
    from apps.memories.models import MemoryVector
    from apps.memories.sectors import ContentVector
    from apps.memories.services.linking import choose_links

    first, second = crowded
    stored = MemoryVector.objects.get(memory=second)
    content = ContentVector(stored.embedding, stored.tokens)
    assert [candidate.target_id for candidate in choose_links(second, content)] == [str(first.pk)]


def test_scope_over_several_named_cubes_must_all_be_readable(user, other_user, store):
    mine = store(user, "In my personal cube").cube_id
    Cube.objects.create(id="garden", name="Garden", owner=user)
    theirs = store(other_user, "In bob's cube").cube_id
    assert memory_scope_cube_ids(actor=user, filters=MemoryFilters.build(cube_ids=["garden", mine, "garden"])) == [
        "garden", mine]
    with pytest.raises(NotFound) as refused:
        memory_scope_cube_ids(actor=user, filters=MemoryFilters.build(cube_ids=[mine, theirs]))
    assert refused.value.extra["field"] == "cube_ids" and theirs in refused.value.message
    with pytest.raises(InvalidInput) as bad:
        MemoryFilters.build(cube_ids=["ok", "not a cube/id"])
    assert bad.value.field == "cube_ids[1]"

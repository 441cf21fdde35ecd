from apps.memories.selectors import memory_counts, memory_list, memory_neighbours
from apps.memories.services import memory_delete


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

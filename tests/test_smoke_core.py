from apps.memories.services import memory_retrieve


def test_store_then_retrieve_finds_the_memory(user, store):
    memory = store(user, "User prefers dark mode for all applications")
    result = memory_retrieve(actor=user, text="dark mode preference")
    assert [item.memory.pk for item in result.items] == [memory.pk]

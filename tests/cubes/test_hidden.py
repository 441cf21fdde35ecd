"""Hidden (system) cubes: a benchmark's throwaway data is in no list, scope, lookup or search of its owner (nor of
anyone else), except inside apps.cubes.access.hidden_cube_scope, where its owner has it as any cube of theirs."""
import pytest

from apps.core.exceptions import NotFound
from apps.cubes.access import cube_get_writable, cube_ids_readable, cube_ids_writable, hidden_cube_scope
from apps.cubes.models import Cube
from apps.cubes.selectors import cube_list, cubes_unregistered
from apps.cubes.services import cube_delete, cube_register
from apps.memories.selectors import memory_count_owned, memory_get
from apps.memories.services import memory_retrieve, memory_search, memory_store
from apps.memories.validation import MemoryFilters

SECRET = "The lighthouse keeper on Varnholm island brews juniper tea at dawn."


def _ids(queryset) -> set[str]:
    return set(queryset.values_list("id", flat=True))


def test_a_hidden_cube_is_nowhere_outside_its_scope(user, other_user, api):
    visible = memory_store(actor=user, content="Juniper grows on the dunes of the northern islands.").memory
    cube_register(actor=user, cube_id="bench-hidden", hidden=True)
    with hidden_cube_scope("bench-hidden"):
        hidden = memory_store(actor=user, content=SECRET, cube_id="bench-hidden").memory
        assert "bench-hidden" in _ids(cube_ids_readable(actor=user)) and cube_get_writable(actor=user,
                                                                                           cube_id="bench-hidden")
        inside = memory_retrieve(actor=user, text="juniper tea lighthouse", filters=MemoryFilters(cube_id="bench-hidden"),
                                 reinforce=False)
        assert [item.memory.pk for item in inside.items] == [hidden.pk]
        assert "bench-hidden" not in _ids(cube_ids_readable(actor=other_user))  # the owner's only
    assert "bench-hidden" not in _ids(cube_list(actor=user)) | _ids(cube_ids_readable(actor=user)) | _ids(
        cube_ids_writable(actor=user)) | _ids(cubes_unregistered(actor=user))
    with pytest.raises(NotFound):
        cube_get_writable(actor=user, cube_id="bench-hidden")
    with pytest.raises(NotFound):
        memory_get(actor=user, memory_id=hidden.pk)
    for found in (memory_retrieve(actor=user, text="juniper tea lighthouse", reinforce=False),
                  memory_search(actor=user, text="juniper", reinforce=False)):
        assert [item.memory.pk for item in found.items] == [visible.pk]
    assert memory_count_owned(actor=user) == 1
    # Every edge: the cube list, its detail, a search naming it.
    assert "bench-hidden" not in {cube["id"] for cube in api.get("/api/v1/cubes/").json()["results"]}
    assert api.get("/api/v1/cubes/bench-hidden/").status_code == 404
    with pytest.raises(NotFound):
        memory_retrieve(actor=user, text="juniper", filters=MemoryFilters(cube_ids=("bench-hidden",)), reinforce=False)

    with hidden_cube_scope("bench-hidden"):
        cube_delete(actor=user, cube_id="bench-hidden")
    assert not Cube.objects.filter(pk="bench-hidden").exists()


def test_another_user_cannot_reach_a_hidden_cube_even_inside_a_scope(user, other_user):
    cube_register(actor=user, cube_id="bench-alice", hidden=True)
    with hidden_cube_scope("bench-alice"):
        with pytest.raises(NotFound):
            memory_store(actor=other_user, content="Bob writes here.", cube_id="bench-alice")
        with pytest.raises(NotFound):
            cube_delete(actor=other_user, cube_id="bench-alice")
    assert Cube.objects.filter(pk="bench-alice", hidden=True).exists()

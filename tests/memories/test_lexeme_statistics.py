"""The per-cube lexeme counts (CubeLexeme) that the lexical score's IDF weights come from are kept by
database triggers: after every kind of write they must equal a count made from scratch."""
import pytest
from django.db import connection
from django.utils import timezone

from apps.cubes.models import Cube
from apps.cubes.services import cube_ensure_personal
from apps.memories.models import CubeLexeme, Memory
from apps.memories.services import memory_store_many
from apps.memories.services.lifecycle import memory_delete, memory_reinforce, memory_restore, memory_update

pytestmark = pytest.mark.django_db


def recounted() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT m.cube_id, lexeme, count(*)
            FROM memories_memory AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
            WHERE m.deleted_at IS NULL GROUP BY 1, 2
        """)
        return {(cube, lexeme): count for cube, lexeme, count in cursor.fetchall()}


def kept() -> dict:
    return {(row.cube_id, row.lexeme): row.documents for row in CubeLexeme.objects.all() if row.documents}


def documents(cube_id: str, lexeme: str) -> int:
    row = CubeLexeme.objects.filter(cube_id=cube_id, lexeme=lexeme).first()
    return row.documents if row else 0


def test_store_counts_each_lexeme_once_per_memory_and_the_live_memories(user, store):
    first = store(user, "Pottery class on Tuesday; pottery is calming.")
    store(user, "The pottery wheel arrived.")
    cube = first.cube_id
    assert documents(cube, "potteri") == 2  # twice in one memory still counts that memory once
    assert documents(cube, "tuesday") == 1
    assert documents(cube, "") == 2
    assert kept() == recounted()


def test_edit_soft_delete_restore_and_hard_delete_keep_counts_exact(user, store):
    kept_memory = store(user, "Maria planted tomatoes in the garden.")
    changing = store(user, "Maria painted a lake at sunrise.", context="holiday in France")
    cube = changing.cube_id
    assert documents(cube, "franc") == 1  # the context is searchable, so it counts too
    memory_update(actor=user, memory_id=changing.pk, content="Maria sold the old bicycle.")
    assert documents(cube, "paint") == 0 and documents(cube, "bicycl") == 1
    assert kept() == recounted()
    memory_delete(actor=user, memory_id=changing.pk)
    assert documents(cube, "maria") == 1 and documents(cube, "") == 1
    assert kept() == recounted()
    memory_restore(actor=user, memory_id=changing.pk)
    assert documents(cube, "maria") == 2 and documents(cube, "") == 2
    memory_delete(actor=user, memory_id=kept_memory.pk, soft=False)
    assert documents(cube, "tomato") == 0 and documents(cube, "") == 1
    assert kept() == recounted()


def test_bulk_writes_and_moves_between_cubes_keep_counts_exact(user, other_user):
    home = cube_ensure_personal(actor=user)
    work = Cube.objects.create(id="work-notes", name="Work", owner=user)
    memory_store_many(actor=user, items=[{"content": f"Standup note {i} about the release"} for i in range(5)],
                      cube_id=home.id, link=False)
    memory_store_many(actor=other_user, items=[{"content": "Bob's release checklist"}], link=False)
    assert documents(home.id, "releas") == 5
    Memory.objects.filter(cube=home, content__endswith="2 about the release").update(cube=work)
    assert documents(home.id, "releas") == 4 and documents(work.id, "releas") == 1
    Memory.objects.filter(cube=home).update(deleted_at=timezone.now())
    assert documents(home.id, "") == 0
    Memory.objects.filter(cube=home).update(deleted_at=None, content="Retro notes")
    assert documents(home.id, "retro") == 4 and documents(home.id, "releas") == 0
    Memory.objects.filter(cube=work).delete()
    assert kept() == recounted()
    assert documents(cube_ensure_personal(actor=other_user).id, "releas") == 1  # other tenants untouched


def test_reinforcement_and_decay_leave_the_counts_alone(user, store, django_assert_num_queries):
    memory = store(user, "Reading list: Dune, Piranesi.")
    before = kept()
    with django_assert_num_queries(1):
        memory_reinforce(memory_ids=[memory.pk])
    Memory.objects.filter(pk=memory.pk).update(strength=0.4, access_count=7)
    assert kept() == before == recounted()

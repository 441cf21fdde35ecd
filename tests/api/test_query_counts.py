"""List endpoints run a fixed number of queries, however many rows they return (no N+1).

Each count is: 1 token lookup + 1 COUNT for the paginator + 1 page (+ 1 to load the memory for links).
A first request runs before each measurement, so the once-a-minute last_used_at write is out of the way.
"""
import pytest

from apps.cubes.models import Cube, CubeMembership
from apps.memories.models import MemoryLink
from tests.api.conftest import memory_url

pytestmark = pytest.mark.django_db


def assert_queries(api, django_assert_num_queries, url, expected: int, rows: int):
    api.get(url)
    with django_assert_num_queries(expected):
        response = api.get(url)
    assert response.status_code == 200
    assert len(response.json()["results"]) == rows


def test_memory_list(api, user, store, django_assert_num_queries):
    memories = [store(user, f"Memory number {n} about topic {n}") for n in range(4)]
    MemoryLink.objects.get_or_create(source=memories[0], target=memories[1], defaults={"weight": 0.7})
    assert_queries(api, django_assert_num_queries, "/api/v1/memories/", 3, rows=4)


def test_memory_links(api, user, store, django_assert_num_queries):
    hub, *others = [store(user, f"Linked memory {n}") for n in range(4)]
    MemoryLink.objects.filter(source=hub).delete()
    MemoryLink.objects.filter(target=hub).delete()
    for other in others:
        MemoryLink.objects.create(source=hub, target=other, weight=0.6)
    assert_queries(api, django_assert_num_queries, memory_url(hub, "links"), 4, rows=3)


def test_cube_list(api, user, other_user, store, django_assert_num_queries):
    store(user, "A memory in the personal cube")
    for n in range(3):
        cube = Cube.objects.create(id=f"bobs-{n}", name=f"Bob's cube {n}", owner=other_user)
        CubeMembership.objects.create(cube=cube, user=user, role=CubeMembership.Role.WRITER)
    assert_queries(api, django_assert_num_queries, "/api/v1/cubes/", 3, rows=4)


def test_token_list(api, user, make_token, django_assert_num_queries):
    for n in range(4):
        make_token(user, name=f"token {n}")
    assert_queries(api, django_assert_num_queries, "/api/v1/tokens/", 3, rows=5)

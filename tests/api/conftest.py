import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.cubes.models import Cube, CubeMembership


@pytest.fixture
def anonymous():
    return APIClient()


@pytest.fixture
def read_api(user, api_client_for):
    """`user` with a read-only token."""
    return api_client_for(user, scopes=("read",))


@pytest.fixture
def other_api(other_user, api_client_for):
    return api_client_for(other_user)


@pytest.fixture
def shared_cube(user, other_user):
    """A cube owned by `user` that `other_user` may read but not write."""
    cube = Cube.objects.create(id="team-notes", name="Team notes", owner=user)
    CubeMembership.objects.create(cube=cube, user=other_user, role=CubeMembership.Role.READER)
    return cube


def memory_url(memory, action: str | None = None) -> str:
    memory_id = str(getattr(memory, "pk", memory))
    name = f"memories_api:memory-{action}" if action else "memories_api:memory-detail"
    return reverse(name, kwargs={"memory_id": memory_id})

import pytest

from apps.memories.services import memory_delete
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

CUBE_FIELDS = {"id", "name", "description", "path", "owner", "is_personal", "role", "memory_count", "created_at", "updated_at"}


def test_list_shows_each_readable_cube_with_role_and_live_memory_count(api, other_api, user, store, shared_cube):
    store(user, "Personal note one")
    gone = store(user, "Personal note two")
    memory_delete(actor=user, memory_id=gone.pk)
    store(user, "Shared note", cube_id=shared_cube.pk)

    response = api.get("/api/v1/cubes/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"}
    personal, team = body["results"]
    assert set(personal) == CUBE_FIELDS
    assert (personal["is_personal"], personal["role"], personal["memory_count"]) == (True, "owner", 1)
    assert (team["id"], team["role"], team["memory_count"], team["owner"]) == ("team-notes", "owner", 1, "alice")

    others = other_api.get("/api/v1/cubes/").json()["results"]
    assert [(cube["id"], cube["role"]) for cube in others] == [("team-notes", "reader")]


def test_get_a_cube(api, shared_cube):
    response = api.get("/api/v1/cubes/team-notes/")
    assert response.status_code == 200
    assert set(response.json()) == CUBE_FIELDS | {"statistics"}
    assert response.json()["name"] == "Team notes"


@pytest.mark.parametrize("cube_id", ["nowhere", "bad%20id", "%00"])
def test_unknown_or_malformed_cube_is_not_found(api, cube_id):
    assert_error(api.get(f"/api/v1/cubes/{cube_id}/"), 404, code="not_found")


def test_cube_list_refuses_unknown_parameters(api):
    assert_error(api.get("/api/v1/cubes/", {"owner": "bob"}), 400, field="owner")

"""User B cannot see or touch user A's memories, cubes or tokens: every path answers "not found"."""
import pytest

from apps.accounts.models import ApiToken
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_delete
from tests.api.conftest import memory_url
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

SECRET = "Alice's bank PIN hint is her first cat's name"


@pytest.fixture
def alices(user, store):
    memory = store(user, SECRET, tags=["private"], category="secrets")
    neighbour = store(user, "Alice's cat was called Whiskers")
    MemoryLink.objects.get_or_create(source=memory, target=neighbour, defaults={"weight": 0.9})
    return memory


def test_other_users_see_none_of_alices_memories(other_api, alices):
    listing = other_api.get("/api/v1/memories/", {"deleted": "include"}).json()
    assert listing["count"] == 0
    assert other_api.get("/api/v1/memories/", {"cube": alices.cube_id}).json()["count"] == 0
    for url in ("/api/v1/memories/retrieve/", "/api/v1/memories/search/"):
        for body in ({"text": "bank PIN hint"}, {"tags": ["private"]}, {"cube": alices.cube_id}, {}):
            result = other_api.post(url, body, format="json").json()
            assert result["results"] == [] and result["total_count"] == 0, (url, body)


def test_every_memory_operation_on_alices_memory_is_not_found(other_api, alices):
    for response in (
        other_api.get(memory_url(alices)),
        other_api.patch(memory_url(alices), {"content": "hijacked"}, format="json"),
        other_api.delete(memory_url(alices)),
        other_api.delete(memory_url(alices) + "?hard=true"),
        other_api.post(memory_url(alices, "restore"), format="json"),
        other_api.get(memory_url(alices, "links")),
    ):
        error = assert_error(response, 404, code="not_found")
        assert error["message"] == "Memory not found"
        assert SECRET not in response.content.decode()
    alices.refresh_from_db()
    assert alices.content == SECRET and alices.deleted_at is None


def test_restoring_alices_deleted_memory_is_not_found(other_api, user, alices):
    memory_delete(actor=user, memory_id=alices.pk)
    assert_error(other_api.post(memory_url(alices, "restore"), format="json"), 404, code="not_found")
    assert Memory.objects.get(pk=alices.pk).deleted_at is not None


def test_links_to_unreadable_memories_are_left_out(other_api, other_user, user, store, alices):
    bobs = store(other_user, "Bob's note about cats")
    MemoryLink.objects.create(source=bobs, target=alices, weight=0.7)
    links = other_api.get(memory_url(bobs, "links")).json()
    assert links["count"] == 0
    assert SECRET not in str(links)


def test_other_users_cubes_are_invisible(other_api, alices):
    cubes = other_api.get("/api/v1/cubes/").json()["results"]
    assert alices.cube_id not in {cube["id"] for cube in cubes}
    assert_error(other_api.get(f"/api/v1/cubes/{alices.cube_id}/"), 404, code="not_found")


def test_other_users_tokens_are_invisible_and_unrevocable(other_api, user, make_token):
    make_token(user, name="alice-laptop")
    alices_token = ApiToken.objects.get(user=user, name="alice-laptop")
    names = {token["name"] for token in other_api.get("/api/v1/tokens/").json()["results"]}
    assert "alice-laptop" not in names
    assert_error(other_api.delete(f"/api/v1/tokens/{alices_token.pk}/"), 404, code="not_found")
    alices_token.refresh_from_db()
    assert alices_token.revoked_at is None


def test_a_reader_of_a_shared_cube_may_read_but_not_change(other_api, user, store, shared_cube):
    shared = store(user, "The team's release calendar", cube_id=shared_cube.pk)
    assert other_api.get(memory_url(shared)).status_code == 200
    found = other_api.post("/api/v1/memories/retrieve/", {"text": "release calendar"}, format="json").json()
    assert [item["id"] for item in found["results"]] == [str(shared.pk)]
    assert_error(other_api.patch(memory_url(shared), {"importance": 1.0}, format="json"), 403)
    assert_error(other_api.delete(memory_url(shared)), 403)
    shared.refresh_from_db()
    assert shared.importance == 0.5 and shared.deleted_at is None

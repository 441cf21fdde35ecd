"""POST /api/v1/memories/batch/: many memories in one call, validated whole, written whole, one model call."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memories import sectors
from apps.memories.models import Memory, MemoryLink, MemoryVector
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

BATCH_URL = "/api/v1/memories/batch/"


def batch(*contents, **fields):
    return {"memories": [{"content": content, **fields} for content in contents]}


def test_a_batch_is_stored_in_order_with_its_links(api, user):
    response = api.post(BATCH_URL, batch("Team standup notes: deploy the API service on Friday",
                                         "Invoice 4411 is due on the third of March",
                                         "Team standup notes: deploy the API service on Friday again",
                                         session_id="s", tags=["standup"]), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert [memory["content"] for memory in body["memories"]] == [
        "Team standup notes: deploy the API service on Friday", "Invoice 4411 is due on the third of March",
        "Team standup notes: deploy the API service on Friday again"]
    first, _, third = (Memory.objects.get(pk=memory["id"]) for memory in body["memories"])
    assert {memory.owner_id for memory in (first, third)} == {user.pk}
    assert MemoryVector.objects.filter(memory__in=[first, third]).count() == 2
    assert body["links_created"][0] == 0 and body["links_created"][2] >= 1
    assert MemoryLink.objects.filter(source=third, target=first).exists()


def test_one_model_call_embeds_the_whole_batch(api, monkeypatch):
    sectors.sector_offsets()  # measured once per process, not part of the batch
    calls = []
    real = sectors.embed_texts
    monkeypatch.setattr(sectors, "embed_texts", lambda texts: calls.append(len(texts)) or real(texts))
    response = api.post(BATCH_URL, batch(*(f"Note {n} about the garden" for n in range(7))), format="json")
    assert response.status_code == 201
    assert calls == [7]


@pytest.mark.parametrize(("second", "field"), [
    ({"content": ""}, "memories[1].content"),
    ({"content": "ok", "importance": 2}, "memories[1].importance"),
    ({"content": "ok", "colour": "red"}, "memories[1]"),
    ({"content": "ok", "metadata": {"note": "nul \u0000 byte"}}, "memories[1].metadata"),
])
def test_a_bad_memory_is_named_by_its_index_and_nothing_is_written(api, user, second, field):
    response = api.post(BATCH_URL, {"memories": [{"content": "A fine memory"}, second]}, format="json")
    error = assert_error(response, 400, code="invalid_input")
    assert error["message"].startswith(field), error
    assert not Memory.objects.filter(owner=user).exists()


@pytest.mark.parametrize("count", [0, 101])
def test_a_batch_holds_one_to_a_hundred_memories(api, user, count):
    response = api.post(BATCH_URL, batch(*(f"note {n}" for n in range(count))), format="json")
    error = assert_error(response, 400, code="invalid_input", field="memories")
    assert "1 to 100" in error["message"]
    assert not Memory.objects.filter(owner=user).exists()


def test_a_batch_into_a_cube_you_may_only_read_is_refused(other_api, other_user, shared_cube):
    response = other_api.post(BATCH_URL, {"cube": shared_cube.pk, **batch("Sneaky note")}, format="json")
    assert_error(response, 403, code="permission_denied", field="cube")
    assert not Memory.objects.filter(content="Sneaky note").exists()


def test_a_read_token_cannot_store_a_batch(user, api_client_for):
    response = api_client_for(user, scopes=("read",)).post(BATCH_URL, batch("note"), format="json")
    assert_error(response, 403)
    assert not Memory.objects.filter(owner=user).exists()


def test_the_statements_do_not_grow_with_the_batch(api, user):
    api.post(BATCH_URL, batch("warm up the token and the personal cube"), format="json")

    def statements(count: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            response = api.post(BATCH_URL, batch(*(f"Lighthouse log {count}-{n}: the lamp was checked"
                                                   for n in range(count))), format="json")
        assert response.status_code == 201
        return len(captured)

    assert statements(40) <= statements(2)


def test_a_batch_cannot_write_into_another_users_personal_cube(api, other_api, user):
    alices_cube = api.post(BATCH_URL, batch("Alice's own note"), format="json").json()["memories"][0]["cube"]
    response = other_api.post(BATCH_URL, {"cube": alices_cube, **batch("Bob's note in Alice's cube")}, format="json")
    assert response.status_code in (403, 404), response.content
    assert list(Memory.objects.filter(cube_id=alices_cube).values_list("content", flat=True)) == ["Alice's own note"]

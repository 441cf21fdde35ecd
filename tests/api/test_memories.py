"""Contracts of /api/v1/memories/: status codes and shapes, through the real services and model."""
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memories.models import Memory, MemoryLink, MemoryVector
from apps.memories.services import memory_delete
from tests.api.conftest import memory_url
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/memories/"
RETRIEVE_URL = "/api/v1/memories/retrieve/"
SEARCH_URL = "/api/v1/memories/search/"
MEMORY_FIELDS = {
    "id", "cube", "kind", "content", "primary_sector", "importance", "salience", "strength", "decay_rate",
    "access_count", "last_accessed_at", "session_id", "agent_id", "keywords", "tags", "category", "context",
    "metadata", "created_at", "updated_at", "deleted_at",
}
SCORE_FIELDS = {"score", "relevance", "dense", "lexical", "recency", "link_weight"}


def test_store_returns_the_created_memory(api, user):
    response = api.post(LIST_URL, {
        "content": "The deploy pipeline must run migrations before restarting workers",
        "primary_sector": "procedural", "session_id": "s-1", "agent_id": "claude", "tags": ["ops"],
        "category": "deploy", "context": "release checklist", "importance": 0.9, "metadata": {"source": "chat"},
    }, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == MEMORY_FIELDS
    memory = Memory.objects.get(pk=body["id"])
    assert memory.owner == user
    assert body["cube"] == memory.cube_id == f"alice-{user.pk}"
    assert body["primary_sector"] == "procedural"
    assert body["tags"] == ["ops"] and body["category"] == "deploy" and body["metadata"] == {"source": "chat"}
    assert body["session_id"] == "s-1" and body["agent_id"] == "claude" and body["importance"] == 0.9
    assert "migrations" in body["keywords"], "keywords are extracted when none are given"
    assert MemoryVector.objects.filter(memory=memory).count() == 1


def test_store_defaults_to_the_semantic_sector(api):
    response = api.post(LIST_URL, {"content": "Paris is the capital of France"}, format="json")
    assert response.status_code == 201
    assert response.json()["primary_sector"] == "semantic"


def test_store_into_a_named_cube(api, shared_cube):
    response = api.post(LIST_URL, {"content": "Team standup is at 9:30", "cube": shared_cube.pk}, format="json")
    assert response.status_code == 201
    assert response.json()["cube"] == "team-notes"


def test_store_into_a_cube_you_may_only_read_is_forbidden(other_api, shared_cube):
    response = other_api.post(LIST_URL, {"content": "Sneaky note", "cube": shared_cube.pk}, format="json")
    assert_error(response, 403, code="permission_denied", field="cube")
    assert not Memory.objects.filter(content="Sneaky note").exists()


def test_list_is_paginated_newest_first(api, user, store):
    older = store(user, "The office wifi password changed in March")
    newer = store(user, "Lunch is served at noon on Fridays")
    response = api.get(LIST_URL)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == 2
    assert [item["id"] for item in body["results"]] == [str(newer.pk), str(older.pk)]
    assert set(body["results"][0]) == MEMORY_FIELDS | {"link_count"}

    page = api.get(LIST_URL, {"limit": 1, "offset": 1}).json()
    assert [item["id"] for item in page["results"]] == [str(older.pk)]
    assert page["previous"] is not None and page["next"] is None


def test_list_filters_by_cube_sector_and_deletion(api, user, store, shared_cube):
    personal = store(user, "I felt proud after the marathon", primary_sector="emotional")
    team = store(user, "The team agreed on trunk-based development", cube_id=shared_cube.pk)
    gone = store(user, "An outdated note about the old VPN")
    memory_delete(actor=user, memory_id=gone.pk)

    def ids(**params):
        return {item["id"] for item in api.get(LIST_URL, params).json()["results"]}

    assert ids() == {str(personal.pk), str(team.pk)}
    assert ids(cube="team-notes") == {str(team.pk)}
    assert ids(sector="emotional") == {str(personal.pk)}
    assert ids(deleted="only") == {str(gone.pk)}
    assert ids(deleted="include") == {str(personal.pk), str(team.pk), str(gone.pk)}


def test_get_returns_the_memory_even_when_soft_deleted(api, user, store):
    memory = store(user, "Keep the staging database small")
    assert api.get(memory_url(memory)).json()["deleted_at"] is None
    memory_delete(actor=user, memory_id=memory.pk)
    response = api.get(memory_url(memory))
    assert response.status_code == 200
    assert set(response.json()) == MEMORY_FIELDS
    assert response.json()["deleted_at"] is not None


def test_patch_changes_only_the_given_fields(api, user, store):
    memory = store(user, "The build uses Python 3.11", tags=["build"], category="tooling")
    response = api.patch(memory_url(memory), {"importance": 0.8, "tags": ["build", "python"]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["importance"] == 0.8 and body["tags"] == ["build", "python"]
    assert body["content"] == "The build uses Python 3.11" and body["category"] == "tooling"


def test_patch_with_new_content_re_embeds(api, user, store):
    memory = store(user, "The build uses Python 3.11")
    before = MemoryVector.objects.get(memory=memory).embedding
    response = api.patch(memory_url(memory), {"content": "Gardening tips for growing tomatoes"}, format="json")
    assert response.status_code == 200
    assert "tomatoes" in response.json()["keywords"]
    assert MemoryVector.objects.get(memory=memory).embedding != before


def test_soft_delete_then_restore(api, user, store):
    memory = store(user, "Rotate the API keys every quarter")
    response = api.delete(memory_url(memory))
    assert response.status_code == 204 and response.content == b""
    memory.refresh_from_db()
    assert memory.deleted_at is not None and memory.strength == 0.0
    assert api.get(LIST_URL).json()["count"] == 0

    response = api.post(memory_url(memory, "restore"), format="json")
    assert response.status_code == 200
    assert response.json()["deleted_at"] is None and response.json()["strength"] == 1.0
    assert api.get(LIST_URL).json()["count"] == 1


def test_restoring_a_live_memory_is_a_clear_error(api, user, store):
    memory = store(user, "Nothing to restore here")
    assert_error(api.post(memory_url(memory, "restore"), format="json"), 400, code="invalid_input")


def test_hard_delete_removes_the_memory_with_its_vectors_and_links(api, user, store):
    memory = store(user, "A scratch note to throw away")
    other = store(user, "Another scratch note")
    MemoryLink.objects.get_or_create(source=memory, target=other, defaults={"weight": 0.8})
    response = api.delete(memory_url(memory) + "?hard=true")
    assert response.status_code == 204
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryVector.objects.filter(memory_id=memory.pk).exists()
    assert not MemoryLink.objects.filter(source_id=memory.pk).exists()
    assert_error(api.get(memory_url(memory)), 404, code="not_found")


def test_links_by_direction(api, user, store):
    hub = store(user, "Project Apollo kickoff meeting notes")
    follow_up = store(user, "Weather forecast for the weekend")
    origin = store(user, "Recipe for banana bread")
    MemoryLink.objects.filter(source__in=[hub, follow_up, origin]).delete()
    MemoryLink.objects.create(source=hub, target=follow_up, weight=0.9, link_type="temporal")
    MemoryLink.objects.create(source=origin, target=hub, weight=0.6, link_type="causal")

    response = api.get(memory_url(hub, "links"))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    first = body["results"][0]
    assert set(first) == {"id", "link_type", "weight", "traversal_count", "created_at", "source", "target"}
    assert set(first["target"]) == {"id", "cube", "content", "primary_sector", "deleted_at"}
    assert (first["source"]["id"], first["target"]["id"], first["weight"]) == (str(hub.pk), str(follow_up.pk), 0.9)

    outgoing = api.get(memory_url(hub, "links"), {"direction": "outgoing"}).json()["results"]
    incoming = api.get(memory_url(hub, "links"), {"direction": "incoming"}).json()["results"]
    assert [link["target"]["id"] for link in outgoing] == [str(follow_up.pk)]
    assert [link["source"]["id"] for link in incoming] == [str(origin.pk)]


def test_retrieve_ranks_by_meaning_and_reports_scores(api, user, store):
    dark_mode = store(user, "User prefers dark mode in every editor")
    store(user, "The quarterly budget review is on Thursday")
    response = api.post(RETRIEVE_URL, {"text": "which colour theme does the user like?"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"results", "total_count"}
    assert body["total_count"] == 2
    assert body["results"][0]["id"] == str(dark_mode.pk)
    assert set(body["results"][0]) == MEMORY_FIELDS | SCORE_FIELDS
    assert body["results"][0]["score"] >= body["results"][1]["score"]


def test_retrieve_applies_every_filter(api, user, store, shared_cube):
    target = store(user, "Deploys happen on Tuesdays", primary_sector="procedural", tags=["ops", "deploy"],
                   keywords=["deploy"], category="process", session_id="s-9", importance=1.0, cube_id=shared_cube.pk)
    other = store(user, "Deploys used to happen on Mondays", primary_sector="episodic", tags=["ops"])
    Memory.objects.filter(pk=other.pk).update(strength=0.2, created_at=timezone.now() - timedelta(days=3))
    matching = {
        "sectors": ["procedural", "reflective"], "primary_sector": "procedural", "min_strength": 0.5,
        "min_salience": 0.7, "keywords": ["deploy"], "tags": ["ops", "deploy"], "category": "process",
        "cube": "team-notes", "session_id": "s-9",
        "date_range": {"start": (timezone.now() - timedelta(hours=1)).isoformat(),
                       "end": (timezone.now() + timedelta(hours=1)).isoformat()},
    }
    for name, value in matching.items():
        body = api.post(RETRIEVE_URL, {name: value}, format="json").json()
        assert [item["id"] for item in body["results"]] == [str(target.pk)], name
        assert body["total_count"] == 1, name
    everything = api.post(RETRIEVE_URL, {"text": "when do deploys happen", **matching}, format="json").json()
    assert [item["id"] for item in everything["results"]] == [str(target.pk)]
    assert api.post(RETRIEVE_URL, {"text": "when do deploys happen"}, format="json").json()["total_count"] == 2


def test_retrieve_pages_with_limit_and_offset(api, user, store):
    for n in range(3):
        store(user, f"Meeting note number {n} about the roadmap")
    first = api.post(RETRIEVE_URL, {"text": "roadmap meeting", "limit": 2}, format="json").json()
    second = api.post(RETRIEVE_URL, {"text": "roadmap meeting", "limit": 2, "offset": 2}, format="json").json()
    assert len(first["results"]) == 2 and len(second["results"]) == 1
    assert first["total_count"] == second["total_count"] == 3
    assert {item["id"] for item in first["results"]}.isdisjoint(item["id"] for item in second["results"])


def test_search_boolean_query_highlights_matches(api, user, store):
    match = store(user, "Postgres backups run nightly at 2am")
    store(user, "Postgres upgrades need a maintenance window")
    response = api.post(SEARCH_URL, {"text": "postgres AND backups"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"results", "total_count", "search_type", "total_count_exact", "did_you_mean"}
    assert body["total_count_exact"] is True
    assert body["search_type"] == "full-text" and body["total_count"] == 1
    hit = body["results"][0]
    assert set(hit) == MEMORY_FIELDS | SCORE_FIELDS | {"highlight", "matched_terms"}
    assert hit["id"] == str(match.pk)
    assert "<b>backups</b>" in hit["highlight"]
    assert set(hit["matched_terms"]) == {"postgres", "backups"}


def test_search_without_text_is_a_metadata_search(api, user, store):
    tagged = store(user, "Invoice numbers start at 1000", tags=["billing"])
    store(user, "Unrelated note")
    body = api.post(SEARCH_URL, {"tags": ["billing"]}, format="json").json()
    assert body["search_type"] == "metadata"
    assert [item["id"] for item in body["results"]] == [str(tagged.pk)]


def test_a_read_token_may_retrieve_and_search_but_not_write(read_api, user, store):
    memory = store(user, "Read tokens are for dashboards")
    assert read_api.get(LIST_URL).status_code == 200
    assert read_api.get(memory_url(memory)).status_code == 200
    assert read_api.post(RETRIEVE_URL, {"text": "dashboards"}, format="json").status_code == 200
    assert read_api.post(SEARCH_URL, {"text": "dashboards"}, format="json").status_code == 200
    for response in (
        read_api.post(LIST_URL, {"content": "a new memory"}, format="json"),
        read_api.patch(memory_url(memory), {"importance": 1.0}, format="json"),
        read_api.delete(memory_url(memory)),
        read_api.post(memory_url(memory, "restore"), format="json"),
    ):
        assert_error(response, 403, code="permission_denied")
    memory.refresh_from_db()
    assert memory.importance == 0.5 and memory.deleted_at is None


def test_unknown_and_malformed_memory_ids_are_not_found(api):
    for memory_id in (uuid.uuid4(), "not-a-uuid", "1"):
        for response in (
            api.get(memory_url(memory_id)),
            api.patch(memory_url(memory_id), {"importance": 1.0}, format="json"),
            api.delete(memory_url(memory_id)),
            api.post(memory_url(memory_id, "restore"), format="json"),
            api.get(memory_url(memory_id, "links")),
        ):
            error = assert_error(response, 404, code="not_found")
            assert error["message"] == "Memory not found"

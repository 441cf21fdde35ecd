"""Every kind of bad input gets a 400 (or 404) in the envelope, naming the field, with nothing written."""
import json

import pytest

from apps.memories.models import Memory
from tests.api.conftest import memory_url
from tests.api.envelope import assert_error

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/memories/"
QUERY_URLS = ["/api/v1/memories/retrieve/", "/api/v1/memories/search/"]
VALID = {"content": "A perfectly good memory"}


@pytest.mark.parametrize("body, field", [
    ({}, "content"),
    ({"content": ""}, "content"),
    ({"content": "   \n\t "}, "content"),
    ({"content": 123}, "content"),
    ({"content": None}, "content"),
    ({"content": ["a list"]}, "content"),
    ({"content": "NUL \u0000 inside"}, "content"),
    ({**VALID, "primary_sector": "nostalgic"}, "primary_sector"),
    ({**VALID, "primary_sector": 3}, "primary_sector"),
    ({**VALID, "importance": 1.5}, "importance"),
    ({**VALID, "importance": -0.1}, "importance"),
    ({**VALID, "importance": "0.5"}, "importance"),
    ({**VALID, "importance": True}, "importance"),
    ({**VALID, "keywords": "one,two"}, "keywords"),
    ({**VALID, "keywords": [1, 2]}, "keywords"),
    ({**VALID, "keywords": ["k"] * 51}, "keywords"),
    ({**VALID, "tags": ["x" * 101]}, "tags"),
    ({**VALID, "tags": ["bad\u0000tag"]}, "tags"),
    ({**VALID, "category": "c" * 101}, "category"),
    ({**VALID, "context": "c" * 2001}, "context"),
    ({**VALID, "session_id": 42}, "session_id"),
    ({**VALID, "session_id": "s" * 201}, "session_id"),
    ({**VALID, "agent_id": "a\u0000b"}, "agent_id"),
    ({**VALID, "metadata": ["not", "an", "object"]}, "metadata"),
    ({**VALID, "metadata": {"note": "NUL \u0000 in metadata"}}, "metadata.note"),
    ({**VALID, "metadata": {"nested": [{"k\u0000": 1}]}}, "metadata.nested[0]"),
    ({**VALID, "cube": "no spaces allowed"}, "cube"),
    ({**VALID, "cube": 7}, "cube"),
    ({**VALID, "bogus": 1}, "bogus"),
    ({**VALID, "primarySector": "semantic"}, "primarySector"),
    ({**VALID, "id": "5a0e3c2e-0000-4000-8000-000000000000"}, "id"),
])
def test_store_refuses_bad_input(api, body, field):
    assert_error(api.post(LIST_URL, body, format="json"), 400, code="invalid_input", field=field)
    assert not Memory.objects.exists()


@pytest.mark.parametrize("metadata", ['{"note": "a\\ud800b"}', '{"a\\udfff": 1}', '{"deep": [{"k": "\\u0000"}]}'])
def test_store_refuses_metadata_that_postgresql_cannot_hold(api, metadata):
    """An unpaired surrogate or a NUL inside metadata (DRF's DictField lets both through) never reaches the jsonb
    INSERT, where it was a 500."""
    body = '{"content": "ok", "primary_sector": "semantic", "metadata": %s}' % metadata
    error = assert_error(api.generic("POST", LIST_URL, body, content_type="application/json"), 400,
                         code="invalid_input")
    assert error["details"]["field"].startswith("metadata"), error
    assert not Memory.objects.exists()


def test_store_refuses_content_over_the_size_limit(api, settings):
    settings.ENGRAM_MAX_CONTENT_CHARS = 50
    error = assert_error(api.post(LIST_URL, {"content": "x" * 51}, format="json"), 400, field="content")
    assert "50" in error["message"]
    assert api.post(LIST_URL, {"content": "x" * 50}, format="json").status_code == 201


def test_store_into_an_unknown_cube_is_not_found(api):
    assert_error(api.post(LIST_URL, {**VALID, "cube": "nowhere"}, format="json"), 404, code="not_found", field="cube")
    assert not Memory.objects.exists()


def test_malformed_json_is_a_clear_400(api):
    response = api.post(LIST_URL, '{"content": "unterminated', content_type="application/json")
    error = assert_error(response, 400, code="parse_error")
    assert "JSON" in error["message"]


@pytest.mark.parametrize("body", [[VALID], "just a string", 42, None])
def test_a_body_that_is_not_an_object_is_refused(api, body):
    response = api.post(LIST_URL, json.dumps(body), content_type="application/json")
    assert_error(response, 400, code="invalid_input")


def test_a_form_body_is_unsupported(api):
    assert_error(api.post(LIST_URL, VALID), 415, code="unsupported_media_type")


@pytest.mark.parametrize("url", QUERY_URLS)
@pytest.mark.parametrize("body, field", [
    ({"limit": 0}, "limit"),
    ({"limit": 101}, "limit"),
    ({"limit": "10"}, "limit"),
    ({"limit": 2.5}, "limit"),
    ({"limit": True}, "limit"),
    ({"offset": -1}, "offset"),
    ({"offset": "0"}, "offset"),
    ({"sectors": []}, "sectors"),
    ({"sectors": ["semantic", "astral"]}, "sectors"),
    ({"sectors": "semantic"}, "sectors"),
    ({"primary_sector": "astral"}, "primary_sector"),
    ({"min_strength": 2}, "min_strength"),
    ({"min_salience": -0.5}, "min_salience"),
    ({"min_salience": "high"}, "min_salience"),
    ({"date_range": {"start": "yesterday"}}, "date_range"),
    ({"date_range": {"end": 20250101}}, "date_range"),
    ({"date_range": {"from": "2025-01-01T00:00:00Z"}}, "date_range"),
    ({"date_range": "2025"}, "date_range"),
    ({"date_range": {"start": "2025-06-01T00:00:00Z", "end": "2025-01-01T00:00:00Z"}}, "date_range"),
    ({"text": 5}, "text"),
    ({"text": "nul \u0000 here"}, "text"),
    ({"text": "q" * 2001}, "text"),
    ({"keywords": "deploy"}, "keywords"),
    ({"tags": [None]}, "tags"),
    ({"category": 1}, "category"),
    ({"cube": "../etc"}, "cube"),
    ({"minStrength": 0.5}, "minStrength"),
    ({"query": "the seed calls it text"}, "query"),
])
def test_retrieve_and_search_refuse_bad_input(api, url, body, field):
    assert_error(api.post(url, body, format="json"), 400, code="invalid_input", field=field)


def test_search_with_only_negated_terms_names_the_text(api):
    assert_error(api.post(QUERY_URLS[1], {"text": "NOT postgres"}, format="json"), 400, field="text")


@pytest.mark.parametrize("body, field", [
    ({}, "non_field_errors"),
    ({"content": ""}, "content"),
    ({"content": None}, "content"),
    ({"strength": 1.01}, "strength"),
    ({"salience": "1"}, "salience"),
    ({"primary_sector": "astral"}, "primary_sector"),
    ({"tags": "ops"}, "tags"),
    ({"cube": "team-notes"}, "cube"),
    ({"session_id": "s-2"}, "session_id"),
])
def test_patch_refuses_bad_input(api, user, store, body, field):
    memory = store(user, "The original content", tags=["keep"])
    assert_error(api.patch(memory_url(memory), body, format="json"), 400, code="invalid_input", field=field)
    memory.refresh_from_db()
    assert memory.content == "The original content" and memory.tags == ["keep"]


@pytest.mark.parametrize("params, field", [
    ({"limit": 101}, "limit"),
    ({"limit": 0}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"offset": -1}, "offset"),
    ({"deleted": "maybe"}, "deleted"),
    ({"sector": "astral"}, "sector"),
    ({"cube": "bad id!"}, "cube"),
    ({"colour": "blue"}, "colour"),
])
def test_list_refuses_bad_query_parameters(api, params, field):
    assert_error(api.get(LIST_URL, params), 400, code="invalid_input", field=field)


def test_delete_refuses_a_bad_hard_flag(api, user, store):
    memory = store(user, "Still here")
    assert_error(api.delete(memory_url(memory) + "?hard=perhaps"), 400, field="hard")
    memory.refresh_from_db()
    assert memory.deleted_at is None


def test_restore_refuses_a_body(api, user, store):
    memory = store(user, "Deleted then restored")
    api.delete(memory_url(memory))
    assert_error(api.post(memory_url(memory, "restore"), {"force": True}, format="json"), 400, field="force")
    memory.refresh_from_db()
    assert memory.deleted_at is not None


def test_links_refuse_a_bad_direction(api, user, store):
    memory = store(user, "A lonely memory")
    assert_error(api.get(memory_url(memory, "links"), {"direction": "sideways"}), 400, field="direction")


HUGE = 2**63 - 1  # PostgreSQL's bigint at its end: it overflowed as an OFFSET before OFFSET bounded it
PAGED_LISTS = ["/api/v1/memories/", "/api/v1/tokens/", "/api/v1/cubes/", "/api/v1/projects/", "/api/v1/decisions/",
               "/api/v1/chat/sessions/", "/api/v1/reasoning/sessions/", "/api/v1/reasoning/notebooks/"]


@pytest.mark.parametrize("url", QUERY_URLS)
@pytest.mark.parametrize("offset", [10_001, HUGE, HUGE + 1, 1e308])
def test_a_huge_offset_is_refused_by_name(api, url, offset):
    error = assert_error(api.post(url, {"text": "anything", "offset": offset}, format="json"), 400, field="offset")
    assert "from 0 to 10000" in error["message"]


@pytest.mark.parametrize("url", PAGED_LISTS)
@pytest.mark.parametrize("params, field", [({"offset": HUGE}, "offset"), ({"offset": 10_001}, "offset"),
                                           ({"limit": HUGE}, "limit")])
def test_every_paged_list_refuses_a_huge_page(api, url, params, field):
    assert_error(api.get(url, params), 400, code="invalid_input", field=field)


def test_chat_history_refuses_a_huge_offset(api):
    session_id = api.post("/api/v1/chat/", {"query": "anything"}, format="json").json()["session_id"]
    assert_error(api.get(f"/api/v1/chat/sessions/{session_id}/", {"offset": HUGE}), 400, field="offset")

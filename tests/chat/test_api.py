"""The chat REST API: POST /api/v1/chat/, sessions listed, read with paged messages, and cleared; errors in
the envelope, isolation, query counts, the schema."""
import pytest
from django.core.management import call_command

from apps.chat.models import ChatSession
from apps.chat.services import chat_send
from tests.chat.conftest import FAKE_ANSWER, FAKE_MODEL

pytestmark = pytest.mark.django_db

CHAT_OPERATIONS = {
    "/api/v1/chat/": {"post"},
    "/api/v1/chat/sessions/": {"get"},
    "/api/v1/chat/sessions/{session_id}/": {"get", "delete"},
}


def test_chat_answers_with_the_model_and_continues_the_session(api, pet_memories, llm_server):
    response = api.post("/api/v1/chat/", {"query": "What is my cat called?", "top_k": 2, "max_tokens": 100,
                                          "cube_ids": ["alice-pets"]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["response"], body["method"], body["model"], body["token_count"]) == (FAKE_ANSWER, "llm",
                                                                                     FAKE_MODEL, 9)
    assert body["session_id"].startswith("chat_") and body["timestamp"]
    assert body["context_used"][0]["memory_id"] == str(pet_memories[0].pk)
    assert body["context_used"][0]["cube_id"] == "alice-pets"
    assert 0 < body["context_used"][0]["relevance_score"] <= 1
    assert llm_server.requests[0]["max_tokens"] == 100

    again = api.post("/api/v1/chat/", {"query": "Is she grey?", "session_id": body["session_id"]}, format="json")
    assert again.json()["session_id"] == body["session_id"]
    assert [m["role"] for m in llm_server.requests[1]["messages"]] == ["system", "user", "assistant", "user"]


def test_extractive_reply_over_rest(api, pet_memories, no_llm):
    body = api.post("/api/v1/chat/", {"query": "What is my cat called?"}, format="json").json()
    assert body["method"] == "extractive" and body["response"] == "From your memories:\n- My cat is named Miso. [1]"
    assert [used["memory_id"] for used in body["context_used"]] == [str(pet_memories[0].pk)]


def test_nothing_relevant_over_rest_says_so_with_no_context(api, pet_memories, llm_server):
    response = api.post("/api/v1/chat/", {"query": "zzzz qqqq nothing relevant"}, format="json")
    body = response.json()
    assert response.status_code == 200 and body["context_used"] == [] and body["method"] == "none"
    assert body["response"].startswith("Nothing in your memories is relevant to this question")
    assert "Search your memories" in body["response"] and llm_server.requests == []


def test_model_down_is_a_503_in_the_envelope(api, pet_memories, llm_server):
    llm_server.status, llm_server.body = 502, {"error": "upstream"}
    response = api.post("/api/v1/chat/", {"query": "What is my cat called?"}, format="json")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "llm_unavailable" and llm_server.base_url in error["message"]
    assert not ChatSession.objects.exists()


def test_session_detail_pages_messages_and_delete_clears(api, user, pet_memories, no_llm):
    session = chat_send(actor=user, query="first").session
    chat_send(actor=user, query="second", session_id=session.pk)
    url = f"/api/v1/chat/sessions/{session.pk}/"
    body = api.get(url, {"limit": 2, "offset": 1}).json()
    assert (body["session_id"], body["title"], body["total_messages"], body["limit"], body["offset"]) == (
        session.pk, "first", 4, 2, 1)
    # "first" is about no memory: nothing relevant, no context.
    assert [(m["role"], m["method"]) for m in body["messages"]] == [("assistant", "none"), ("user", "")]
    assert body["messages"][0]["context_used"] == []
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_session_list_is_paginated_with_constant_queries(api, user, pet_memories, no_llm,
                                                         django_assert_max_num_queries):
    for query in ("one", "two", "three"):
        chat_send(actor=user, query=query)
    # Authentication and token bookkeeping, the count and the page.
    with django_assert_max_num_queries(6):
        body = api.get("/api/v1/chat/sessions/", {"limit": 2}).json()
    assert body["count"] == 3
    assert [(s["title"], s["message_count"]) for s in body["results"]] == [("three", 2), ("two", 2)]


def test_session_detail_queries_do_not_grow_with_messages(api, user, pet_memories, no_llm,
                                                          django_assert_max_num_queries):
    session = chat_send(actor=user, query="first").session
    for query in ("second", "third", "fourth"):
        chat_send(actor=user, query=query, session_id=session.pk)
    with django_assert_max_num_queries(7):
        assert len(api.get(f"/api/v1/chat/sessions/{session.pk}/").json()["messages"]) == 8


def test_bob_cannot_see_alices_sessions_or_chat_over_her_cube(api_client_for, user, other_user, pet_memories,
                                                              no_llm):
    session = chat_send(actor=user, query="What is my cat called?").session
    bob = api_client_for(other_user)
    assert bob.get("/api/v1/chat/sessions/").json()["count"] == 0
    for response in (
        bob.get(f"/api/v1/chat/sessions/{session.pk}/"),
        bob.delete(f"/api/v1/chat/sessions/{session.pk}/"),
        bob.post("/api/v1/chat/", {"query": "hi", "session_id": session.pk}, format="json"),
    ):
        assert response.status_code == 404 and response.json()["error"]["details"]["field"] == "session_id"
    response = bob.post("/api/v1/chat/", {"query": "hi", "cube_ids": ["alice-pets"]}, format="json")
    assert response.status_code == 404 and response.json()["error"]["details"]["field"] == "cube_ids"
    assert ChatSession.objects.filter(pk=session.pk).exists()


@pytest.mark.parametrize("body, field", [
    ({"query": ""}, "query"),
    ({"query": "x" * 10001}, "query"),
    ({}, "query"),
    ({"query": "ok", "top_k": 11}, "top_k"),
    ({"query": "ok", "top_k": 0}, "top_k"),
    ({"query": "ok", "max_tokens": 10}, "max_tokens"),
    ({"query": "ok", "cube_ids": ["bad id!"]}, "cube_ids"),
    ({"query": "ok", "topk": 3}, "topk"),
])
def test_bad_input_is_a_400_naming_the_field(api, no_llm, body, field):
    response = api.post("/api/v1/chat/", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and field in error["details"]


def test_bad_history_paging_is_a_400(api, user, no_llm):
    session = chat_send(actor=user, query="first").session
    response = api.get(f"/api/v1/chat/sessions/{session.pk}/", {"limit": 5000})
    assert response.status_code == 400 and "limit" in response.json()["error"]["details"]


def test_chat_needs_a_write_token_and_reading_a_read_token(api_client_for, user, no_llm):
    reader = api_client_for(user, scopes=("read",))
    assert reader.post("/api/v1/chat/", {"query": "hi"}, format="json").status_code == 403
    assert reader.get("/api/v1/chat/sessions/").status_code == 200


def test_schema_documents_chat(client, tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operations in CHAT_OPERATIONS.items():
        assert set(schema["paths"][path]) == operations, path
    assert "503" in schema["paths"]["/api/v1/chat/"]["post"]["responses"]

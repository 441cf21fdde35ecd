"""The MemGOS profile through the SDK's own client (in process, and once over real HTTP): the seed's sixteen tools
and schemas, its examples end to end, its envelope and error types, isolation between users, validate_access
agreeing with what happens, session_info's counts, and chat (extractive, and through the client's sampling)."""
from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from mcp.client import Client

from apps.chat.models import ChatMessage
from apps.mcp.profiles.memgos.cubes import cube_rows
from apps.cubes.services import cube_register, cube_share
from apps.mcp.models import McpClientSession
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server
from apps.memories.models import Memory
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.memgos_support import assert_shape, seed_error_types, seed_tools
from tests.mcp.mind_support import over_http_legacy
from tests.mcp.support import envelope, free_port, in_process, over_http, sampling_client

pytestmark = pytest.mark.django_db(transaction=True)  # asyncio_mode is auto

SEED = seed_tools()
TOOLS = list(SEED)
ADD_EXAMPLE = SEED["add_memory"]["example"]
SEARCH_EXAMPLE = SEED["search_memories"]["example"]
ML_PAPER = "Gradient boosting and random forests are machine learning algorithms built from decision trees."


def memgos(token: str):
    return in_process(token, profile="memgos")


# Fields of the seed's responses that are there only on request.
OPTIONAL = frozenset({"memory_count"})  # list_cubes without include_stats


async def call(client, tool: str, arguments: dict) -> dict:
    """The tool's success payload, checked against the seed's response format."""
    result = await client.call_tool(tool, arguments)
    payload = envelope(result)
    assert result.is_error is False, payload
    assert_shape(payload, SEED[tool]["response"], tool, optional=OPTIONAL)
    return payload


def error_of(result, error_type: str, code: str, parameter: str | None = None) -> dict:
    payload = envelope(result)
    assert result.is_error is True and set(payload) == {"success", "error"}
    error = payload["error"]
    assert set(error) == {"type", "message", "code", "details", "timestamp"}
    assert (error["type"], error["code"]) == (error_type, code), error
    assert error["message"].strip() and error["timestamp"].endswith("Z")
    assert "Traceback" not in str(error)
    if parameter is not None:
        assert error["details"]["parameter"] == parameter, error
    return error


@database_sync_to_async
def register(user, cube_id: str, **fields):
    return cube_register(actor=user, cube_id=cube_id, **fields)


@database_sync_to_async
def share(owner, cube_id: str, user, role: str):
    return cube_share(actor=owner, cube_id=cube_id, user=user.username, role=role)


async def test_tools_list_is_the_seed(alice_token):
    async with memgos(alice_token) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == TOOLS
    for tool in tools:
        schema = SEED[tool.name]["schema"]
        assert tool.description == schema["description"], tool.name
        assert_seed_schema(tool.input_schema, schema["inputSchema"], tool.name)


async def test_seed_examples_end_to_end(user, alice_token):
    async with memgos(alice_token) as client:
        for cube_id in SEARCH_EXAMPLE["cube_ids"]:
            registered = await call(client, "register_cube", {"cube_id": cube_id, "name": cube_id.title(),
                                                               "description": "d", "cube_path": f"/data/{cube_id}"})
            assert registered["cube_id"] == cube_id and registered["message"] == "Memory cube registered successfully"
        added = await call(client, "add_memory", ADD_EXAMPLE)
        assert added["cube_id"] == "ai-research" and added["message"] == "Memory added successfully"
        memory_id = added["memory_id"]
        assert uuid.UUID(memory_id)
        paper = await call(client, "add_memory", {"memory_content": ML_PAPER, "mem_cube_id": "ml-papers"})

        found = await call(client, "search_memories", SEARCH_EXAMPLE)
        results = found["results"]
        assert results["act_mem"] == [] and results["para_mem"] == []
        groups = {group["cube_id"]: group["memories"] for group in results["text_mem"]}
        assert set(groups) == {"ai-research", "ml-papers"}
        assert [memory["id"] for memory in groups["ml-papers"]] == [paper["memory_id"]]
        assert groups["ai-research"][0]["metadata"]["source"] == "research_paper"
        scores = [memory["metadata"]["score"] for group in results["text_mem"] for memory in group["memories"]]
        assert scores == sorted(scores, reverse=True) and all(0 < score <= 1 for score in scores)
        assert all(memory["metadata"]["created_at"] for memory in groups["ml-papers"])
        assert found["total_results"] == 2 and isinstance(found["search_time_ms"], int)

        got = (await call(client, "get_memory", {"memory_id": memory_id, "cube_id": "ai-research"}))["memory"]
        assert got["content"] == ADD_EXAMPLE["memory_content"] and got["cube_id"] == "ai-research"
        assert {key: got["metadata"][key] for key in ADD_EXAMPLE["metadata"]} == ADD_EXAMPLE["metadata"]
        updated = await call(client, "update_memory", {
            "memory_id": memory_id, "cube_id": "ai-research", "metadata": {"source": "lecture"},
            "updated_content": "Transformers use self-attention to weigh every token of the input sequence."})
        assert updated["memory_id"] == memory_id and updated["message"] == "Memory updated successfully"
        again = (await call(client, "get_memory", {"memory_id": memory_id, "cube_id": "ai-research"}))["memory"]
        assert again["content"].startswith("Transformers use self-attention")
        assert again["metadata"]["source"] == "lecture" and "category" not in again["metadata"]  # replaced

        info = (await call(client, "cube_info", {"cube_id": "ai-research"}))["cube"]
        assert (info["id"], info["name"], info["path"], info["owner_id"]) == (
            "ai-research", "Ai-Research", "/data/ai-research", str(user.pk))
        assert info["statistics"]["total_memories"] == info["statistics"]["text_memories"] == 1
        assert info["statistics"]["activation_memories"] == info["statistics"]["parametric_memories"] == 0
        assert info["statistics"]["total_size_bytes"] > len(again["content"]) and info["is_loaded"] is True
        listed = await call(client, "list_cubes", {"include_stats": True})
        counts = {cube["id"]: cube["memory_count"] for cube in listed["cubes"]}
        assert counts["ai-research"] == counts["ml-papers"] == 1 and listed["total_cubes"] == len(counts)
        plain = await call(client, "list_cubes", {})
        assert all("memory_count" not in cube for cube in plain["cubes"])

        context = await call(client, "context_search", {"query": "self-attention in transformers", "top_k": 1})
        [item] = context["context"]
        assert item["memory_id"] == memory_id and item["cube_id"] == "ai-research" and 0 < item["relevance_score"] <= 1
        assert context["total_context_items"] == 1

        access = (await call(client, "validate_access", {"user_id": "alice", "resource_type": "cube",
                                                          "resource_id": "ai-research", "action": "write"}))["access"]
        assert access["has_access"] is True and access["reason"] == "owner of the cube"
        me = (await call(client, "get_user_info", {}))["user"]
        assert (me["user_id"], me["user_name"], me["role"]) == (str(user.pk), "alice", "user")
        assert me["permissions"] == {"can_read": True, "can_write": True, "can_admin": False}
        assert me["memory_count"] == 2 and me["cube_count"] == len(counts)

        deleted = await call(client, "delete_memory", {"memory_id": memory_id, "cube_id": "ai-research"})
        assert deleted["deleted_at"] and deleted["message"] == "Memory deleted successfully"
        error_of(await client.call_tool("get_memory", {"memory_id": memory_id, "cube_id": "ai-research"}),
                 "not_found_error", "NOT_FOUND", "memory_id")
    memory = await database_sync_to_async(Memory.objects.get)(pk=memory_id)
    assert memory.deleted_at is not None  # soft: restorable


async def test_system_tools(alice_token):
    async with memgos(alice_token) as client:
        health = (await call(client, "health_check", {}))["health"]
        everything = await call(client, "list_tools", {})
        chat_tools = await call(client, "list_tools", {"category": "chat"})
    assert health["status"] in {"healthy", "degraded"} and health["version"] == "1.0.0"
    assert health["checks"]["database"]["ok"] and health["checks"]["embedding_model"]["ok"]
    assert health["checks"]["channel_layer"]["ok"]
    assert health["services"]["memory_system"] == "operational" and health["uptime_seconds"] >= 0
    assert health["checks"]["llm"]["configured"] is False
    assert "worker" not in health["checks"]  # the test settings expect no worker (ENGRAM_WORKER_STALE_SECONDS=0)
    assert [tool["name"] for tool in everything["tools"]] == TOOLS and everything["total_tools"] == 16
    assert everything["categories"] == {"memory": 5, "cube": 3, "chat": 3, "user": 3, "system": 2}
    assert everything["tools"][0]["input_schema"] == SEED["search_memories"]["schema"]["inputSchema"]
    assert [tool["name"] for tool in chat_tools["tools"]] == ["chat", "chat_history", "context_search"]
    assert chat_tools["total_tools"] == 3


async def test_user_id_names_the_token_user_or_is_refused(user, staff_user, make_token, alice_token):
    await register(user, "alice-notes")
    staff_admin = await database_sync_to_async(make_token)(staff_user, ("read", "write", "admin"))
    async with memgos(alice_token) as client:
        by_name = await call(client, "list_cubes", {"user_id": "alice"})
        by_id = await call(client, "list_cubes", {"user_id": str(user.pk)})
        refused = error_of(await client.call_tool("list_cubes", {"user_id": "bob"}), "authorization_error",
                           "FORBIDDEN", "user_id")
    async with memgos(staff_admin) as client:
        for_alice = await call(client, "list_cubes", {"user_id": "alice"})
        carol = (await call(client, "get_user_info", {}))["user"]
        alice = (await call(client, "get_user_info", {"user_id": "alice"}))["user"]
    assert "alice-notes" in {cube["id"] for cube in by_name["cubes"]} and by_name == by_id
    assert refused["message"].startswith("userId does not match")
    assert {cube["id"] for cube in for_alice["cubes"]} == {cube["id"] for cube in by_name["cubes"]}
    assert carol["role"] == "admin" and carol["permissions"]["can_admin"] is True
    assert alice["user_name"] == "alice" and alice["permissions"]["can_admin"] is False


LONG = "x" * 50001


@pytest.mark.parametrize(("tool", "arguments", "error_type", "code", "parameter"), [
    ("register_cube", {"cube_id": "bad id!"}, "validation_error", "INVALID_PARAMETER", "cube_id"),
    ("register_cube", {"cube_id": "c" * 101}, "validation_error", "INVALID_PARAMETER", "cube_id"),
    ("add_memory", {"memory_content": LONG, "mem_cube_id": "notes"}, "validation_error", "INVALID_PARAMETER",
     "memory_content"),
    ("add_memory", {"memory_content": "", "mem_cube_id": "notes"}, "validation_error", "INVALID_PARAMETER",
     "memory_content"),
    ("add_memory", {"memory_content": "hello", "mem_cube_id": "nonesuch"}, "not_found_error", "NOT_FOUND",
     "mem_cube_id"),
    ("add_memory", {"memory_content": "hello"}, "validation_error", "MISSING_PARAMETER", "mem_cube_id"),
    ("search_memories", {"query": "x", "top_k": 101}, "validation_error", "INVALID_PARAMETER", "top_k"),
    ("search_memories", {"query": "x", "top_k": 2.5}, "validation_error", "INVALID_PARAMETER", "top_k"),
    ("search_memories", {"top_k": 3}, "validation_error", "MISSING_PARAMETER", "query"),
    ("search_memories", {"query": "  "}, "validation_error", "INVALID_PARAMETER", "query"),
    ("search_memories", {"query": "x", "cube_ids": ["nonesuch"]}, "not_found_error", "NOT_FOUND", "cube_ids"),
    ("search_memories", {"query": "x", "cube_ids": ["bad/id"]}, "validation_error", "INVALID_PARAMETER",
     "cube_ids[0]"),
    ("context_search", {"query": "x", "top_k": 21}, "validation_error", "INVALID_PARAMETER", "top_k"),
    ("chat", {"query": "x", "top_k": 11}, "validation_error", "INVALID_PARAMETER", "top_k"),
    ("chat", {"query": "x", "max_tokens": 10}, "validation_error", "INVALID_PARAMETER", "max_tokens"),
    ("chat_history", {"limit": 0}, "validation_error", "INVALID_PARAMETER", "limit"),
    ("chat_history", {"session_id": "chat_nonesuch"}, "not_found_error", "NOT_FOUND", "session_id"),
    ("cube_info", {"cube_id": "nonesuch"}, "not_found_error", "NOT_FOUND", "cube_id"),
    ("get_memory", {"memory_id": "mem_12345", "cube_id": "notes"}, "not_found_error", "NOT_FOUND", "memory_id"),
    ("validate_access", {"user_id": "alice", "resource_type": "file", "resource_id": "x", "action": "read"},
     "validation_error", "INVALID_PARAMETER", "resource_type"),
    ("list_tools", {"category": "files"}, "validation_error", "INVALID_PARAMETER", "category"),
    ("list_cubes", {"includeStats": True}, "validation_error", "INVALID_PARAMETER", "includeStats"),
    ("session_info", {"session_id": "token-0"}, "not_found_error", "NOT_FOUND", "session_id"),
])
async def test_bad_input(user, alice_token, tool, arguments, error_type, code, parameter):
    await register(user, "notes")
    async with memgos(alice_token) as client:
        error = error_of(await client.call_tool(tool, arguments), error_type, code, parameter)
    assert parameter.split("[")[0] in error["message"] or code != "MISSING_PARAMETER"
    assert await database_sync_to_async(Memory.objects.count)() == 0


async def test_missing_parameter_speaks_the_seeds_words(alice_token):
    async with memgos(alice_token) as client:
        error = error_of(await client.call_tool("search_memories", {}), "validation_error", "MISSING_PARAMETER")
    assert error["message"] == "Required parameter 'query' is missing"
    assert error["details"]["parameter"] == "query"
    assert {"validation_error", "not_found_error", "authorization_error"} <= set(seed_error_types())


async def test_content_over_the_servers_limit_names_the_setting(user, alice_token, settings):
    settings.ENGRAM_MAX_CONTENT_CHARS = 100
    await register(user, "notes")
    async with memgos(alice_token) as client:
        error = error_of(await client.call_tool("add_memory", {"memory_content": "y" * 101, "mem_cube_id": "notes"}),
                         "validation_error", "INVALID_PARAMETER", "memory_content")
    assert "ENGRAM_MAX_CONTENT_CHARS" in error["message"] and "100" in error["message"]
    assert error["details"]["limit"] == 100


async def test_another_users_memories_and_cubes_are_not_found(user, bob_token, store):
    await register(user, "secret")
    memory = await database_sync_to_async(store)(user, "The launch code is in the blue binder", cube_id="secret")
    memory_id = str(memory.pk)
    address = {"memory_id": memory_id, "cube_id": "secret"}
    async with memgos(bob_token) as client:
        for tool, arguments in (("get_memory", address), ("delete_memory", address),
                                ("update_memory", {**address, "updated_content": "changed"})):
            error_of(await client.call_tool(tool, arguments), "not_found_error", "NOT_FOUND", "memory_id")
        error_of(await client.call_tool("cube_info", {"cube_id": "secret"}), "not_found_error", "NOT_FOUND", "cube_id")
        error_of(await client.call_tool("add_memory", {"memory_content": "mine now", "mem_cube_id": "secret"}),
                 "not_found_error", "NOT_FOUND", "mem_cube_id")
        error_of(await client.call_tool("search_memories", {"query": "launch code", "cube_ids": ["secret"]}),
                 "not_found_error", "NOT_FOUND", "cube_ids")
        found = await call(client, "search_memories", {"query": "launch code blue binder"})
        context = await call(client, "context_search", {"query": "launch code blue binder"})
        cubes = await call(client, "list_cubes", {"include_stats": True})
        access = (await call(client, "validate_access", {"user_id": "bob", "resource_type": "memory",
                                                          "resource_id": memory_id, "action": "read"}))["access"]
    assert found["results"]["text_mem"] == [] and found["total_results"] == 0 and context["context"] == []
    assert "secret" not in {cube["id"] for cube in cubes["cubes"]}
    assert access["has_access"] is False and access["reason"] == "memory not found"
    unchanged = await database_sync_to_async(Memory.objects.get)(pk=memory_id)
    assert unchanged.content == memory.content and unchanged.deleted_at is None


async def test_a_memory_is_found_only_in_its_own_cube(user, alice_token, store):
    await register(user, "work")
    await register(user, "home")
    memory = await database_sync_to_async(store)(user, "Standup is at nine", cube_id="work")
    async with memgos(alice_token) as client:
        error_of(await client.call_tool("get_memory", {"memory_id": str(memory.pk), "cube_id": "home"}),
                 "not_found_error", "NOT_FOUND", "memory_id")


async def validate(client, user: str, resource_type: str, resource_id: str, action: str) -> bool:
    access = (await call(client, "validate_access", {"user_id": user, "resource_type": resource_type,
                                                     "resource_id": resource_id, "action": action}))["access"]
    return access["has_access"]


async def test_validate_access_agrees_with_what_happens(user, other_user, staff_user, bob_token, make_token, store):
    await register(user, "shared")
    memory = await database_sync_to_async(store)(user, "The office wifi password is on the fridge", cube_id="shared")
    address = {"memory_id": str(memory.pk), "cube_id": "shared"}
    new_memory = {"memory_content": "Bob was here", "mem_cube_id": "shared"}
    await share(user, "shared", other_user, "reader")
    async with memgos(bob_token) as client:
        assert await validate(client, "bob", "cube", "shared", "read") is True
        await call(client, "get_memory", address)
        assert await validate(client, "bob", "cube", "shared", "write") is False
        error_of(await client.call_tool("add_memory", new_memory), "authorization_error", "FORBIDDEN", "mem_cube_id")
        assert await validate(client, "bob", "memory", str(memory.pk), "delete") is False
        error_of(await client.call_tool("delete_memory", address), "authorization_error", "FORBIDDEN")
        await share(user, "shared", other_user, "writer")
        assert await validate(client, "bob", "cube", "shared", "write") is True
        assert (await call(client, "add_memory", new_memory))["cube_id"] == "shared"
        assert await validate(client, "bob", "memory", str(memory.pk), "delete") is True
        await call(client, "delete_memory", address)
        assert await validate(client, "bob", "cube", "shared", "delete") is False  # the owner's alone
        assert await validate(client, "bob", "admin", "system", "admin") is False
    staff_admin = await database_sync_to_async(make_token)(staff_user, ("read", "admin"))
    async with memgos(staff_admin) as client:
        assert await validate(client, "carol", "admin", "system", "admin") is True
        assert await validate(client, "carol", "cube", "shared", "read") is False  # staff gets no implicit access
        error_of(await client.call_tool("cube_info", {"cube_id": "shared"}), "not_found_error", "NOT_FOUND")
        assert await validate(client, "bob", "cube", "shared", "write") is True


async def test_session_info_counts_this_clients_calls(user, alice_token, bob_token):
    await register(user, "notes")
    async with memgos(alice_token) as client, memgos(alice_token) as other:
        await call(client, "list_cubes", {})
        await call(client, "cube_info", {"cube_id": "notes"})
        error_of(await client.call_tool("cube_info", {"cube_id": "nonesuch"}), "not_found_error", "NOT_FOUND")
        session = (await call(client, "session_info", {}))["session"]
        elsewhere = (await call(other, "session_info", {}))["session"]
        looked_up = (await call(other, "session_info", {"session_id": session["session_id"]}))["session"]
    assert session["tool_calls_count"] == 4 and session["active_cubes"] == ["notes"]
    assert session["user_id"] == str(user.pk) and session["is_active"] is True
    assert elsewhere["session_id"] != session["session_id"] and elsewhere["tool_calls_count"] == 1
    assert looked_up["tool_calls_count"] == 4  # the four calls recorded, seen from another client
    async with memgos(bob_token) as client:
        error_of(await client.call_tool("session_info", {"session_id": session["session_id"]}), "not_found_error",
                 "NOT_FOUND", "session_id")
    record = await database_sync_to_async(McpClientSession.objects.get)(key=session["session_id"])
    assert record.tool_calls_count == 4 and record.user_id == user.pk


async def test_every_profile_counts_its_calls(alice_token):
    async with in_process(alice_token) as client:
        await client.call_tool("retrieve_memories", {"userId": "alice"})
    record = await database_sync_to_async(McpClientSession.objects.get)()
    assert record.tool_calls_count == 1 and record.active_cubes == []


async def test_chat_without_a_model_answers_extractively(user, alice_token, store):
    memory = await database_sync_to_async(store)(user, "The team offsite is in Lisbon in May.")
    async with memgos(alice_token) as client:
        replied = await call(client, "chat", {"query": "Where is the team offsite?"})
        history = (await call(client, "chat_history", {}))["chat_history"]
        page = (await call(client, "chat_history", {"session_id": replied["session_id"], "offset": 1}))
    assert "Lisbon" in replied["response"] and "ENGRAM_LLM_BASE_URL" in replied["response"]
    assert replied["context_used"][0]["memory_id"] == str(memory.pk) and replied["token_count"] > 0
    assert replied["user_id"] == str(user.pk)
    assert history["session_id"] == replied["session_id"] and history["total_messages"] == 2
    assert [message["role"] for message in history["messages"]] == ["user", "assistant"]
    assert history["messages"][0]["content"] == "Where is the team offsite?"
    assert [message["role"] for message in page["chat_history"]["messages"]] == ["assistant"]


async def test_chat_says_when_nothing_is_relevant_and_notes_the_missing_model_once(user, alice_token, store):
    await database_sync_to_async(store)(user, "The team offsite is in Lisbon in May.")
    async with memgos(alice_token) as client:
        nothing = await call(client, "chat", {"query": "zzzz qqqq nothing relevant"})
        second = await call(client, "chat", {"query": "Where is the team offsite?"})
    assert nothing["context_used"] == [] and "Nothing in your memories is relevant" in nothing["response"]
    assert "Lisbon" in second["response"] and second["session_id"] == nothing["session_id"]
    assert "ENGRAM_LLM_BASE_URL" not in second["response"]  # said on the session's first answer only


async def test_chat_history_of_another_user_is_not_found(user, alice_token, bob_token, store):
    await database_sync_to_async(store)(user, "Rent is due on the first.")
    async with memgos(alice_token) as client:
        session_id = (await call(client, "chat", {"query": "When is rent due?"}))["session_id"]
    async with memgos(bob_token) as client:
        error_of(await client.call_tool("chat_history", {"session_id": session_id}), "not_found_error", "NOT_FOUND",
                 "session_id")
        own = (await call(client, "chat_history", {}))["chat_history"]
    assert own["session_id"] is None and own["messages"] == [] and own["total_messages"] == 0


# legacy: the request reaches the client while the call runs; auto (2026-07-28): an InputRequiredResult round.
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_chat_samples_the_clients_model(user, alice_token, store, mode):
    memory = await database_sync_to_async(store)(user, "The team offsite is in Lisbon in May.")
    async with sampling_client(alice_token, "The offsite is in Lisbon [1].", mode, "memgos") as (client, asked):
        replied = await call(client, "chat", {"query": "Where is the team offsite?", "max_tokens": 200})
        history = (await call(client, "chat_history", {}))["chat_history"]
    assert replied["response"] == "The offsite is in Lisbon [1]."
    assert replied["context_used"][0]["memory_id"] == str(memory.pk)
    [params] = asked
    assert params.max_tokens == 200 and "Lisbon" in params.system_prompt
    assert params.messages[-1].content.text == "Where is the team offsite?"
    answer = await database_sync_to_async(ChatMessage.objects.get)(role="assistant")
    assert (answer.method, answer.model) == ("sampling", "client-llm")
    assert history["total_messages"] == 2  # one question, one answer: the first round stored nothing


def test_list_cubes_is_one_query(user, other_user, django_assert_num_queries):
    for index in range(3):
        cube_register(actor=other_user, cube_id=f"bob-{index}")
        cube_share(actor=other_user, cube_id=f"bob-{index}", user="alice", role="reader")
    with django_assert_num_queries(1):
        rows = cube_rows(actor=user, include_stats=True)
    assert {row["id"] for row in rows} == {"bob-0", "bob-1", "bob-2"}
    assert all(row["owner_id"] == str(other_user.pk) and row["memory_count"] == 0 for row in rows)


async def test_over_http(live_url, alice_token, user):
    await register(user, "ai-research")
    async with over_http(live_url + "/mcp/memgos/", alice_token) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        added = await call(client, "add_memory", ADD_EXAMPLE)
        found = await call(client, "search_memories", {"query": "self-attention mechanisms"})
        session = (await call(client, "session_info", {}))["session"]
    assert set(tools) == set(SEED)
    for name, tool in SEED.items():
        assert_seed_schema(tools[name], tool["schema"]["inputSchema"], name)
    assert found["results"]["text_mem"][0]["memories"][0]["id"] == added["memory_id"]
    assert session["api_mode"] is True and session["api_url"].startswith(live_url + "/mcp/memgos")
    assert session["tool_calls_count"] == 3 and session["active_cubes"] == ["ai-research"]


async def test_over_http_each_mcp_session_is_its_own_client(live_url, alice_token):
    """Clients of the handshake-era protocol get MCP sessions, and session_info tells them apart."""
    async with over_http_legacy(live_url + "/mcp/memgos/", alice_token) as first, \
            over_http_legacy(live_url + "/mcp/memgos/", alice_token) as second:
        await call(first, "list_cubes", {})
        one = (await call(first, "session_info", {}))["session"]
        two = (await call(second, "session_info", {}))["session"]
    assert one["session_id"] != two["session_id"]
    assert (one["tool_calls_count"], two["tool_calls_count"]) == (2, 1)


async def test_rate_limit_is_the_seeds_error(alice_token, settings):
    settings.ENGRAM_RATE_LIMIT_ENABLED = True
    settings.ENGRAM_RATE_LIMIT_BURST = 2
    async with memgos(alice_token) as client:
        for _ in range(2):
            await call(client, "list_cubes", {})
        error = error_of(await client.call_tool("list_cubes", {}), "rate_limit_error", "RATE_LIMITED")
    assert error["details"]["retry_after"] > 0 and error["details"]["limit"] == 2
    assert error["details"]["suggestion"].startswith("Wait")


async def test_without_a_token_it_is_an_authentication_error():
    async with Client(build_server(PROFILES["memgos"])) as client:
        error = error_of(await client.call_tool("list_cubes", {}), "authentication_error", "UNAUTHENTICATED")
    assert "Bearer" in error["message"]
    assert await database_sync_to_async(McpClientSession.objects.count)() == 0


async def test_health_check_reports_a_worker_not_seen_as_healthz_does(alice_token, settings):
    settings.ENGRAM_WORKER_STALE_SECONDS = 90
    async with memgos(alice_token) as client:
        health = (await call(client, "health_check", {}))["health"]
    assert health["status"] == "degraded" and health["checks"]["worker"]["ok"] is False, health


async def test_health_check_reports_an_unreachable_language_model(alice_token, settings):
    settings.ENGRAM_LLM_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    async with memgos(alice_token) as client:
        health = (await call(client, "health_check", {}))["health"]
    llm = health["checks"]["llm"]
    assert (llm["configured"], llm["ok"]) == (True, False) and llm["detail"].startswith("GET http://127.0.0.1:")
    assert health["status"] == "degraded" and health["services"]["chat_system"] == "degraded"
    assert health["services"]["memory_system"] == "operational"

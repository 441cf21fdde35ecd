"""The ThoughtMCP profile through the SDK's own client, in process: schemas, seed examples,
envelopes, every error message, scopes and isolation."""
from __future__ import annotations

import re
import uuid

import pytest
from channels.db import database_sync_to_async

from apps.memories.models import Memory, MemoryVector
from apps.memories.services import memory_restore
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import MEMORY_TOOLS, SEED_TOOLS, envelope, in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
MEMORY_FIELDS = {"id", "content", "createdAt", "lastAccessed", "strength", "salience", "primarySector", "metadata",
                 "score"}
SEARCH_FIELDS = {"id", "content", "createdAt", "strength", "salience", "rank", "highlight", "matchedTerms",
                 "primarySector", "metadata"}


@database_sync_to_async
def reload(memory_id: str) -> Memory | None:
    return Memory.objects.filter(pk=memory_id).first()


def data_of(result) -> dict:
    payload = envelope(result)
    assert payload["success"] is True, payload
    metadata = payload["metadata"]
    assert ISO_Z.match(metadata["timestamp"])
    assert isinstance(metadata["processingTime"], int) and metadata["processingTime"] >= 0
    assert metadata["componentsUsed"] and all(isinstance(name, str) for name in metadata["componentsUsed"])
    return payload["data"]


def failure_of(result) -> dict:
    payload = envelope(result)
    assert result.is_error is True
    assert set(payload) == {"success", "error", "suggestion"}
    assert payload["suggestion"].strip()
    assert "Traceback" not in payload["error"] + payload["suggestion"]
    return payload


async def test_tools_list_is_the_seed(alice_token, seed_schemas):
    """The five memory tools and the eight reasoning and metacognitive tools, each with the seed's Input Schema."""
    async with in_process(alice_token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == list(SEED_TOOLS) and len(tools) == 13
    for name, tool in tools.items():
        assert_seed_schema(tool.input_schema, seed_schemas[name], name)
        assert tool.description


async def test_seed_examples_work_end_to_end(user, alice_token, seed_examples):
    examples = {name: {**example, "userId": user.username} for name, example in seed_examples.items()}
    async with in_process(alice_token) as client:
        stored = data_of(await client.call_tool("store_memory", examples["store_memory"]))
        assert set(stored) == {"memoryId", "embeddingsGenerated", "linksCreated", "salience", "strength"}
        assert stored["embeddingsGenerated"] == 5 and stored["strength"] == 1.0
        memory_id = stored["memoryId"]
        assert uuid.UUID(memory_id)

        retrieved = data_of(await client.call_tool("retrieve_memories", examples["retrieve_memories"]))
        assert set(retrieved) == {"memories", "totalCount", "scores"}
        [found] = retrieved["memories"]
        assert set(found) == MEMORY_FIELDS and found["id"] == memory_id
        assert found["primarySector"] == "semantic" and found["content"] == examples["store_memory"]["content"]
        assert found["metadata"] == {"keywords": ["preference", "dark mode", "ui"], "tags": ["settings", "user-preference"],
                                     "category": "preferences", "context": "", "importance": 0.8}
        assert ISO_Z.match(found["createdAt"]) and ISO_Z.match(found["lastAccessed"])
        assert retrieved["totalCount"] == 1 and retrieved["scores"] == {memory_id: found["score"]}

        searched = data_of(await client.call_tool("search_memories", examples["search_memories"]))
        assert set(searched) == {"memories", "totalCount", "searchType"}
        assert searched["searchType"] == "full-text" and searched["totalCount"] == 1
        [hit] = searched["memories"]
        assert set(hit) == SEARCH_FIELDS and hit["id"] == memory_id
        assert "<b>dark</b>" in hit["highlight"] and {"dark", "mode", "preference"} <= set(hit["matchedTerms"])

        updated = data_of(await client.call_tool("update_memory", {**examples["update_memory"], "memoryId": memory_id}))
        assert updated == {"memoryId": memory_id, "embeddingsRegenerated": True,
                           "connectionsUpdated": updated["connectionsUpdated"], "strength": 0.95,
                           "salience": updated["salience"]}
        memory = await reload(memory_id)
        assert memory.content == examples["update_memory"]["content"] and memory.importance == 0.9

        deleted = data_of(await client.call_tool("delete_memory", {**examples["delete_memory"], "memoryId": memory_id}))
        assert deleted == {"memoryId": memory_id, "deletionType": "hard", "message": "Memory and all related data removed"}
    assert await reload(memory_id) is None
    assert not await database_sync_to_async(MemoryVector.objects.filter(memory_id=memory_id).exists)()


async def test_delete_without_soft_is_recoverable(user, alice_token, alice_memory):
    async with in_process(alice_token) as client:
        deleted = data_of(await client.call_tool("delete_memory", {"memoryId": str(alice_memory.pk), "userId": "alice"}))
        assert deleted["deletionType"] == "soft"
        left = data_of(await client.call_tool("retrieve_memories", {"userId": "alice"}))
        assert left["totalCount"] == 0
    memory = await reload(alice_memory.pk)
    assert memory.deleted_at is not None and memory.strength == 0.0
    restored = await database_sync_to_async(memory_restore)(actor=user, memory_id=alice_memory.pk)
    assert restored.strength == 1.0


async def test_retrieve_filters_and_pagination(user, alice_token, store):
    store_now = database_sync_to_async(store)
    for index in range(3):
        await store_now(user, f"Procedure step {index}: restart the ingest worker", primary_sector="procedural",
                        tags=["ops"])
    await store_now(user, "Felt relieved when the outage ended", primary_sector="emotional")
    async with in_process(alice_token) as client:
        page = data_of(await client.call_tool("retrieve_memories", {
            "userId": "alice", "text": "restart worker", "primarySector": "procedural", "metadata": {"tags": ["ops"]},
            "limit": 2, "offset": 1, "dateRange": {"start": "2000-01-01T00:00:00Z"},
        }))
        assert page["totalCount"] == 3 and len(page["memories"]) == 2
        assert {memory["primarySector"] for memory in page["memories"]} == {"procedural"}
        emotional = data_of(await client.call_tool("search_memories", {"userId": "alice", "sectors": ["emotional"]}))
        assert [memory["primarySector"] for memory in emotional["memories"]] == ["emotional"]
        assert emotional["searchType"] == "metadata"


SEED_ERRORS = [
    ("store_memory", {"content": "  ", "sessionId": "s", "primarySector": "semantic"}, "Content cannot be empty"),
    ("store_memory", {"content": "x", "sessionId": "s", "primarySector": "sideways"}, "Invalid sector"),
    ("retrieve_memories", {"sectors": ["semantic", "sideways"]}, "Invalid sector"),
    ("search_memories", {"primarySector": "sideways"}, "Invalid sector"),
    ("update_memory", {"memoryId": str(uuid.uuid4())}, "Memory not found"),
    ("delete_memory", {"memoryId": "mem-abc123"}, "Memory not found"),
    ("store_memory", {"content": "x"}, "Missing required parameter: sessionId, primarySector"),
    ("update_memory", {}, "Missing required parameter: memoryId"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), SEED_ERRORS)
async def test_seed_error_messages(alice_token, tool, arguments, message):
    async with in_process(alice_token) as client:
        failure = failure_of(await client.call_tool(tool, {"userId": "alice", **arguments}))
    assert failure["error"].startswith(message)


async def test_missing_user_id_is_a_missing_parameter(alice_token):
    async with in_process(alice_token) as client:
        for arguments in ({}, {"userId": "   "}):
            failure = failure_of(await client.call_tool("retrieve_memories", arguments))
            assert failure["error"] == "Missing required parameter: userId"
            assert "required fields" in failure["suggestion"]


BAD_ARGUMENTS = [
    ("retrieve_memories", {"limit": 101}, "Invalid limit"),
    ("retrieve_memories", {"limit": 2.5}, "limit must be a whole number"),
    ("search_memories", {"offset": -1}, "Invalid offset"),
    ("retrieve_memories", {"minStrength": "high"}, "Invalid minStrength"),
    ("search_memories", {"minSalience": 1.5}, "Invalid minSalience"),
    ("retrieve_memories", {"dateRange": {"start": "yesterday"}}, "dateRange.start is not an ISO 8601 date-time"),
    ("retrieve_memories", {"dateRange": {"start": "2025-02-01T00:00:00Z", "end": "2025-01-01T00:00:00Z"}},
     "dateRange.start is after dateRange.end"),
    ("retrieve_memories", {"metadata": {"tags": "settings"}}, "Invalid metadata.tags"),
    ("retrieve_memories", {"sectors": []}, "sectors cannot be empty"),
    ("store_memory", {"content": "a\x00b", "sessionId": "s", "primarySector": "semantic"}, "content cannot contain NUL"),
    ("store_memory", {"content": 42, "sessionId": "s", "primarySector": "semantic"}, "Invalid content"),
    ("store_memory", {"content": "x", "sessionId": "s", "primarySector": "semantic", "metadata": {"importance": 2}},
     "Invalid metadata.importance"),
    ("store_memory", {"content": "x", "sessionId": "s", "primarySector": "semantic", "user_id": "alice"},
     "Unknown parameter: user_id"),
    ("delete_memory", {"memoryId": str(uuid.uuid4()), "soft": "yes"}, "Invalid soft"),
    ("search_memories", {"text": "NOT dark"}, "The query has nothing to search for"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD_ARGUMENTS)
async def test_bad_arguments_get_the_seed_envelope(alice_token, tool, arguments, message):
    async with in_process(alice_token) as client:
        failure = failure_of(await client.call_tool(tool, {"userId": "alice", **arguments}))
    assert failure["error"].startswith(message), failure


async def test_user_id_may_be_the_numeric_id(user, alice_token, alice_memory):
    async with in_process(alice_token) as client:
        found = data_of(await client.call_tool("retrieve_memories", {"userId": str(user.pk)}))
    assert [memory["id"] for memory in found["memories"]] == [str(alice_memory.pk)]


async def test_another_users_memory_is_not_found_through_any_tool(bob_token, alice_memory):
    memory_id = str(alice_memory.pk)
    async with in_process(bob_token) as client:
        for tool in ("retrieve_memories", "search_memories"):
            found = data_of(await client.call_tool(tool, {"userId": "bob", "text": "dark mode"}))
            assert memory_id not in {memory["id"] for memory in found["memories"]}
        for tool, extra in (("update_memory", {"content": "hijacked"}), ("delete_memory", {"soft": False})):
            failure = failure_of(await client.call_tool(tool, {"userId": "bob", "memoryId": memory_id, **extra}))
            assert failure["error"] == "Memory not found"
    memory = await reload(memory_id)
    assert memory.content == alice_memory.content and memory.deleted_at is None


@pytest.mark.parametrize("tool", MEMORY_TOOLS)
async def test_user_id_of_somebody_else_is_refused(bob_token, alice_memory, tool):
    arguments = {"userId": "alice", "memoryId": str(alice_memory.pk), "content": "x", "sessionId": "s",
                 "primarySector": "semantic"}
    schema_fields = {"store_memory": {"content", "sessionId", "primarySector"}, "update_memory": {"memoryId"},
                     "delete_memory": {"memoryId"}}.get(tool, set())
    async with in_process(bob_token) as client:
        failure = failure_of(await client.call_tool(
            tool, {name: value for name, value in arguments.items() if name == "userId" or name in schema_fields}))
    assert failure["error"] == "userId does not match the authenticated user"
    assert "'bob'" in failure["suggestion"]
    assert (await reload(alice_memory.pk)).content == alice_memory.content


async def test_staff_token_with_admin_scope_acts_for_another_user(user, staff_user, make_token, alice_memory):
    token = await database_sync_to_async(make_token)(staff_user, ("read", "write", "admin"))
    async with in_process(token) as client:
        stored = data_of(await client.call_tool("store_memory", {
            "userId": "alice", "content": "Curated by an admin", "sessionId": "s", "primarySector": "reflective"}))
        found = data_of(await client.call_tool("retrieve_memories", {"userId": "alice"}))
        unknown = failure_of(await client.call_tool("retrieve_memories", {"userId": "nobody"}))
    memory = await reload(stored["memoryId"])
    assert memory.owner_id == user.pk
    assert {str(alice_memory.pk), stored["memoryId"]} == {memory["id"] for memory in found["memories"]}
    assert unknown["error"] == "User 'nobody' not found"


async def test_staff_token_without_admin_scope_acts_only_for_itself(staff_user, make_token, alice_memory):
    token = await database_sync_to_async(make_token)(staff_user)
    async with in_process(token) as client:
        failure = failure_of(await client.call_tool("retrieve_memories", {"userId": "alice"}))
    assert failure["error"] == "userId does not match the authenticated user"


async def test_read_only_token_reads_but_cannot_write(make_token, user, alice_memory):
    token = await database_sync_to_async(make_token)(user, ("read",))
    async with in_process(token) as client:
        failure = failure_of(await client.call_tool("store_memory", {
            "userId": "alice", "content": "x", "sessionId": "s", "primarySector": "semantic"}))
        assert failure["error"] == "This token lacks the write scope this tool needs."
        for tool in ("update_memory", "delete_memory"):
            refused = failure_of(await client.call_tool(tool, {"userId": "alice", "memoryId": str(alice_memory.pk)}))
            assert "lacks the write scope" in refused["error"]
        found = data_of(await client.call_tool("retrieve_memories", {"userId": "alice"}))
    assert found["totalCount"] == 1
    assert await database_sync_to_async(Memory.objects.count)() == 1


async def test_write_only_token_cannot_read(make_token, user, alice_memory):
    token = await database_sync_to_async(make_token)(user, ("write",))
    async with in_process(token) as client:
        failure = failure_of(await client.call_tool("search_memories", {"userId": "alice", "text": "dark"}))
    assert "lacks the read scope" in failure["error"]


async def test_a_database_that_does_not_answer_is_a_retryable_failure(alice_token, monkeypatch):
    """What REST answers with a 503 (every pooled connection busy, the database restarting), a tool answers
    in its envelope: say so and when to retry, never the internals."""
    from django.db import OperationalError

    from apps.mcp.profiles.thoughtmcp import memories

    def busy(**kwargs):
        raise OperationalError("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(memories, "memory_retrieve", busy)
    async with in_process(alice_token) as client:
        failure = failure_of(await client.call_tool("retrieve_memories", {"userId": "alice", "text": "coffee"}))
    assert failure["error"].startswith("The database did not answer in time")
    assert "Retry in 5 seconds" in failure["error"]
    assert "couldn't get a connection" not in failure["error"] + failure["suggestion"]


async def test_search_memories_adds_did_you_mean_only_when_a_word_was_corrected(user, alice_token):
    await database_sync_to_async(memory_store_plain)(user, "The postgres migration runs on Sunday night.")
    async with in_process(alice_token) as client:
        typo = data_of(await client.call_tool("search_memories", {"userId": user.username, "text": "postgress"}))
        clean = data_of(await client.call_tool("search_memories", {"userId": user.username, "text": "postgres"}))
    assert typo["didYouMean"] == "postgres" and typo["totalCount"] == 1
    assert set(clean) == {"memories", "totalCount", "searchType"}


def memory_store_plain(user, content: str) -> None:
    from apps.memories.services import memory_store
    memory_store(actor=user, content=content)

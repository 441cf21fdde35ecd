"""trigger_dream through the SDK's own client, in process: the seed's schemas (the client validates every answer
against the outputSchema), blocking and not, the whole dream undone by restore_from_hash, bad input named (-32602),
a second dream refused (-32001), and Alice's dream never touching Bob's graph."""
from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from apps.cognition.models import ConsolidationRun
from apps.cognition.tasks import dream_run
from tests.cognition.curation_support import everything, graph_state, link, nodes
from tests.cognition.dream_support import expected, item, session, weight
from tests.contracts import contract
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import in_process
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (fixture: dropping the test DB)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PROFILE = "context-graph"
SEED = contract("context_graph")["tools"]["trigger_dream"]


def payload(result) -> dict:
    [block] = result.content
    data = json.loads(block.text)
    assert data == result.structured_content
    return data


async def ok(client, arguments: dict) -> dict:
    result = await client.call_tool("trigger_dream", arguments)  # the client checks it against the outputSchema
    data = payload(result)
    assert result.is_error is False, data
    return data


async def refused(client, arguments: dict, code: int, field: str) -> dict:
    result = await client.call_tool("trigger_dream", arguments)
    data = payload(result)
    assert result.is_error is True and data["success"] is False, data
    assert (data["error"]["code"], data["error"]["data"]["field"]) == (code, field), data
    assert data["error"]["data"]["suggestion"].strip() and "Traceback" not in json.dumps(data)
    return data["error"]


def replayable(user) -> dict:
    a, b, c = nodes(user, "The otter keeps mangoes.", "The falcon keeps granite.", "The badger keeps violins.")
    link(user, a, b, 0.5)
    talk = session(user)
    item(talk, (a, 0.8), (b, 0.8))
    for _ in range(3):
        item(talk, (b, 0.9), (c, 0.3))
    return {"a": a, "b": b, "c": c}


async def test_the_tool_has_the_seeds_schemas(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        [tool] = [tool for tool in (await client.list_tools()).tools if tool.name == "trigger_dream"]
    assert_seed_schema(tool.input_schema, SEED["inputSchema"], "trigger_dream")
    assert tool.output_schema == SEED["outputSchema"]
    assert tool.description.startswith(SEED["description"])
    assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema)


async def test_a_blocking_dream_answers_what_it_did_and_restore_from_hash_undoes_it(user, alice_token):
    graph = await database_sync_to_async(replayable)(user)
    before = await database_sync_to_async(everything)()
    async with in_process(alice_token, PROFILE) as client:
        answer = await ok(client, {"phase": "nrem", "blocking": True, "duration_minutes": 1})
        assert answer["status"] == "completed" and answer["phase_completed"] == "nrem"
        assert (answer["edges_strengthened"], answer["new_edges_created"], answer["blind_spots_discovered"]) == (
            1, 1, 0)
        assert answer["was_interrupted"] is False and answer["duration_ms"] >= 0
        assert answer["changes"]["items_replayed"] == 4 and answer["reversal_hash"]
        assert isinstance(answer["notes"], list)
        assert await database_sync_to_async(weight)(graph["a"], graph["b"]) == pytest.approx(
            expected(0.5, 1.0, 1.0), abs=1e-12)
        undone = payload(await client.call_tool("restore_from_hash", {"reversal_hash": answer["reversal_hash"],
                                                                      "preview": False}))
        assert undone["success"] is True and undone["operation"] == "dream" and "original_operation" not in undone
        assert await database_sync_to_async(everything)() == before
        # An undone dream's items are replayed by the next one; after that, nothing is left to replay, and a dream
        # that changes nothing gives no hash and says why.
        again = await ok(client, {"phase": "nrem", "blocking": True})
        assert again["changes"] == answer["changes"]
        quiet = await ok(client, {"phase": "nrem", "blocking": True})
    assert quiet["reversal_hash"] is None and quiet["notes"]


async def test_a_background_dream_is_queued_for_the_worker(user, alice_token):
    graph = await database_sync_to_async(replayable)(user)
    async with in_process(alice_token, PROFILE) as client:
        answer = await ok(client, {"phase": "nrem"})
        assert set(answer) == {"dream_run_id", "status", "pulse"} and answer["status"] == "queued"
        second = await refused(client, {"phase": "nrem"}, -32001, "phase")  # one dream per user
        assert second["data"]["dream_run_id"] == answer["dream_run_id"]
    done = await database_sync_to_async(lambda: dream_run.apply(args=[answer["dream_run_id"]]).get())()
    assert done["status"] == "completed"
    assert await database_sync_to_async(weight)(graph["a"], graph["b"]) > 0.5


async def test_bad_input_names_the_field(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        await refused(client, {"duration_minutes": 0}, -32602, "duration_minutes")
        await refused(client, {"duration_minutes": 11, "blocking": True}, -32602, "duration_minutes")
        await refused(client, {"synthetic_query_count": 9}, -32602, "synthetic_query_count")
        await refused(client, {"phase": "deep"}, -32602, "phase")
        await refused(client, {"blocking": "yes"}, -32602, "blocking")
    assert await database_sync_to_async(ConsolidationRun.objects.count)() == 0


async def test_alices_dream_never_touches_bobs_graph(user, other_user, alice_token, bob_token):
    theirs = await database_sync_to_async(replayable)(other_user)
    await database_sync_to_async(replayable)(user)
    ids = [node.pk for node in theirs.values()]
    before = await database_sync_to_async(graph_state)(ids)
    async with in_process(alice_token, PROFILE) as client:
        answer = await ok(client, {"phase": "full_cycle", "blocking": True})
    assert answer["edges_strengthened"] == 1
    assert await database_sync_to_async(graph_state)(ids) == before
    async with in_process(bob_token, PROFILE) as client:  # Bob cannot undo Alice's dream
        result = await client.call_tool("restore_from_hash", {"reversal_hash": answer["reversal_hash"],
                                                              "preview": False})
    assert result.is_error

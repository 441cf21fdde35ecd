"""Context Graph's state group (utl_status, get_neuromodulation, homeostatic_status) through the SDK's own client, in
process: the seed's schemas, answers the client validates against the output schemas with the pulse in each, -32000
for a session that is unknown or another user's, -32602 naming the field, and alice against bob on every tool."""
from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from jsonschema import Draft202012Validator

from tests.cognition.state_support import graph
from tests.cognition.support import new_session, set_state
from tests.contracts import contract
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.context_graph_calls import ok, refused
from tests.mcp.support import in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PROFILE = "context-graph"
SEED = contract("context_graph")["tools"]
STATE_TOOLS = ("utl_status", "get_neuromodulation", "homeostatic_status")


async def test_schemas_are_the_seeds(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in STATE_TOOLS:
        tool, seed = tools[name], SEED[name]
        assert_seed_schema(tool.input_schema, seed["inputSchema"], name)
        assert tool.output_schema == seed.get("outputSchema"), name
        assert tool.description.startswith(seed["description"]), name
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), name
        if tool.output_schema:
            Draft202012Validator.check_schema(tool.output_schema)
    assert tools["utl_status"].output_schema is None  # the seed gives it none


async def test_every_tool_answers_from_the_callers_state(user, alice_token):
    session = await database_sync_to_async(new_session)(user)
    await database_sync_to_async(set_state)(session, entropy=0.1, coherence=0.6, interactions=5)
    nodes = await database_sync_to_async(graph)(user)
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        utl = await ok(client, "utl_status", {"session_id": str(session.pk)})
        levels = await ok(client, "get_neuromodulation", {})
        named = await ok(client, "get_neuromodulation", {"session_id": str(session.pk)})
        health = await ok(client, "homeostatic_status", {})
    for name, answer in (("get_neuromodulation", levels), ("homeostatic_status", health)):
        Draft202012Validator(tools[name].output_schema).validate(answer)
    assert (utl["session_id"], utl["entropy"], utl["coherence"], utl["interactions"]) == (str(session.pk), 0.1, 0.6, 5)
    assert (utl["lifecycle_stage"], utl["johari_quadrant"], utl["recent_items"]) == ("infancy", "open", [])
    assert levels == {**named, "pulse": levels["pulse"]}  # the latest session is the one named
    assert (levels["dopamine"], levels["serotonin"], levels["noradrenaline"], levels["acetylcholine"]) == (
        3.88, 0.52, 0.725, 0.001)
    assert levels["current_mode"] == "exploit" and levels["basis"]["session_id"] == str(session.pk)
    assert levels["effects"]["importance_weight"] == 0.36 and levels["effects"]["breadth"] == 5
    assert health["semantic_cancer_suspects"] == 3 and health["quarantined_nodes"] == 0
    assert {suspect["node_id"] for suspect in health["suspects"]} == {
        str(nodes[name].pk) for name in ("a", "b", "e")}
    assert 0 <= health["health_score"] <= 1 and "last_scaling_time" not in health


async def test_search_graph_and_inject_context_say_what_they_ranked_with(user, alice_token):
    await database_sync_to_async(graph)(user)
    async with in_process(alice_token, PROFILE) as client:
        searched = await ok(client, "search_graph", {"query": "deploys and migrations"})
        context = await ok(client, "inject_context", {"query": "deploys and migrations"})
        levels = await ok(client, "get_neuromodulation", {})
    assert searched["neuromodulation"]["reorders"] is False  # the first query of a new session: at rest
    # The search left the session with some coherence: inject_context, in the same session, re-ranked.
    assert context["session_id"] == searched["session_id"] == levels["basis"]["session_id"]
    assert context["neuromodulation"]["reorders"] is True and levels["basis"]["resting"] is False


@pytest.mark.parametrize("tool, arguments, field", [
    ("utl_status", {}, "session_id"),
    ("utl_status", {"session_id": "not-a-uuid"}, "session_id"),
    ("utl_status", {"session_id": 7}, "session_id"),
    ("get_neuromodulation", {"session_id": "nope"}, "session_id"),
    ("get_neuromodulation", {"dopamine": 5}, "dopamine"),
    ("homeostatic_status", {"verbose": True}, "verbose"),
])
async def test_bad_input_is_32602_naming_the_field(alice_token, tool, arguments, field):
    async with in_process(alice_token, PROFILE) as client:
        await refused(client, tool, arguments, -32602, field)


async def test_an_unknown_session_is_32000(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        for tool in ("utl_status", "get_neuromodulation"):
            error = await refused(client, tool, {"session_id": str(uuid.uuid4())}, -32000, "session_id")
            assert error["data"]["reason"] == "session_not_found"


async def test_bob_never_reads_alices_state(user, other_user, alice_token, bob_token):
    session = await database_sync_to_async(new_session)(user)
    await database_sync_to_async(set_state)(session, entropy=0.9, coherence=0.9, interactions=70)
    hers = await database_sync_to_async(graph)(user)
    async with in_process(bob_token, PROFILE) as client:
        for tool in ("utl_status", "get_neuromodulation"):
            await refused(client, tool, {"session_id": str(session.pk)}, -32000, "session_id")
        levels = await ok(client, "get_neuromodulation", {})
        health = await ok(client, "homeostatic_status", {})
    assert levels["basis"] == {"session_id": None, "entropy": 0.0, "coherence": 0.0, "learning_score": 0.0,
                               "resting": True}
    assert (health["nodes"], health["semantic_cancer_suspects"], health["suspects"]) == (0, 0, [])
    async with in_process(alice_token, PROFILE) as client:
        health = await ok(client, "homeostatic_status", {})
    assert {suspect["node_id"] for suspect in health["suspects"]} <= {str(memory.pk) for memory in hers.values()}

"""Context Graph's status group through the SDK's own client, in process: the seed's schemas (and Engram's for the
tools the seed only names), answers that validate against the published output schemas with the pulse in each,
-32602 naming the field, the resources, two graph states, and alice against bob on every tool and resource."""
from __future__ import annotations

import json
import re
import uuid

import pytest
from channels.db import database_sync_to_async
from mcp.shared.exceptions import MCPError

from apps.cognition.models import CurationTask, Event
from apps.cognition.services.inbox import task_open
from apps.memories.services import memory_delete
from tests.cognition.support import record, staging_graph
from tests.contracts import contract
from tests.mcp.support import in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

SEED = contract("context_graph")
STATUS_TOOLS = ("get_graph_manifest", "get_system_instructions", "get_health", "get_memetic_status",
                "epistemic_action", "temporary_scratchpad", "get_node_lineage", "get_system_logs")
PULSE = {"entropy", "coherence", "suggested"}


def context_graph(raw_token: str):
    return in_process(raw_token, "context-graph")


def answer(result) -> dict:
    """A successful answer: text and structured content agree, and the pulse is in it."""
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    assert result.is_error is False, payload
    assert set(payload["pulse"]) == PULSE
    return payload


def failure(result, code: int, field: str | None = None) -> dict:
    payload = json.loads(result.content[0].text)
    assert result.is_error is True
    assert payload["success"] is False and set(payload["pulse"]) == PULSE
    error = payload["error"]
    assert error["code"] == code, error
    assert error["message"].strip() and error["data"]["suggestion"].strip()
    if field is not None:
        assert error["data"]["field"] == field, error
    assert "Traceback" not in json.dumps(error)
    return error


@database_sync_to_async
def alice_graph(alice):
    """The staging graph (tests/cognition/support.py) and an open task about its linked pair."""
    graph = staging_graph(alice)
    graph["task"] = task_open(owner=alice, task_type=CurationTask.TaskType.POTENTIAL_MERGE,
                              node_ids=[graph["kube"].pk, graph["helm"].pk],
                              reason="Both describe the staging cluster.", suggested_tool="merge_concepts")
    return graph


async def test_schemas_are_the_seeds_and_engrams_own_where_it_has_none(alice_token):
    async with context_graph(alice_token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(STATUS_TOOLS) <= set(tools)
    for name in STATUS_TOOLS:
        tool, seed = tools[name], SEED["tools"].get(name)
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), name
        if seed is None:
            continue
        assert tool.input_schema == seed["inputSchema"], name
        assert tool.output_schema == seed.get("outputSchema"), name
        assert tool.description.startswith(seed["description"]), name
    lineage = tools["get_node_lineage"].input_schema
    assert lineage["required"] == ["node_id"]
    assert lineage["properties"]["depth"] == {
        "type": "integer", "minimum": 1, "maximum": 20, "default": 5,
        "description": "How many changes back to trace, newest first"}
    assert lineage["properties"]["include_content_diffs"]["default"] is False
    logs = tools["get_system_logs"].input_schema["properties"]
    assert logs["log_type"]["enum"] == ["all", "quarantine", "prune", "merge", "dream_actions", "adversarial_blocks"]
    assert (logs["limit"]["minimum"], logs["limit"]["maximum"], logs["limit"]["default"]) == (1, 100, 20)
    assert logs["since"]["default"] == "-24h"
    assert tools["get_system_instructions"].input_schema == {"type": "object", "properties": {}}
    for name in ("get_system_instructions", "get_node_lineage", "get_system_logs"):
        assert tools[name].output_schema["type"] == "object"


async def test_the_profile_is_registered_with_the_seeds_server_description():
    from apps.mcp.profiles import PROFILES

    profile = PROFILES["context-graph"]
    assert (profile.title, profile.description) == ("Context Graph", SEED["server"]["description"])


async def test_every_answer_validates_and_carries_the_pulse(user, alice_token):
    graph = await alice_graph(user)
    session, kube = str(graph["session"].pk), str(graph["kube"].pk)
    calls = {
        "get_graph_manifest": {}, "get_system_instructions": {}, "get_health": {},
        "get_memetic_status": {"session_id": session}, "epistemic_action": {"session_id": session, "force": True},
        "temporary_scratchpad": {"action": "store", "session_id": session, "agent_id": "planner",
                                 "content": "Check the Helm chart's resource limits.", "tags": ["helm"]},
        "get_node_lineage": {"node_id": kube, "include_content_diffs": True},
        "get_system_logs": {"log_type": "all", "since": "-1h"},
    }
    async with context_graph(alice_token) as client:
        answers = {name: answer(await client.call_tool(name, arguments)) for name, arguments in calls.items()}
    manifest = answers["get_graph_manifest"]
    assert "3 live nodes and 1 link across 1 cube." in manifest["current_state_summary"]
    assert f"Latest session {session}" in manifest["current_state_summary"]
    status = answers["get_memetic_status"]
    assert status["top_active_concepts"] == ["kubernetes", "helm"] and status["dream_available"] is True
    assert status["curation_tasks"][0]["id"] == str(graph["task"].pk)
    # One query so far: all surprise (entropy 1.0 > infancy's 0.9), the linked pair coherent enough.
    assert status["suggested_action"] == "clarify"
    assert answers["epistemic_action"]["current_coherence"] == status["coherence_score"]
    pad = answers["temporary_scratchpad"]
    assert (pad["items_count"], pad["ttl_minutes"], pad["items"][0]["tags"]) == (1, 60, ["helm"])
    lineage = answers["get_node_lineage"]
    assert lineage["node_id"] == kube and lineage["lineage"][-1]["change_type"] == "created"
    assert lineage["lineage"][-1]["actor"] == {"type": "user", "id": "alice"}
    assert [change["change_type"] for change in lineage["lineage"]] == ["annotated", "created"]  # linked, stored
    assert answers["get_health"]["components"]["database"]["status"] == "ok"
    assert answers["get_health"]["status"] in ("healthy", "degraded")


async def test_texts_name_only_tools_this_profile_serves(alice_token):
    async with context_graph(alice_token) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        manifest = answer(await client.call_tool("get_graph_manifest", {}))
        instructions = answer(await client.call_tool("get_system_instructions", {}))
    texts = [manifest["prompt_fragment"], *manifest["troubleshooting"].values(),
             instructions["system_prompt_fragment"], *instructions["antipatterns"]]
    named = {name for text in texts for name in re.findall(r"`([a-z_]+)`", text)}
    assert named and named <= served
    # And the other way: the manifest's layers place every tool the profile serves (but the manifest's own).
    assert served - named - {"get_graph_manifest", "get_system_instructions"} == set()
    assert {behavior["tool"] for behavior in instructions["critical_behaviors"]} <= served
    assert set(sum(manifest["layer_guidance"].values(), [])) <= served
    assert "L1 Sensing" in manifest["prompt_fragment"] and "L5 Coherence" in manifest["prompt_fragment"]
    assert "infancy (0 interactions" in instructions["system_prompt_fragment"]


@pytest.mark.parametrize(("tool", "arguments", "code", "field"), [
    ("get_memetic_status", {"session_id": "yesterday's"}, -32602, "session_id"),
    ("get_memetic_status", {"session_id": str(uuid.uuid4())}, -32000, "session_id"),
    ("get_memetic_status", {"sessionId": str(uuid.uuid4())}, -32602, "sessionId"),
    ("epistemic_action", {"force": "yes"}, -32602, "force"),
    ("epistemic_action", {"session_id": str(uuid.uuid4())}, -32000, "session_id"),
    ("temporary_scratchpad", {"action": "store", "session_id": str(uuid.uuid4())}, -32602, "agent_id"),
    ("temporary_scratchpad", {"action": "store", "session_id": str(uuid.uuid4()), "agent_id": "a"}, -32602,
     "content"),
    ("temporary_scratchpad", {"action": "peek", "session_id": str(uuid.uuid4()), "agent_id": "a"}, -32602, "action"),
    ("temporary_scratchpad", {"action": "store", "session_id": str(uuid.uuid4()), "agent_id": "a", "content": "x",
                              "auto_commit_threshold": 0.95}, -32602, "auto_commit_threshold"),
    ("temporary_scratchpad", {"action": "store", "session_id": str(uuid.uuid4()), "agent_id": "a", "content": "x",
                              "tags": ["1", "2", "3", "4", "5", "6"]}, -32602, "tags"),
    ("get_node_lineage", {}, -32602, "node_id"),
    ("get_node_lineage", {"node_id": str(uuid.uuid4())}, -32602, "node_id"),
    ("get_node_lineage", {"node_id": str(uuid.uuid4()), "depth": 21}, -32602, "depth"),
    ("get_system_logs", {"since": "last tuesday"}, -32602, "since"),
    ("get_system_logs", {"log_type": "everything"}, -32602, "log_type"),
    ("get_system_logs", {"limit": 0}, -32602, "limit"),
    ("get_health", {"verbose": True}, -32602, "verbose"),
])
async def test_bad_input_is_32602_naming_the_field(alice_token, tool, arguments, code, field):
    async with context_graph(alice_token) as client:
        failure(await client.call_tool(tool, arguments), code, field)


async def test_the_resources_are_listed_and_read(user, alice_token):
    graph = await alice_graph(user)
    async with context_graph(alice_token) as client:
        resources = {str(resource.uri) for resource in (await client.list_resources()).resources}
        templates = {template.uri_template for template in (await client.list_resource_templates()).resource_templates}
        [pulse] = (await client.read_resource("utl://current_session/pulse")).contents
        [chart] = (await client.read_resource(f"visualize://{graph['kube'].pk}")).contents
        [topic] = (await client.read_resource("visualize://all/staging%20cluster")).contents
    assert resources == {"utl://current_session/pulse"}
    assert templates == {"visualize://{node_id}", "visualize://{scope}/{topic}", "benchmark://runs/{run_id}"}
    state = json.loads(pulse.text)
    assert state["session_id"] == str(graph["session"].pk) and state["lifecycle"] == "infancy"
    assert state["curation_tasks_pending"] == 1 and state["entropy"] == round(graph["session"].entropy, 4)
    assert "```mermaid\nflowchart LR\n" in chart.text and 'n0["kubernetes"]' in chart.text
    assert 'n1["helm"]' in chart.text and "soup" not in chart.text
    assert "kubernetes" in topic.text and "helm" in topic.text and "soup" not in topic.text


async def test_two_graph_states_give_different_memetic_status(user, alice_token):
    graph = await alice_graph(user)
    session = str(graph["session"].pk)
    async with context_graph(alice_token) as client:
        before = answer(await client.call_tool("get_memetic_status", {"session_id": session}))
        await database_sync_to_async(record)(graph["session"], "how is tomato soup made", [(graph["soup"], 0.9)])
        after = answer(await client.call_tool("get_memetic_status", {"session_id": session}))
    assert after["coherence_score"] < before["coherence_score"]
    assert after["top_active_concepts"][0] == "soup" != before["top_active_concepts"][0]
    assert after["pulse"] != before["pulse"]


async def test_bob_reaches_none_of_alices_graph(user, other_user, alice_token, bob_token):
    graph = await alice_graph(user)
    session, kube = str(graph["session"].pk), str(graph["kube"].pk)
    await database_sync_to_async(memory_delete)(actor=user, memory_id=graph["soup"].pk)
    async with context_graph(alice_token) as alice:
        answer(await alice.call_tool("temporary_scratchpad", {
            "action": "store", "session_id": session, "agent_id": "planner", "content": "Alice's shared thought.",
            "privacy": "shared"}))
    async with context_graph(bob_token) as bob:
        manifest = answer(await bob.call_tool("get_graph_manifest", {}))
        assert "0 live nodes and 0 links across 0 cubes." in manifest["current_state_summary"]
        assert "No session yet" in manifest["current_state_summary"]
        instructions = answer(await bob.call_tool("get_system_instructions", {}))
        assert "(0 interactions" in instructions["system_prompt_fragment"]
        health = answer(await bob.call_tool("get_health", {}))
        assert "alice" not in json.dumps(health) and set(health["components"]) >= {"database", "pgvector"}
        failure(await bob.call_tool("get_memetic_status", {"session_id": session}), -32000, "session_id")
        own = answer(await bob.call_tool("get_memetic_status", {}))
        assert (own["curation_tasks"], own["top_active_concepts"], own["session_id"]) == ([], [], None)
        failure(await bob.call_tool("epistemic_action", {"session_id": session, "force": True}), -32000, "session_id")
        assert "question" not in answer(await bob.call_tool("epistemic_action", {"force": True}))
        pad = answer(await bob.call_tool("temporary_scratchpad", {"action": "retrieve", "session_id": session,
                                                                  "agent_id": "planner"}))
        assert (pad["items_count"], pad["items"]) == (0, [])
        failure(await bob.call_tool("temporary_scratchpad", {"action": "store", "session_id": session,
                                                             "agent_id": "planner", "content": "Bob's."}),
                -32000, "session_id")
        cleared = answer(await bob.call_tool("temporary_scratchpad", {"action": "clear", "session_id": session,
                                                                      "agent_id": "planner"}))
        assert cleared["cleared"] == 0
        failure(await bob.call_tool("get_node_lineage", {"node_id": kube}), -32602, "node_id")
        logs = answer(await bob.call_tool("get_system_logs", {"node_id": str(graph["soup"].pk)}))
        assert logs["entries"] == []
        for uri in (f"visualize://{kube}", f"visualize://{graph['kube'].cube_id}/staging"):
            with pytest.raises(MCPError, match="not found"):
                await bob.read_resource(uri)
        assert "kubernetes" not in (await bob.read_resource("visualize://all/staging")).contents[0].text
        bob_pulse = json.loads((await bob.read_resource("utl://current_session/pulse")).contents[0].text)
        assert (bob_pulse["session_id"], bob_pulse["curation_tasks_pending"]) == (None, 0)
    # Alice's own view still has all of it.
    async with context_graph(alice_token) as alice:
        logs = answer(await alice.call_tool("get_system_logs", {"node_id": str(graph["soup"].pk)}))
        assert [entry["action"] for entry in logs["entries"]] == ["prune"]
        assert logs["entries"][0]["recoverable"] is True
        pad = answer(await alice.call_tool("temporary_scratchpad", {"action": "retrieve", "session_id": session,
                                                                    "agent_id": "planner"}))
        assert pad["items_count"] == 1
    assert await database_sync_to_async(Event.objects.filter(owner=other_user).count)() == 0

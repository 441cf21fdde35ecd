"""Context Graph's planning group (generate_search_plan, reflect_on_memory, debug_compare_retrieval,
test_recall_accuracy) and the benchmark://runs/{run_id} resource through the SDK's own client, in process: the seed's
schemas (Engram's own for reflect_on_memory), answers the client validates against the output schemas with the
pulse in each, -32602 naming the field, -32000 for an unknown session, -32001 while a benchmark runs, and alice
against bob on every tool."""
from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError

from apps.cognition.models import BenchmarkRun
from apps.cubes.models import Cube
from tests.cognition.causal_graphs import draw
from tests.cognition.support import new_session, set_state
from tests.cognition.test_benchmark_run_compare import GRAPH, LINKS, QUERY
from tests.cognition.test_plan import AUTH, AUTH_LINKS, GOAL
from tests.contracts import contract
from tests.mcp.context_graph_calls import ok, refused
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import in_process
from tests.memories.test_faults_worker import _close_broker_connections  # noqa: F401 (a handed-off run publishes)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PROFILE = "context-graph"
SEED = contract("context_graph")["tools"]
SEED_TOOLS = ("generate_search_plan", "debug_compare_retrieval", "test_recall_accuracy")


def refs(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs(value)]
    return []


async def test_schemas_are_the_seeds_and_the_descriptions_name_what_runs(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        templates = {template.uri_template for template in (await client.list_resource_templates()).resource_templates}
    assert "benchmark://runs/{run_id}" in templates
    for name in SEED_TOOLS:
        tool, seed = tools[name], SEED[name]
        assert_seed_schema(tool.input_schema, seed["inputSchema"], name)
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), name
        output = tool.output_schema
        Draft202012Validator.check_schema(output)
        assert all(ref.removeprefix("#/$defs/") in output.get("$defs", {}) for ref in refs(output)), name
        as_seed = json.loads(json.dumps({key: value for key, value in output.items() if key != "$defs"})
                             .replace("#/$defs/", "#/definitions/"))
        assert as_seed == seed["outputSchema"], name
        assert tool.description.startswith(seed["description"]), name
    # The seed's claims are corrected in the description: one model, no FuseMoE, no hyperbolic embedding.
    assert "one embedding model" in tools["generate_search_plan"].description
    assert "no FuseMoE and no 12 models" in tools["debug_compare_retrieval"].description
    assert "no hyperbolic embedding" in tools["debug_compare_retrieval"].description
    assert "one embedding model" in tools["test_recall_accuracy"].description
    reflect = tools["reflect_on_memory"]
    assert reflect.input_schema["required"] == ["goal"]
    properties = reflect.input_schema["properties"]
    assert (properties["goal"]["minLength"], properties["goal"]["maxLength"]) == (10, 500)
    assert (properties["max_steps"]["minimum"], properties["max_steps"]["maximum"],
            properties["max_steps"]["default"]) == (1, 5, 3)
    assert properties["session_id"]["format"] == "uuid"
    Draft202012Validator.check_schema(reflect.output_schema)
    assert (tools["generate_search_plan"].input_schema["properties"]["max_queries"]["minimum"],
            tools["debug_compare_retrieval"].input_schema["properties"]["top_k"]["maximum"]) == (1, 100)


async def test_every_tool_answers(user, alice_token):
    await database_sync_to_async(draw)(user, AUTH, AUTH_LINKS)
    compared = await database_sync_to_async(draw)(user, GRAPH, LINKS)
    session = await database_sync_to_async(lambda: set_state(new_session(user), entropy=0.8, coherence=0.3,
                                                             interactions=7))()
    async with in_process(alice_token, PROFILE) as client:
        plan = await ok(client, "generate_search_plan", {"goal": GOAL, "query_types": ["semantic", "code"]})
        reflection = await ok(client, "reflect_on_memory", {"goal": GOAL, "session_id": str(session.pk),
                                                            "max_steps": 4})
        comparison = await ok(client, "debug_compare_retrieval", {
            "query": QUERY, "top_k": 5, "methods": ["cosine_baseline", "fuse_moe", "causal_pathfinding",
                                                    "hyperbolic_entailment"],
            "ground_truth_node_ids": [str(compared["A"].pk), str(compared["B"].pk)]})
        with override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=600):
            benchmark = await ok(client, "test_recall_accuracy", {"needle_count": 5, "haystack_size": 100})
        [polled] = (await client.read_resource(f"benchmark://runs/{benchmark['run_id']}")).contents
    assert [query["type"] for query in plan["queries"]] == ["semantic", "code"]
    assert "vault_rotate()" in plan["queries"][1]["query"] and 0 < plan["queries"][1]["expected_recall"] <= 1
    assert plan["execution_strategy"] in ("parallel", "sequential") and plan["goal_pool_size"] == 10
    assert [step["tool"] for step in reflection["steps"]] == ["trigger_dream", "epistemic_action",
                                                             "generate_search_plan", "inject_context"]
    assert reflection["steps_left_out"] == 0 and reflection["utl"]["entropy"] == 0.8
    assert reflection["steps"][1]["arguments"] == {"session_id": str(session.pk)}
    assert comparison["metrics"]["recall"]["causal_pathfinding"] == 1.0
    assert comparison["metrics"]["precision"]["fuse_moe"] == 0.2 and "overlap" in comparison["metrics"]
    assert str(compared["B"].pk) in {node["node_id"] for node in comparison["results"]["causal_pathfinding"]}
    assert "hyperbolic_entailment" in comparison["results"]
    assert benchmark["status"] == "completed" and 0 <= benchmark["fuse_moe_accuracy"] <= 1
    assert "baseline_accuracy" in benchmark and benchmark["test_details"]["queries"] == 5
    assert json.loads(polled.text)["fuse_moe_accuracy"] == benchmark["fuse_moe_accuracy"]
    assert not await database_sync_to_async(Cube.objects.filter(hidden=True).exists)()


@pytest.mark.parametrize(("tool", "arguments", "code", "field"), [
    ("generate_search_plan", {"goal": "short"}, -32602, "goal"),
    ("generate_search_plan", {"goal": GOAL, "query_types": ["visual"]}, -32602, "query_types[0]"),
    ("generate_search_plan", {"goal": GOAL, "max_queries": 8}, -32602, "max_queries"),
    ("reflect_on_memory", {"goal": GOAL, "max_steps": 6}, -32602, "max_steps"),
    ("reflect_on_memory", {"goal": GOAL, "session_id": "nope"}, -32602, "session_id"),
    ("reflect_on_memory", {"goal": GOAL, "session_id": "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a"}, -32000, "session_id"),
    ("debug_compare_retrieval", {"query": ""}, -32602, "query"),
    ("debug_compare_retrieval", {"query": QUERY, "top_k": 0}, -32602, "top_k"),
    ("debug_compare_retrieval", {"query": QUERY, "methods": []}, -32602, "methods"),
    ("debug_compare_retrieval", {"query": QUERY, "ground_truth_node_ids": ["nope"]}, -32602,
     "ground_truth_node_ids[0]"),
    ("test_recall_accuracy", {"needle_count": 4}, -32602, "needle_count"),
    ("test_recall_accuracy", {"haystack_size": 10_001}, -32602, "haystack_size"),
    ("test_recall_accuracy", {"baseline_model": "gpt-5"}, -32602, "baseline_model"),
])
async def test_bad_input_is_refused_naming_the_field(alice_token, tool, arguments, code, field):
    async with in_process(alice_token, PROFILE) as client:
        await refused(client, tool, arguments, code, field)


async def test_a_benchmark_handed_off_answers_its_progress_and_a_second_waits(user, alice_token):
    async with in_process(alice_token, PROFILE) as client:
        with override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=0):
            started = await ok(client, "test_recall_accuracy", {"needle_count": 5, "haystack_size": 300})
        assert started["status"] == "running" and started["progress"]["stored"] == 200
        assert "fuse_moe_accuracy" not in started and "benchmark://runs/" in started["poll"]
        error = await refused(client, "test_recall_accuracy", {}, -32001, None)
        assert error["data"]["run_id"] == started["run_id"] and "benchmark://runs/" in error["data"]["suggestion"]
        [polled] = (await client.read_resource(f"benchmark://runs/{started['run_id']}")).contents
    assert json.loads(polled.text)["status"] == "running"
    run = await database_sync_to_async(BenchmarkRun.objects.get)(pk=started["run_id"])
    assert run.background and await database_sync_to_async(Cube.objects.filter(pk=run.cube_id, hidden=True).exists)()


async def test_bob_reaches_none_of_alices(user, other_user, alice_token, bob_token):
    await database_sync_to_async(draw)(user, AUTH, AUTH_LINKS)
    compared = await database_sync_to_async(draw)(user, GRAPH, LINKS)
    session = await database_sync_to_async(lambda: set_state(new_session(user), entropy=0.9, coherence=0.1,
                                                             interactions=9))()
    async with in_process(alice_token, PROFILE) as alice:
        with override_settings(ENGRAM_BENCHMARK_INLINE_SECONDS=600):
            run = await ok(alice, "test_recall_accuracy", {"needle_count": 5, "haystack_size": 100})
    alice_nodes = {str(node.pk) for node in compared.values()}
    async with in_process(bob_token, PROFILE) as bob:
        plan = await ok(bob, "generate_search_plan", {"goal": GOAL, "query_types": ["semantic", "code"]})
        assert plan["goal_pool_size"] == 0 and "vault_rotate()" not in json.dumps(plan)
        await refused(bob, "reflect_on_memory", {"goal": GOAL, "session_id": str(session.pk)}, -32000, "session_id")
        own = await ok(bob, "reflect_on_memory", {"goal": GOAL})
        assert own["session_id"] is None and own["steps"][0]["tool"] == "generate_search_plan"
        comparison = await ok(bob, "debug_compare_retrieval", {"query": QUERY, "methods": [
            "cosine_baseline", "fuse_moe", "causal_pathfinding", "hyperbolic_entailment"]})
        assert not alice_nodes & {node["node_id"] for nodes in comparison["results"].values() for node in nodes}
        await refused(bob, "debug_compare_retrieval", {"query": QUERY, "ground_truth_node_ids": [
            str(compared["A"].pk)]}, -32602, "ground_truth_node_ids[0]")
        with pytest.raises(MCPError, match="not found"):
            await bob.read_resource(f"benchmark://runs/{run['run_id']}")

"""Context Graph's reasoning group (query_causal, find_causal_path, expand_causal_path, entailment_query) through the
SDK's own client, in process: the seed's schemas (and Engram's for expand_causal_path, which the seed only names),
answers the client validates against the output schemas with the pulse in each, -32602 naming the field, -32003 with
the nearest names for a concept that matches nothing, and alice against bob on every tool."""
from __future__ import annotations


import pytest
from channels.db import database_sync_to_async
from jsonschema import Draft202012Validator

from tests.cognition.causal_graphs import (
    CONFOUNDED, CONFOUNDED_LINKS, ROUTE_LINKS, ROUTES, TAXONOMY, TAXONOMY_LINKS, draw,
)
from tests.contracts import contract
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.context_graph_calls import ok, refused
from tests.mcp.support import in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PROFILE = "context-graph"
SEED = contract("context_graph")["tools"]
REASONING_TOOLS = ("query_causal", "find_causal_path", "expand_causal_path", "entailment_query")


def refs(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs(value)]
    return []


async def test_schemas_are_the_seeds_and_engrams_own_for_expand(alice_token):
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in ("query_causal", "find_causal_path", "entailment_query"):
        tool, seed = tools[name], SEED[name]
        assert_seed_schema(tool.input_schema, seed["inputSchema"], name)
        assert tool.output_schema == seed.get("outputSchema"), name
        assert tool.description.startswith(seed["description"]), name
    assert tools["query_causal"].output_schema is None  # the seed gives it none
    expand = tools["expand_causal_path"]
    assert expand.input_schema["required"] == ["concept"]
    properties = expand.input_schema["properties"]
    assert properties["direction"]["enum"] == ["effects", "causes", "both"] and properties["direction"]["default"] == \
        "effects"
    assert (properties["max_hops"]["minimum"], properties["max_hops"]["maximum"], properties["max_hops"]["default"]) \
        == (1, 6, 3)
    assert (properties["min_weight"]["minimum"], properties["min_weight"]["maximum"],
            properties["min_weight"]["default"]) == (0, 1, 0.1)
    output = expand.output_schema
    Draft202012Validator.check_schema(output)
    assert refs(output) and all(ref.removeprefix("#/$defs/") in output["$defs"] for ref in refs(output))
    for tool in (tools[name] for name in REASONING_TOOLS):
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), tool.name
        if tool.output_schema:
            Draft202012Validator.check_schema(tool.output_schema)


async def test_every_tool_answers_with_what_the_graph_holds(user, alice_token):
    routes = await database_sync_to_async(draw)(user, ROUTES, ROUTE_LINKS)
    confounded = await database_sync_to_async(draw)(user, CONFOUNDED, CONFOUNDED_LINKS)
    taxonomy = await database_sync_to_async(draw)(user, TAXONOMY, TAXONOMY_LINKS)
    s, a, t = (str(routes[name].pk) for name in ("S", "A", "T"))
    x, y = str(confounded["X"].pk), str(confounded["Y"].pk)
    async with in_process(alice_token, PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        path = await ok(client, "find_causal_path", {"start_concept": "the payment gateway times out",
                                                     "end_concept": t, "include_alternatives": True})
        observed = await ok(client, "query_causal", {"action": "ice cream sales at the seaside", "outcome": y,
                                                     "intervention_type": "observe"})
        done = await ok(client, "query_causal", {"action": x, "outcome": y})
        expanded = await ok(client, "expand_causal_path", {"concept": s, "max_hops": 2})
        cone = await ok(client, "entailment_query", {"node_id": str(taxonomy["cat"].pk), "max_depth": 2})
    for name, answer in (("find_causal_path", path), ("expand_causal_path", expanded), ("entailment_query", cone)):
        Draft202012Validator(tools[name].output_schema).validate(answer)

    assert path["path_found"] is True and path["hop_count"] == 2 and path["path_confidence"] == 0.81
    assert [item["node_id"] for item in path["path"]] == [s, a, t]
    assert path["path"][0] == {"node_id": s, "node_name": "The payment gateway starts timing out under load",
                               "edge_type": "causal", "edge_weight": 0.9, "link_type": "causal",
                               "direction": "forward"}
    assert set(path["path"][-1]) == {"node_id", "node_name"}  # the end: no link leads on from it
    assert path["start_match"]["matched_by"] == "meaning" and path["end_match"]["matched_by"] == "id"
    assert [len(alternative) for alternative in path["alternative_paths"]] == [4, 3, 2]
    assert path["alternative_confidences"] == [0.648, 0.57, 0.5]
    assert path["narrative"].endswith("Path confidence 0.81: the product of the 2 link weights.")

    assert observed["action"]["node_id"] == x and observed["effect_strength"] == 0.72
    [common] = observed["results"]
    assert (common["relation"], common["via"], common["path"]) == ("common_cause", str(confounded["C"].pk),
                                                                   [x, str(confounded["C"].pk), y])
    assert [edge["source"] for edge in common["edges"]] == [str(confounded["C"].pk)] * 2
    assert "observe(action)" in observed["method"]
    assert (done["intervention_type"], done["effect_strength"], done["results"]) == ("do", 0.0, [])

    assert [(p["nodes"], p["strength"], p["direction"]) for p in expanded["paths"]] == [
        ([s, str(routes["D"].pk)], 0.95, "effects"), ([s, a], 0.9, "effects"),
        ([s, a, t], 0.81, "effects"), ([s, str(routes["B"].pk)], 0.8, "effects"),
        ([s, str(routes["B"].pk), str(routes["C"].pk)], 0.72, "effects")]
    assert expanded["paths"][0]["narrative"] == ("The payment gateway starts timing out under load leads to The "
                                                 "mobile app shows spinning wheels to shoppers (0.95).")
    assert expanded["truncated"] is False and expanded["concept"]["matched_by"] == "id"

    assert cone["ancestors"] == [str(taxonomy[name].pk) for name in ("mammal", "animal")]
    assert cone["descendants"] == [str(taxonomy["kitten"].pk)]
    assert cone["entailment_confidence"] == round((0.9 + 0.72 + 0.7) / 3, 4)
    assert "mean" in cone["method"] and [node["depth"] for node in cone["nodes"]] == [1, 2, 1]


@pytest.mark.parametrize("tool, arguments, field", [
    ("query_causal", {}, "action"),
    ("query_causal", {"action": "heat", "intervention_type": "maybe"}, "intervention_type"),
    ("query_causal", {"action": ""}, "action"),
    ("query_causal", {"action": "heat", "surprise": 1}, "surprise"),
    ("find_causal_path", {"start_concept": "heat"}, "end_concept"),
    ("find_causal_path", {"start_concept": "heat", "end_concept": "sales", "max_hops": 7}, "max_hops"),
    ("find_causal_path", {"start_concept": "heat", "end_concept": "sales", "max_hops": 0}, "max_hops"),
    ("find_causal_path", {"start_concept": "heat", "end_concept": "sales", "path_type": "magic"}, "path_type"),
    ("find_causal_path", {"start_concept": "heat", "end_concept": "sales", "include_alternatives": "yes"},
     "include_alternatives"),
    ("expand_causal_path", {"concept": ""}, "concept"),
    ("expand_causal_path", {"concept": "heat", "direction": "up"}, "direction"),
    ("expand_causal_path", {"concept": "heat", "max_hops": 9}, "max_hops"),
    ("expand_causal_path", {"concept": "heat", "min_weight": 1.5}, "min_weight"),
    ("entailment_query", {"node_id": "cat"}, "node_id"),
    ("entailment_query", {"node_id": "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a", "max_depth": 11}, "max_depth"),
    ("entailment_query", {"node_id": "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a", "direction": "up"}, "direction"),
    ("entailment_query", {"node_id": "0b4f1c9e-5d2a-4e8b-9c3f-7a6d5e4f3b2a"}, "node_id"),  # nobody's node
])
async def test_bad_input_is_32602_naming_the_field(user, alice_token, tool, arguments, field):
    await database_sync_to_async(draw)(user, CONFOUNDED, CONFOUNDED_LINKS)
    async with in_process(alice_token, PROFILE) as client:
        await refused(client, tool, arguments, -32602, field)


async def test_a_concept_that_matches_nothing_is_32003_with_the_nearest_names(user, alice_token):
    await database_sync_to_async(draw)(user, CONFOUNDED, CONFOUNDED_LINKS)
    async with in_process(alice_token, PROFILE) as client:
        error = await refused(client, "find_causal_path", {"start_concept": "lattice gauge quantum chromodynamics",
                                                           "end_concept": "ice cream sales"}, -32003, "start_concept")
        assert error["data"]["reason"] == "concept_unresolved"
        assert len(error["data"]["nearest"]) == 3 and "nearest are" in error["message"]
        for tool, arguments in (("query_causal", {"action": "lattice gauge quantum chromodynamics"}),
                                ("expand_causal_path", {"concept": "lattice gauge quantum chromodynamics"})):
            await refused(client, tool, arguments, -32003, "action" if tool == "query_causal" else "concept")


async def test_bob_never_reaches_alices_nodes(user, alice_token, bob_token, other_user):
    hers = await database_sync_to_async(draw)(user, CONFOUNDED, CONFOUNDED_LINKS)
    taxonomy = await database_sync_to_async(draw)(user, TAXONOMY, TAXONOMY_LINKS)
    his = await database_sync_to_async(draw)(other_user, {"X": "Bob's notes on quarterly tax filings."}, [])
    x, y, bobs = str(hers["X"].pk), str(hers["Y"].pk), str(his["X"].pk)
    alices = {str(memory.pk) for memory in [*hers.values(), *taxonomy.values()]}
    async with in_process(bob_token, PROFILE) as client:
        await refused(client, "query_causal", {"action": x}, -32003, "action")
        await refused(client, "query_causal", {"action": bobs, "outcome": y}, -32003, "outcome")
        await refused(client, "find_causal_path", {"start_concept": bobs, "end_concept": x}, -32003, "end_concept")
        await refused(client, "expand_causal_path", {"concept": x}, -32003, "concept")
        await refused(client, "entailment_query", {"node_id": str(taxonomy["cat"].pk)}, -32602, "node_id")
        # In words, Alice's very text finds nothing of hers for Bob: never her node.
        error = await refused(client, "query_causal", {"action": CONFOUNDED["X"]}, -32003, "action")
        assert not {near["node_id"] for near in error["data"]["nearest"]} & alices
        mine = await ok(client, "expand_causal_path", {"concept": bobs, "direction": "both"})
        assert mine["paths"] == [] and mine["concept"]["node_id"] == bobs
    async with in_process(alice_token, PROFILE) as client:
        await refused(client, "entailment_query", {"node_id": bobs}, -32602, "node_id")
        await refused(client, "find_causal_path", {"start_concept": x, "end_concept": bobs}, -32003, "end_concept")

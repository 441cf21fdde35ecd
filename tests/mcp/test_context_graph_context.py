"""The Context Graph profile's context tools, inject_context and hydrate_citation, through the SDK's own client in
process: the seed's schemas, answers that validate against the published outputSchema, -32602 naming the field
for every kind of bad argument, the pulse on every answer, isolation between users, and no more queries for a
bigger graph."""
from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from jsonschema import Draft202012Validator
from mcp.client import Client

from apps.cognition.citations import citation_tag
from apps.cognition.models import CurationTask
from apps.mcp.auth import authenticate_token, authenticated
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server
from apps.memories.services import memory_store_many
from apps.memories.services.curation import memory_link
from tests.contracts import contract
from tests.mcp.support import in_process, over_http
from tests.query_counts import store_batch

pytestmark = pytest.mark.django_db(transaction=True)

PROFILE = "context-graph"
SEED = contract("context_graph")
DEFINED = {"CausalPath", "EntailmentCone", "Neighborhood", "NodeSummary", "EdgeSummary"}
NOTES = [
    "The cache was disabled during the database migration.",
    "Because the cache was disabled, the catalogue pages loaded slowly.",
    "Slow catalogue pages made customers open support tickets.",
    "A cache is a kind of storage layer that keeps hot data close.",
    "The payments service stores its data in PostgreSQL 15.",
    "The payments service stores its data in PostgreSQL 16.",
]


def answer(result) -> dict:
    """A tool result's object; its text and structured forms must agree."""
    [block] = result.content
    data = json.loads(block.text)
    assert data == result.structured_content
    return data


def assert_pulse(data: dict) -> None:
    assert set(data["pulse"]) == {"entropy", "coherence", "suggested"}


def failure(result, code: int = -32602) -> dict:
    data = answer(result)
    assert result.is_error is True and data["success"] is False
    error = data["error"]
    assert error["code"] == code, error
    assert error["message"].strip() and error["data"]["suggestion"].strip()
    assert "Traceback" not in json.dumps(data)
    assert_pulse(data)
    return error


@database_sync_to_async
def graph_of(user) -> list:
    """NOTES as the user's memories, unlinked but for a causal chain (0 -> 1 -> 2) and an IS-A link (0 -> 3)."""
    memories = [result.memory for result in memory_store_many(
        actor=user, items=[{"content": note} for note in NOTES], link=False)]
    memory_link(actor=user, source_id=memories[0].pk, target_id=memories[1].pk, link_type="causal", weight=0.9)
    memory_link(actor=user, source_id=memories[1].pk, target_id=memories[2].pk, link_type="causal", weight=0.5)
    memory_link(actor=user, source_id=memories[0].pk, target_id=memories[3].pk, link_type="hierarchical")
    return memories


def _refs(value) -> list[str]:
    if isinstance(value, dict):
        return [ref for key, item in value.items() for ref in ([item] if key == "$ref" else _refs(item))]
    if isinstance(value, list):
        return [ref for item in value for ref in _refs(item)]
    return []


def _as_seed(schema: dict) -> dict:
    """A served outputSchema as the seed writes it: without $defs, refs to #/definitions/."""
    text = json.dumps({key: value for key, value in schema.items() if key != "$defs"})
    return json.loads(text.replace('"#/$defs/', '"#/definitions/'))


async def test_the_schemas_are_the_seeds(alice_token):
    async with in_process(alice_token, profile=PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    inject, hydrate = tools["inject_context"], tools["hydrate_citation"]
    seed = SEED["tools"]["inject_context"]
    assert inject.input_schema == seed["inputSchema"]
    assert inject.description.startswith(seed["description"])
    assert _as_seed(inject.output_schema) == seed["outputSchema"]
    assert set(inject.output_schema["$defs"]) == DEFINED
    for ref in _refs(inject.output_schema):  # every ref resolves inside the schema
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in DEFINED, ref
    Draft202012Validator.check_schema(inject.output_schema)
    Draft202012Validator.check_schema(hydrate.output_schema)
    assert hydrate.input_schema == {
        "type": "object", "required": ["citation_tags"],
        "properties": {
            "citation_tags": {"type": "array", "minItems": 1, "maxItems": 10,
                              "items": {"type": "string", "pattern": r"^\[?node_[0-9a-fA-F]{12}\]?$"},
                              "description": hydrate.input_schema["properties"]["citation_tags"]["description"]},
            "include_neighbors": {"type": "boolean", "default": False,
                                  "description": "Also list the nodes linked to each, either direction"},
            "verbosity_level": {"type": "integer", "enum": [0, 1, 2], "default": 1,
                                "description": hydrate.input_schema["properties"]["verbosity_level"]["description"]},
        },
    }
    assert hydrate.description.startswith("Expand any citation tag to see raw source content")
    for tool in tools.values():  # clients refuse combinators at the top of an inputSchema
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), tool.name


async def test_answers_validate_against_the_output_schema(user, alice_token):
    memories = await graph_of(user)
    async with in_process(alice_token, profile=PROFILE) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # The client checks each successful answer against the tool's outputSchema itself, and raises if it fails.
        result = await client.call_tool("inject_context", {
            "query": "why were the catalogue pages slow after the migration", "priority": "high",
            "include_metadata": ["causal_links", "entailment_cones", "neighborhood", "conflicts"],
            "verbosity_level": 2, "distillation_mode": "raw"})
        data = answer(result)
        assert result.is_error is False
        checker = Draft202012Validator(tools["inject_context"].output_schema,
                                       format_checker=Draft202012Validator.FORMAT_CHECKER)
        checker.validate(data)
        assert set(data["bundled_metadata"]) == {"causal_links", "entailment_cones", "neighborhood", "conflicts"}
        assert data["bundled_metadata"]["causal_links"][0]["nodes"] == [str(m.pk) for m in memories[:3]]
        assert data["conflict_alert"]["has_conflict"] is True  # PostgreSQL 15 and 16
        assert_pulse(data)
        assert data["pulse"]["entropy"] == data["utl_metrics"]["entropy"]

        tags = [citation_tag(memory.pk) for memory in memories[:2]]
        assert all(tag in data["context"] for tag in tags)
        hydrated = await client.call_tool("hydrate_citation", {"citation_tags": tags, "include_neighbors": True,
                                                               "verbosity_level": 2})
        expansions = answer(hydrated)["expansions"]
        Draft202012Validator(tools["hydrate_citation"].output_schema).validate(answer(hydrated))
        assert [expansion["raw_content"] for expansion in expansions] == NOTES[:2]
        assert expansions[0]["neighbours"][0]["node_id"] in {str(memories[1].pk), str(memories[3].pk)}
        assert_pulse(answer(hydrated))


@pytest.mark.parametrize("tool, arguments, field", [
    ("inject_context", {}, "query"),
    ("inject_context", {"query": 123}, "query"),
    ("inject_context", {"query": ""}, "query"),
    ("inject_context", {"query": "x" * 4097}, "query"),
    ("inject_context", {"query": "x", "max_tokens": "500"}, "max_tokens"),
    ("inject_context", {"query": "x", "max_tokens": 99}, "max_tokens"),
    ("inject_context", {"query": "x", "max_tokens": 8193}, "max_tokens"),
    ("inject_context", {"query": "x", "priority": "urgent"}, "priority"),
    ("inject_context", {"query": "x", "distillation_mode": "summary"}, "distillation_mode"),
    ("inject_context", {"query": "x", "include_metadata": ["conflicts", "history"]}, "include_metadata[1]"),
    ("inject_context", {"query": "x", "verbosity_level": 3}, "verbosity_level"),
    ("inject_context", {"query": "x", "verbosity_level": True}, "verbosity_level"),
    ("inject_context", {"query": "x", "session_id": "yesterday"}, "session_id"),
    ("inject_context", {"query": "x", "colour": "blue"}, "colour"),
    ("hydrate_citation", {}, "citation_tags"),
    ("hydrate_citation", {"citation_tags": "[node_0123456789ab]"}, "citation_tags"),
    ("hydrate_citation", {"citation_tags": []}, "citation_tags"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]"] * 11}, "citation_tags"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]", "node-xyz"]}, "citation_tags[1]"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]"]}, "citation_tags[0]"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]"], "include_neighbors": "yes"}, "include_neighbors"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]"], "verbosity_level": -1}, "verbosity_level"),
    ("hydrate_citation", {"citation_tags": ["[node_0123456789ab]"], "expand": True}, "expand"),
])
async def test_bad_arguments_are_32602_naming_the_field(alice_token, tool, arguments, field):
    async with in_process(alice_token, profile=PROFILE) as client:
        error = failure(await client.call_tool(tool, arguments))
    assert error["data"]["field"] == field, error


async def test_users_see_only_their_own_nodes_sessions_and_tasks(user, other_user, alice_token, bob_token):
    alices = await graph_of(user)
    async with in_process(alice_token, profile=PROFILE) as alice:
        mine = answer(await alice.call_tool("inject_context", {"query": "payments service PostgreSQL version"}))
    assert mine["conflict_alert"]["has_conflict"] is True
    async with in_process(bob_token, profile=PROFILE) as bob:
        theirs = answer(await bob.call_tool("inject_context", {"query": "payments service PostgreSQL version"}))
        assert theirs["nodes_retrieved"] == [] and theirs["context"] == ""
        assert theirs["conflict_alert"]["has_conflict"] is False
        stolen = failure(await bob.call_tool("inject_context", {"query": "payments",
                                                                "session_id": mine["session_id"]}), code=-32000)
        assert stolen["data"]["field"] == "session_id"
        hidden = failure(await bob.call_tool("hydrate_citation", {"citation_tags": [citation_tag(alices[4].pk)]}))
        assert hidden["data"]["field"] == "citation_tags[0]"

    @database_sync_to_async
    def task_owners():
        return set(CurationTask.objects.values_list("owner__username", flat=True))

    assert await task_owners() == {"alice"}


async def test_over_http_the_answer_and_its_tags_round_trip(live_url, user, alice_token):
    memories = await graph_of(user)
    async with over_http(live_url + "/mcp/context-graph/", alice_token) as client:
        injected = answer(await client.call_tool("inject_context", {
            "query": "which PostgreSQL does the payments service use", "max_tokens": 100,
            "distillation_mode": "structured"}))
        assert injected["tokens_used"] <= 100 and injected["distillation_applied"] == "structured"
        assert_pulse(injected)
        tag = citation_tag(memories[4].pk)
        assert tag in injected["context"]
        hydrated = answer(await client.call_tool("hydrate_citation", {"citation_tags": [tag]}))
    assert hydrated["expansions"][0]["raw_content"] == NOTES[4]


def _call(token: str, arguments: dict) -> dict:
    """One inject_context call through the SDK's in-process client on this thread, where the query counter looks."""
    async def run():
        async with Client(build_server(PROFILES[PROFILE])) as client:
            return await client.call_tool("inject_context", arguments)

    with authenticated(authenticate_token(token)):
        result = async_to_sync(run)()
    assert not result.is_error, result.content
    return answer(result)


def test_a_bigger_graph_costs_no_more_queries(user, make_token, django_assert_max_num_queries):
    """The issue's 1-vs-50 shape, at the smallest graph that takes every step. The lowest priority retrieves a pool
    of 5, and the 1-hop expansion only reaches nodes outside the pool, so 6 linked, similar entries are the fewest
    that give one neighbour (besides conflicts and their tasks, and every bundle); 50 give five. The 50-node call may
    not run more statements than the 6-node one."""
    token = make_token(user)
    arguments = {"query": "lighthouse lamp station log", "priority": "low", "verbosity_level": 2,
                 "include_metadata": ["causal_links", "entailment_cones", "neighborhood", "conflicts"]}
    store_batch(user, 0, 6)
    _call(token, arguments)  # once-only writes (the session, the conflicts' tasks) out of the way
    with CaptureQueriesContext(connection) as at_six:
        small = _call(token, arguments)
    assert len(small["nodes_retrieved"]) == 6  # the pool of 5 and the one neighbour a hop found
    assert small["conflict_alert"]["has_conflict"] is True and small["bundled_metadata"]["neighborhood"]["edges"]
    store_batch(user, 6, 44)
    _call(token, arguments)
    with django_assert_max_num_queries(len(at_six)):
        large = _call(token, arguments)
    assert len(large["nodes_retrieved"]) == 10  # the pool of 5 and as many neighbours
    assert large["conflict_alert"]["has_conflict"] is True

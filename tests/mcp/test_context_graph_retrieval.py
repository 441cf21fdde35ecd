"""Context Graph's storage and navigation tools (store_memory, search_graph, get_neighborhood, get_recent_context)
through the SDK's own client, in process and once over real HTTP: the seed's schemas, answers that validate,
the error envelope with the field at fault, the pulse on every answer, user A against user B, query counts."""
from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta

import jsonschema
import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from mcp.client import Client

from apps.cognition.models import CgSession, NodeProfile
from apps.mcp.auth import authenticate_token, authenticated
from apps.mcp.profiles import PROFILES
from apps.mcp.profiles.context_graph.outputs import NODE_SUMMARY
from apps.mcp.server import build_server
from apps.memories.models import Memory, MemoryLink
from apps.memories.services import memory_store_many
from apps.memories.services.curation import memory_link, memory_link_many
from tests.contracts import contract
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import in_process, over_http
from tests.query_counts import flat, store_batch

pytestmark = pytest.mark.django_db(transaction=True)  # asyncio_mode is auto

TOOLS = ("store_memory", "search_graph", "get_neighborhood", "get_recent_context")
SEED = contract("context_graph")
RATIONALE = "The deployment checklist prevents broken releases of the reporting service"
CHECKLIST = "Before each release run the migrations on staging, then check the health endpoint returns 200."
COMBINATORS = ("oneOf", "anyOf", "allOf")


def payload_of(result) -> dict:
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    assert set(payload["pulse"]) == {"entropy", "coherence", "suggested"}
    return payload


def data_of(result) -> dict:
    payload = payload_of(result)
    assert result.is_error is False, payload
    return payload


def error_of(result, field: str | None, code: int = -32602) -> dict:
    payload = payload_of(result)
    assert result.is_error is True, payload
    assert payload["success"] is False
    error = payload["error"]
    assert error["code"] == code, error
    assert error["message"].strip() and error["data"]["suggestion"].strip()
    assert "Traceback" not in json.dumps(payload)
    if field is not None:
        assert error["data"]["field"] == field, error
    return error


def context_graph(token: str):
    return in_process(token, "context-graph")


async def store(client, content: str, rationale: str = RATIONALE, **arguments) -> dict:
    return data_of(await client.call_tool("store_memory", {"content": content, "rationale": rationale, **arguments}))


# --- the contract -----------------------------------------------------------------------------------------------

async def test_tools_list_is_the_seeds_schemas(alice_token):
    async with context_graph(alice_token) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(TOOLS) <= set(listed)
    for name in TOOLS:
        seed = SEED["tools"][name]
        served = listed[name].input_schema
        assert not set(COMBINATORS) & set(served), name
        assert_seed_schema(served, {key: value for key, value in seed["inputSchema"].items() if key != "oneOf"}, name)
        output = listed[name].output_schema
        if "outputSchema" not in seed:
            assert output is None, name
            continue
        jsonschema.Draft202012Validator.check_schema(output)
        refs = []

        def walk(node):
            if isinstance(node, dict):
                if "$ref" in node:
                    refs.append(node["$ref"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(output)
        assert refs and all(ref.startswith("#/$defs/") and ref.split("/")[-1] in output["$defs"] for ref in refs)
        as_seed = json.loads(json.dumps({key: value for key, value in output.items() if key != "$defs"})
                             .replace("#/$defs/", "#/definitions/"))
        assert as_seed == seed["outputSchema"], name
    assert PROFILES["context-graph"].description == SEED["server"]["description"]
    assert PROFILES["context-graph"].title == "Context Graph"


# --- the tools at work ------------------------------------------------------------------------------------------

async def test_store_search_and_navigate(alice_token, user):
    async with context_graph(alice_token) as client:
        first = await store(client, CHECKLIST, metadata={"domain": "code", "agent_id": "deployer"})
        second = await store(client, "Roll back with the previous image tag when the health check fails.",
                             link_to=[first["node_id"]])
        assert first["success"] is True and uuid.UUID(first["node_id"])
        reward = first["steering_reward"]
        assert set(reward) >= {"dopamine_signal", "rationale", "behavioral_hint"}
        assert -1 <= reward["dopamine_signal"] <= 1 and "base" in reward["rationale"]
        assert second["linked_to"] == [first["node_id"]]

        found = data_of(await client.call_tool("search_graph", {"query": "release health check", "top_k": 5}))
        assert {hit["node_id"] for hit in found["results"]} == {first["node_id"], second["node_id"]}
        for hit in found["results"]:
            jsonschema.validate(hit, NODE_SUMMARY)
            assert hit["kind"] == "memory" and 0 < hit["score"] <= 1

        around = data_of(await client.call_tool("get_neighborhood", {"focal_node_id": first["node_id"]}))
        assert around["focal_point"] == [first["node_id"]]
        assert around["nodes"][0] == {**around["nodes"][0], "node_id": first["node_id"], "score": 1.0}
        assert second["node_id"] in {node["node_id"] for node in around["nodes"]}
        assert {(edge["source"], edge["target"]) for edge in around["edges"]} >= {(second["node_id"], first["node_id"])}

        # Without a focal node: the nodes the session's latest query activated.
        session_focus = data_of(await client.call_tool("get_neighborhood", {"include_edges": False}))
        assert set(session_focus["focal_point"]) == {first["node_id"], second["node_id"]}
        assert session_focus["edges"] == []

        recent = data_of(await client.call_tool("get_recent_context", {"sort_by": "importance"}))
        assert {node["node_id"] for node in recent["nodes"]} == {first["node_id"], second["node_id"]}
        assert all(0 <= node["score"] <= 1 for node in recent["nodes"])
        start, end = recent["time_range"]["from"], recent["time_range"]["to"]
        assert start < end
        session_id = first["session_id"]
        in_session = data_of(await client.call_tool("get_recent_context", {"session_id": session_id}))
        assert {node["node_id"] for node in in_session["nodes"]} == {first["node_id"], second["node_id"]}
    session = await database_sync_to_async(CgSession.objects.get)(owner=user)
    assert str(session.pk) == session_id and session.interactions == 3  # two stores, one query
    profiles = await database_sync_to_async(lambda: list(NodeProfile.objects.values_list("activations", flat=True)))()
    assert profiles == [1, 1]  # the search activated both


async def test_binary_store_says_what_it_embedded(alice_token, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    gif = b"GIF89a" + (5).to_bytes(2, "little") + (3).to_bytes(2, "little") + b"\x00" * 20
    async with context_graph(alice_token) as client:
        stored = data_of(await client.call_tool("store_memory", {
            "rationale": "A tiny logo the marketing team approved for the docs header",
            "data_uri": "data:image/gif;base64," + base64.b64encode(gif).decode(),
        }))
    assert stored["modality"] == "image" and stored["embedded_from"] == "rationale+metadata"
    assert stored["extracted_features"] == {"byte_size": len(gif), "mime_type": "image/gif", "width": 5, "height": 3}
    assert "rationale and metadata" in stored["note"]


async def test_search_filters_and_perspective_lock(alice_token, user):
    async with context_graph(alice_token) as client:
        code = await store_node(client, "Use pytest fixtures for database setup in the test suite.",
                                importance=0.9, metadata={"domain": "code", "agent_id": "coder"})
        poem = await store_node(client, "A poem about the sea at night and the lighthouse test of storms.",
                                importance=0.2, metadata={"domain": "creative", "agent_id": "poet"})
    # Stored through the memory core, as another profile would: no node profile.
    [plain] = await database_sync_to_async(memory_store_many)(
        actor=user, items=[{"content": "The test suite of the lighthouse app runs every night."}])
    plain = plain.memory

    async def ids(arguments: dict) -> set[str]:
        async with context_graph(alice_token) as client:
            answer = data_of(await client.call_tool("search_graph", {"query": "test suite", **arguments}))
        return {hit["node_id"] for hit in answer["results"]}

    everything = {code, poem, str(plain.pk)}
    assert await ids({}) == everything
    assert await ids({"perspective_lock": {"domain": "code"}}) == {code}
    # A memory stored through another profile has no node profile: the general domain, the open quadrant.
    assert await ids({"perspective_lock": {"domain": "general"}}) == {str(plain.pk)}
    assert await ids({"perspective_lock": {"agent_ids": ["poet"]}}) == {poem}
    assert await ids({"perspective_lock": {"exclude_agent_ids": ["poet"]}}) == {code, str(plain.pk)}
    assert await ids({"filters": {"min_importance": 0.8}}) == {code}
    assert await ids({"filters": {"johari_quadrants": ["open"]}}) == everything
    assert await ids({"filters": {"johari_quadrants": ["hidden", "blind"]}}) == set()
    later = (timezone.now() + timedelta(minutes=5)).isoformat()
    assert await ids({"filters": {"created_after": later}}) == set()


async def store_node(client, content: str, **arguments) -> str:
    return (await store(client, content, **arguments))["node_id"]


async def test_neighborhood_is_best_first_over_links_both_ways(alice_token, user, other_user):
    def build():
        items = [{"content": text} for text in (
            "Alpha: the payment service retries failed card charges.",
            "Bravo: volcanic soil makes the vineyard's grapes sweet.",
            "Charlie: the orchestra rehearses Mahler on Thursdays.",
            "Delta: penguins huddle together against the Antarctic wind.",
            "Echo: the bakery sells rye bread before seven in the morning.",
        )]
        nodes = [result.memory for result in memory_store_many(actor=user, items=items, link=False)]
        [hidden] = memory_store_many(actor=other_user, items=[{"content": "Bob's secret plans."}], link=False)
        a, b, c, d, e = nodes
        memory_link(actor=user, source_id=a.pk, target_id=b.pk, weight=0.9)
        memory_link(actor=user, source_id=c.pk, target_id=b.pk, weight=0.9)  # incoming to b: walked backwards
        memory_link(actor=user, source_id=d.pk, target_id=a.pk, weight=0.3)
        memory_link(actor=user, source_id=c.pk, target_id=e.pk, weight=0.9)
        MemoryLink.objects.create(source=a, target=hidden.memory, weight=1.0)  # another user's node: never shown
        return [str(node.pk) for node in nodes]

    a, b, c, d, e = await database_sync_to_async(build)()
    async with context_graph(alice_token) as client:
        two = data_of(await client.call_tool("get_neighborhood", {"focal_node_id": a, "max_hops": 2}))
        three = data_of(await client.call_tool("get_neighborhood", {"focal_node_id": a, "max_hops": 3,
                                                                     "max_nodes": 5}))
    assert [(node["node_id"], node["score"]) for node in two["nodes"]] == [(a, 1.0), (b, 0.9), (c, 0.81), (d, 0.3)]
    assert {(edge["source"], edge["target"], edge["weight"]) for edge in two["edges"]} == {
        (a, b, 0.9), (c, b, 0.9), (d, a, 0.3)}
    assert [(node["node_id"], node["score"]) for node in three["nodes"]] == [
        (a, 1.0), (b, 0.9), (c, 0.81), (e, 0.729), (d, 0.3)]


async def test_neighborhood_without_focus_says_why(alice_token):
    async with context_graph(alice_token) as client:
        answer = data_of(await client.call_tool("get_neighborhood", {}))
    assert answer["nodes"] == [] and answer["focal_point"] == [] and "focal_node_id" in answer["note"]


# --- errors -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool, arguments, field", [
    ("store_memory", {"content": CHECKLIST}, "rationale"),
    ("store_memory", {"content": CHECKLIST, "rationale": "too short"}, "rationale"),
    ("store_memory", {"content": CHECKLIST, "rationale": 42}, "rationale"),
    ("store_memory", {"rationale": RATIONALE}, "content"),
    ("store_memory", {"rationale": RATIONALE, "content": CHECKLIST, "data_uri": "data:text/plain;base64,aGk="},
     "data_uri"),
    ("store_memory", {"rationale": RATIONALE, "data_uri": "image.png"}, "data_uri"),
    ("store_memory", {"rationale": RATIONALE, "content": CHECKLIST, "importance": 1.5}, "importance"),
    ("store_memory", {"rationale": RATIONALE, "content": CHECKLIST, "modality": "smell"}, "modality"),
    ("store_memory", {"rationale": RATIONALE, "content": CHECKLIST, "link_to": ["nope"]}, "link_to[0]"),
    ("store_memory", {"rationale": RATIONALE, "content": CHECKLIST, "colour": "red"}, "colour"),
    ("search_graph", {}, "query"),
    ("search_graph", {"query": "x", "top_k": "5"}, "top_k"),
    ("search_graph", {"query": "x", "top_k": 101}, "top_k"),
    ("search_graph", {"query": "x", "top_k": 0}, "top_k"),
    ("search_graph", {"query": "x", "filters": {"min_importance": 2}}, "filters.min_importance"),
    ("search_graph", {"query": "x", "filters": {"johari_quadrants": ["sideways"]}}, "filters.johari_quadrants[0]"),
    ("search_graph", {"query": "x", "filters": {"created_after": "yesterday"}}, "filters.created_after"),
    ("search_graph", {"query": "x", "perspective_lock": {"domain": "poetry"}}, "perspective_lock.domain"),
    ("search_graph", {"query": "x", "perspective_lock": {"team": "a"}}, "perspective_lock.team"),
    ("search_graph", {"query": "x", "bogus": 1}, "bogus"),
    ("get_neighborhood", {"max_hops": 4}, "max_hops"),
    ("get_neighborhood", {"max_nodes": 4}, "max_nodes"),
    ("get_neighborhood", {"include_edges": "yes"}, "include_edges"),
    ("get_neighborhood", {"focal_node_id": "not-a-uuid"}, "focal_node_id"),
    ("get_neighborhood", {"focal_node_id": str(uuid.uuid4())}, "focal_node_id"),
    ("get_neighborhood", {"session_id": "not-a-uuid"}, "session_id"),
    ("get_neighborhood", {"hops": 2}, "hops"),
    ("get_recent_context", {"lookback_minutes": 0}, "lookback_minutes"),
    ("get_recent_context", {"lookback_minutes": 1441}, "lookback_minutes"),
    ("get_recent_context", {"limit": 51}, "limit"),
    ("get_recent_context", {"sort_by": "size"}, "sort_by"),
    ("get_recent_context", {"limit": 2.5}, "limit"),
    ("get_recent_context", {"since": "now"}, "since"),
])
async def test_bad_arguments_name_their_field(alice_token, tool, arguments, field):
    async with context_graph(alice_token) as client:
        error_of(await client.call_tool(tool, arguments), field)


async def test_an_unknown_session_is_session_not_found(alice_token):
    async with context_graph(alice_token) as client:
        for tool in ("get_neighborhood", "get_recent_context"):
            error_of(await client.call_tool(tool, {"session_id": str(uuid.uuid4())}), "session_id", code=-32000)


# --- user A against user B --------------------------------------------------------------------------------------

async def test_each_tool_keeps_users_apart(alice_token, bob_token, user, other_user):
    async with context_graph(alice_token) as alice:
        mine = await store(alice, CHECKLIST)
        data_of(await alice.call_tool("search_graph", {"query": "release checklist"}))
    alice_session = mine["session_id"]
    async with context_graph(bob_token) as bob:
        # store_memory: Bob cannot link to Alice's node, and nothing of his is stored trying.
        error_of(await bob.call_tool("store_memory", {"content": "Bob's note on releases.", "rationale": RATIONALE,
                                                      "link_to": [mine["node_id"]]}), "link_to[0]")
        # search_graph: the same words find nothing of Alice's.
        found = data_of(await bob.call_tool("search_graph", {"query": CHECKLIST}))
        assert found["results"] == []
        # get_neighborhood: her node is unknown to him, her session is not his, and his own session has no focus.
        error_of(await bob.call_tool("get_neighborhood", {"focal_node_id": mine["node_id"]}), "focal_node_id")
        error_of(await bob.call_tool("get_neighborhood", {"session_id": alice_session}), "session_id", code=-32000)
        around = data_of(await bob.call_tool("get_neighborhood", {}))
        assert around["nodes"] == [] and around["focal_point"] == []
        # get_recent_context: none of her nodes, and her session is not found.
        recent = data_of(await bob.call_tool("get_recent_context", {}))
        assert recent["nodes"] == []
        error_of(await bob.call_tool("get_recent_context", {"session_id": alice_session}), "session_id", code=-32000)
        # Bob's own store links nowhere near Alice's node, and lands in his own session.
        own = await store(bob, CHECKLIST)
        assert own["session_id"] != alice_session and own.get("near_duplicate_of") is None

    def check():
        assert not Memory.objects.filter(owner=other_user, content="Bob's note on releases.").exists()
        assert not MemoryLink.objects.filter(source__owner=other_user, target__owner=user).exists()
        assert CgSession.objects.get(pk=alice_session).interactions == 2
        assert NodeProfile.objects.filter(memory__owner=user).count() == 1

    await database_sync_to_async(check)()


# --- over HTTP --------------------------------------------------------------------------------------------------

async def test_over_http(live_url, alice_token):
    async with over_http(live_url + "/mcp/context-graph/", alice_token) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        stored = await store(client, CHECKLIST)
        found = data_of(await client.call_tool("search_graph", {"query": "release migrations staging"}))
        around = data_of(await client.call_tool("get_neighborhood", {"focal_node_id": stored["node_id"]}))
        error = error_of(await client.call_tool("get_recent_context", {"limit": 0}), "limit")
    for name in TOOLS:
        seed = {key: value for key, value in SEED["tools"][name]["inputSchema"].items() if key != "oneOf"}
        assert_seed_schema(listed[name].input_schema, seed, name)
    assert found["results"][0]["node_id"] == stored["node_id"]
    assert around["focal_point"] == [stored["node_id"]]
    assert error["code"] == -32602


# --- query counts -----------------------------------------------------------------------------------------------

def call(token: str, tool: str, arguments: dict) -> dict:
    """One tool call through the in-process client, on this thread (whose connection the counter watches)."""
    async def run():
        async with Client(build_server(PROFILES["context-graph"])) as client:
            return await client.call_tool(tool, arguments)

    with authenticated(authenticate_token(token)):
        result = async_to_sync(run)()
    return data_of(result)


def test_search_graph_query_count_is_flat(user, make_token, django_assert_max_num_queries):
    token = make_token(user)
    store_batch(user, 0, 1)
    flat(lambda: call(token, "search_graph", {"query": "lighthouse lamp station", "top_k": 50}),
         lambda start, count: store_batch(user, start, count),
         lambda data: len(data["results"]), django_assert_max_num_queries)


def test_neighborhood_query_count_is_flat(user, make_token, django_assert_max_num_queries):
    token = make_token(user)
    [focal] = memory_store_many(actor=user, items=[{"content": "The central lighthouse of the coast."}], link=False)
    focal_id = str(focal.memory.pk)

    def grow(start: int, count: int) -> None:
        store_batch(user, start, count)
        others = Memory.objects.filter(owner=user).exclude(pk=focal_id).values_list("pk", flat=True)
        memory_link_many(actor=user, source_id=focal_id, target_ids=[str(pk) for pk in others])

    grow(0, 1)
    flat(lambda: call(token, "get_neighborhood", {"focal_node_id": focal_id, "max_hops": 3, "max_nodes": 50}),
         grow, lambda data: len(data["nodes"]) - 1, django_assert_max_num_queries, shown_at_fifty=49)


def test_recent_context_query_count_is_flat(user, make_token, django_assert_max_num_queries):
    token = make_token(user)
    store_batch(user, 0, 1)
    flat(lambda: call(token, "get_recent_context", {"limit": 50}),
         lambda start, count: store_batch(user, start, count),
         lambda data: len(data["nodes"]), django_assert_max_num_queries)


def test_the_counter_sees_tool_queries(user, make_token):
    token = make_token(user)
    store_batch(user, 0, 1)
    with CaptureQueriesContext(connection) as counted:
        call(token, "search_graph", {"query": "lighthouse"})
    assert any("memories_memory" in query["sql"] for query in counted.captured_queries)

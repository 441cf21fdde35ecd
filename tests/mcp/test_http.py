"""The MCP edge over real HTTP: uvicorn serves config.asgi:application, the SDK's streamable HTTP
client talks to it with a bearer token."""
from __future__ import annotations

import httpx2
import pytest

from apps.accounts.services import token_create, token_revoke
from apps.mcp.asgi import McpEdge
from apps.mcp.profiles import PROFILES
from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import SEED_TOOLS, envelope, over_http, serving

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}}
JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def revoked_token(user):
    issued = token_create(actor=user, name="revoked", scopes=["read", "write"])
    token_revoke(actor=user, token_id=issued.token.pk)
    return issued.raw


@pytest.mark.parametrize("path", ["/mcp/thoughtmcp/", "/mcp/thoughtmcp"])
async def test_tools_list_and_a_round_trip(live_url, alice_token, seed_schemas, path):
    async with over_http(live_url + path, alice_token) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert set(tools) == set(SEED_TOOLS)
        for name in SEED_TOOLS:
            assert_seed_schema(tools[name], seed_schemas[name], name)
        stored = envelope(await client.call_tool("store_memory", {
            "userId": "alice", "content": "The deploy key lives in the team vault", "sessionId": "s1",
            "primarySector": "procedural"}))
        found = envelope(await client.call_tool("search_memories", {"userId": "alice", "text": "deploy key"}))
    assert [memory["id"] for memory in found["data"]["memories"]] == [stored["data"]["memoryId"]]


async def test_tool_calls_of_concurrent_requests_run_side_by_side(live_url, alice_token, monkeypatch):
    """Each call waits inside the service until the other is there too: run one at a time, the first would
    wait out the barrier's timeout and fail."""
    import asyncio
    import threading

    from apps.mcp.profiles.thoughtmcp import memories as adapters

    barrier, real = threading.Barrier(2, timeout=10), adapters.memory_search

    def meeting(**kwargs):
        barrier.wait()
        return real(**kwargs)

    monkeypatch.setattr(adapters, "memory_search", meeting)

    async def search() -> dict:
        async with over_http(live_url + "/mcp/thoughtmcp/", alice_token) as client:
            return envelope(await client.call_tool("search_memories", {"userId": "alice", "text": "vault"}))

    answers = await asyncio.gather(search(), search())
    assert [answer["success"] for answer in answers] == [True, True], answers


async def test_another_users_token_finds_nothing(live_url, bob_token, alice_memory):
    async with over_http(live_url + "/mcp/thoughtmcp/", bob_token) as client:
        found = envelope(await client.call_tool("retrieve_memories", {"userId": "bob", "text": "dark mode"}))
        refused = envelope(await client.call_tool("retrieve_memories", {"userId": "alice"}))
        missing = envelope(await client.call_tool("update_memory", {
            "userId": "bob", "memoryId": str(alice_memory.pk), "content": "changed"}))
    assert found["data"]["memories"] == []
    assert refused["error"] == "userId does not match the authenticated user"
    assert missing["error"] == "Memory not found"


@pytest.mark.parametrize("authorization", [None, "Bearer eng_not-a-real-token", "Basic YWxpY2U6cHc="])
async def test_requests_without_a_valid_token_get_401(live_url, authorization):
    headers = {**JSON_RPC_HEADERS, **({"Authorization": authorization} if authorization else {})}
    async with httpx2.AsyncClient() as http:
        response = await http.post(live_url + "/mcp/thoughtmcp/", json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"


async def test_revoked_token_gets_401(live_url, revoked_token):
    async with httpx2.AsyncClient() as http:
        response = await http.post(live_url + "/mcp/thoughtmcp/", json=INITIALIZE,
                                   headers={**JSON_RPC_HEADERS, "Authorization": f"Bearer {revoked_token}"})
    assert response.status_code == 401


async def test_foreign_host_is_refused(live_url, alice_token):
    headers = {**JSON_RPC_HEADERS, "Authorization": f"Bearer {alice_token}", "Host": "attacker.example"}
    async with httpx2.AsyncClient() as http:
        response = await http.post(live_url + "/mcp/thoughtmcp/", json=INITIALIZE, headers=headers)
    assert response.status_code == 421


@pytest.mark.parametrize("path", ["/mcp/", "/mcp"])
async def test_listing_names_every_profile(live_url, path):
    async with httpx2.AsyncClient() as http:
        response = await http.get(live_url + path)
    assert response.status_code == 200
    listed = response.json()["profiles"]
    assert [profile["name"] for profile in listed] == list(PROFILES)
    assert listed[0] == {
        "name": "thoughtmcp", "title": "ThoughtMCP", "description": PROFILES["thoughtmcp"].description,
        "url": f"{live_url}/mcp/thoughtmcp/", "transport": "streamable-http", "tools": 13,
    }
    assert {profile["name"]: profile["tools"] for profile in listed}["mind"] == 10


async def test_unknown_profile_is_404_with_the_list(live_url):
    async with httpx2.AsyncClient() as http:
        response = await http.post(live_url + "/mcp/nonesuch/", json=INITIALIZE, headers=JSON_RPC_HEADERS)
    assert response.status_code == 404
    assert response.json()["error"] == "Unknown MCP profile 'nonesuch'."
    assert [profile["name"] for profile in response.json()["profiles"]] == list(PROFILES)


async def test_everything_else_is_django(live_url):
    async with httpx2.AsyncClient() as http:
        response = await http.get(live_url + "/admin/login/")
    assert response.status_code == 200
    assert "csrfmiddlewaretoken" in response.text


async def test_a_server_without_lifespan_events_starts_the_edge_on_first_request(alice_token):
    with serving(McpEdge(), lifespan="off") as url:
        async with over_http(url + "/mcp/thoughtmcp/", alice_token) as client:
            result = envelope(await client.call_tool("retrieve_memories", {"userId": "alice"}))
    assert result["data"]["totalCount"] == 0

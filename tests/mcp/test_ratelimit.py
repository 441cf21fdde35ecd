"""The platform rate limit on MCP: every tool call of every profile spends the caller's budget (shared with
REST), a refusal is a clear error in the profile's own envelope, and HTTP answers carry the headers."""
from __future__ import annotations

import json

import httpx2
import pytest
from channels.db import database_sync_to_async
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from apps.core.ratelimit import rate_limit_take
from apps.mcp.profiles import PROFILES
from tests.api.test_ratelimit import DAY, limits  # noqa: F401 (limits is a fixture: the same small limits)
from tests.mcp.support import envelope, in_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

RETRIEVE = {"userId": "alice", "text": "anything"}


async def test_thoughtmcp_refuses_the_call_beyond_the_limit_in_its_envelope(limits, alice_token):
    async with in_process(alice_token) as client:
        answers = [envelope(await client.call_tool("retrieve_memories", RETRIEVE)) for _ in range(3)]
    assert [answer["success"] for answer in answers] == [True, True, False]
    refused = answers[2]
    assert refused["error"].startswith("Rate limit exceeded: at most 2 calls in 86400 seconds per user")
    assert "Retry in " in refused["error"]
    assert refused["suggestion"].startswith("Wait ") and refused["suggestion"].endswith(" before the next call.")


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_every_profile_shows_the_refusal_as_its_own_error(limits, settings, user, alice_token, profile):
    settings.ENGRAM_RATE_LIMIT_BURST = 1
    await database_sync_to_async(rate_limit_take)(user_id=user.pk)
    # The limit is checked before the arguments: any tool with any arguments is refused.
    async with in_process(alice_token, profile=profile) as client:
        result = await client.call_tool(PROFILES[profile].tools[0].name, {})
    assert result.is_error
    [block] = result.content
    text = block.text  # JSON for most profiles; Thoughtbox's errors are plain text
    assert "Rate limit exceeded: at most 1 call in 86400 seconds per user" in text
    assert "Retry in " in text


async def test_mind_and_memgos_name_the_error_by_their_codes(limits, settings, user, alice_token):
    settings.ENGRAM_RATE_LIMIT_BURST = 1
    await database_sync_to_async(rate_limit_take)(user_id=user.pk)
    async with in_process(alice_token, profile="mind") as client:
        mind = json.loads((await client.call_tool("mind_get_context", {"query": "deploy"})).content[0].text)
    async with in_process(alice_token, profile="memgos") as client:
        memgos = json.loads((await client.call_tool("search_memories", {"query": "deploy"})).content[0].text)
    assert mind["error"]["code"] == "RATE_LIMITED"
    assert mind["error"]["details"]["suggestion"].startswith("Wait ")
    assert memgos["success"] is False
    assert (memgos["error"]["type"], memgos["error"]["code"]) == ("rate_limit_error", "RATE_LIMITED")
    assert 1 <= memgos["error"]["details"]["retry_after"] <= DAY


async def test_mcp_and_rest_spend_one_budget(limits, alice_token, api):
    async with in_process(alice_token) as client:
        for _ in range(2):
            assert envelope(await client.call_tool("retrieve_memories", RETRIEVE))["success"]
    answer = await database_sync_to_async(api.get)("/api/v1/cubes/")
    assert answer.status_code == 429


@pytest.mark.parametrize("profile", ["thoughtmcp", "mind"])
async def test_http_answers_to_tool_calls_carry_the_limit_headers(limits, live_url, alice_token, profile):
    """thoughtmcp is served statelessly, mind statefully (it keeps a current session per client)."""
    tool_call_headers = []

    async def keep_tool_call_headers(response: httpx2.Response) -> None:
        if response.request.method == "POST" and b'"tools/call"' in response.request.content:
            tool_call_headers.append(response.headers)

    tool, arguments = {"thoughtmcp": ("retrieve_memories", RETRIEVE),
                       "mind": ("mind_get_context", {"query": "deploy"})}[profile]
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice_token}"}, timeout=60,
                                  event_hooks={"response": [keep_tool_call_headers]}) as http:
        async with Client(streamable_http_client(f"{live_url}/mcp/{profile}/", http_client=http)) as client:
            results = [await client.call_tool(tool, arguments) for _ in range(3)]
    assert [result.is_error for result in results] == [False, False, True]
    assert [headers["x-ratelimit-remaining"] for headers in tool_call_headers] == ["1", "0", "0"]
    assert [headers["x-ratelimit-limit"] for headers in tool_call_headers] == ["2", "2", "2"]
    assert all(1 <= int(headers["x-ratelimit-reset"]) <= DAY for headers in tool_call_headers)

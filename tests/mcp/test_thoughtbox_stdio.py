"""`manage.py mcp_stdio --profile thoughtbox`: the profile's tools, resources and prompts over stdio, with the
thoughts of one process landing in one session."""
from __future__ import annotations

import json

import pytest
from mcp.client import Client

from tests.mcp.support import stdio_parameters
from tests.mcp.thoughtbox_support import THOUGHTBOX_TOOLS, result_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_stdio_serves_thoughtbox(alice_token):
    async with Client(stdio_parameters(alice_token, profile="thoughtbox")) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        first = result_of(await client.call_tool("thoughtbox", {
            "thought": "Over stdio", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True,
            "sessionTitle": "Desktop client"}))
        second = result_of(await client.call_tool("thoughtbox", {
            "thought": "Still the same process", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": False}))
        index = json.loads((await client.read_resource("thoughtbox://init/sessions")).contents[0].text)
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
    assert tools == list(THOUGHTBOX_TOOLS)
    assert second["sessionId"] == first["sessionId"] and second["thoughtHistoryLength"] == 2
    assert [session["title"] for session in index["sessions"]] == ["Desktop client"]
    assert prompts == ["list_mcp_assets", "interleaved-thinking"]

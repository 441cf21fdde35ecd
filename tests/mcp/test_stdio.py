"""`manage.py mcp_stdio` as a subprocess, driven by the SDK's stdio client."""
from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings
from mcp.client import Client

from tests.mcp.schema_bounds import assert_seed_schema
from tests.mcp.support import SEED_TOOLS, envelope, stdio_parameters

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.asyncio
async def test_stdio_serves_the_profile_as_the_tokens_user(alice_token, alice_memory, seed_schemas):
    async with Client(stdio_parameters(alice_token)) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        found = envelope(await client.call_tool("retrieve_memories", {"userId": "alice", "text": "dark mode"}))
        refused = envelope(await client.call_tool("retrieve_memories", {"userId": "bob"}))
    assert set(tools) == set(SEED_TOOLS)
    for name in SEED_TOOLS:
        assert_seed_schema(tools[name], seed_schemas[name], name)
    assert [memory["id"] for memory in found["data"]["memories"]] == [str(alice_memory.pk)]
    assert refused["error"] == "userId does not match the authenticated user"


def run_command(raw_token: str) -> subprocess.CompletedProcess:
    parameters = stdio_parameters(raw_token)
    return subprocess.run([sys.executable, *parameters.args], cwd=settings.BASE_DIR, env=parameters.env, input="",
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("raw_token", "message"), [
    ("eng_not-a-real-token", "The token is invalid, expired or revoked"),
    ("", "Give an Engram API token with --token or $ENGRAM_TOKEN"),
])
def test_stdio_refuses_to_start_without_a_valid_token(raw_token, message):
    completed = run_command(raw_token)
    assert completed.returncode != 0
    assert message in completed.stderr
    assert completed.stdout == ""

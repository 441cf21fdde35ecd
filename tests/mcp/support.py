"""MCP test helpers: the ThoughtMCP seed's tool sections (memory, reasoning and metacognitive tools, from
tests/contracts/thoughtmcp.json), and the SDK's client in process, over real HTTP (uvicorn on a loopback port)
and over stdio (manage.py mcp_stdio)."""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import quote

import httpx2
import uvicorn
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CreateMessageResult, TextContent

from apps.mcp.auth import authenticate_token, authenticated
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server
from tests.contracts import contract

MEMORY_TOOLS = ("store_memory", "retrieve_memories", "update_memory", "delete_memory", "search_memories")
REASONING_TOOLS = ("think", "analyze_systematically", "think_parallel", "decompose_problem", "assess_confidence",
                   "detect_bias", "detect_emotion", "analyze_reasoning")
SEED_TOOLS = MEMORY_TOOLS + REASONING_TOOLS


def seed_sections() -> dict[str, dict]:
    """Each seed tool's section: its description and its JSON blocks by bold heading and qualifier."""
    tools = contract("thoughtmcp")["tools"]
    return {name: tools[name] for name in SEED_TOOLS}


def seed_json_blocks(section: dict, heading: str) -> dict[str, dict]:
    """Every JSON block of a section under the bold heading ``heading``, by the heading's qualifier
    ("**Example Request (Parallel):**" -> "Parallel"; "" when it has none)."""
    found = section["blocks"].get(heading)
    assert found, f"no {heading} block in the seed section"
    return found


def seed_json_block(section: dict, heading: str) -> dict:
    return next(iter(seed_json_blocks(section, heading).values()))


def envelope(result) -> dict:
    """The {success, ...} envelope of a ThoughtMCP or MemGOS tool result; its text and structured forms must agree,
    and isError its success."""
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    assert payload["success"] is not result.is_error
    return payload


@asynccontextmanager
async def in_process(raw_token: str, profile: str = "thoughtmcp"):
    """The SDK's client connected to a fresh profile server in this process, as the token's user."""
    access_token = await database_sync_to_async(authenticate_token)(raw_token)
    with authenticated(access_token):
        async with Client(build_server(PROFILES[profile])) as client:
            yield client


@asynccontextmanager
async def sampling_client(raw_token: str, reply: str, mode: str, profile: str):
    """The SDK's client, in process, whose sampling callback answers ``reply`` and keeps what it was asked. ``mode``
    is the client's protocol choice: "legacy" (handshake-era) or "auto" (2026-07-28)."""
    asked = []

    async def sample(context, params) -> CreateMessageResult:
        asked.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=reply), model="client-llm")

    access_token = await database_sync_to_async(authenticate_token)(raw_token)
    with authenticated(access_token):
        async with Client(build_server(PROFILES[profile]), mode=mode, sampling_callback=sample) as client:
            yield client, asked


@asynccontextmanager
async def over_http(url: str, raw_token: str | None):
    headers = {"Authorization": f"Bearer {raw_token}"} if raw_token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


def stdio_parameters(raw_token: str, profile: str = "thoughtmcp") -> StdioServerParameters:
    """manage.py mcp_stdio on this test run's database (committed data only: transaction=True)."""
    database = connection.settings_dict
    database_url = f"postgresql://{database['USER']}@{quote(database['HOST'], safe='')}/{database['NAME']}"
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--profile", profile, "--token", raw_token],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": database_url},
        cwd=str(settings.BASE_DIR),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(app, *, lifespan: str) -> Iterator[str]:
    """uvicorn serving ``app`` from a background thread on a free loopback port; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan=lifespan, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)

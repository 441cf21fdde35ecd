"""The MCP retrieve and search tools of every profile run as many queries at 50 items as at 1 (no N+1).

Tools run their services through ``run_sync`` (thread-sensitive outside the HTTP edge). Driving the in-process SDK
client with ``async_to_sync`` from the test's own thread makes those calls run on this thread, so they use
this thread's connection, the one the query counter watches. ``test_the_counter_sees_tool_queries`` proves
it: a tool call is not counted as zero queries. Thoughtbox has no search tool.
"""
import json

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext
from mcp.client import Client

from apps.mcp.auth import authenticate_token, authenticated
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server
from apps.projects.services.entities import issue_add
from apps.projects.services.projects import project_create
from tests.query_counts import flat, store_batch

# Tool threads hold their own transactions; a transactional test commits what they must see.
pytestmark = pytest.mark.django_db(transaction=True)


def call(token: str, profile: str, tool: str, arguments: dict) -> dict:
    """One tool call through the SDK's in-process client, on this thread; the tool's JSON result."""
    async def run():
        async with Client(build_server(PROFILES[profile])) as client:
            return await client.call_tool(tool, arguments)

    with authenticated(authenticate_token(token)):
        result = async_to_sync(run)()
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_the_counter_sees_tool_queries(user, make_token):
    token = make_token(user)
    store_batch(user, 0, 1)
    with CaptureQueriesContext(connection) as counted:
        call(token, "thoughtmcp", "search_memories", {"userId": user.username, "text": "lighthouse"})
    # Scope, search, total and the client-session upsert at least: a counter on another thread would see 0.
    assert len(counted) >= 3
    assert any("memories_memory" in query["sql"] for query in counted.captured_queries)


@pytest.mark.parametrize("tool, arguments", [
    ("retrieve_memories", {"text": "lighthouse lamp station", "limit": 50}),
    ("search_memories", {"text": "lighthouse AND lamp", "limit": 50}),
    ("search_memories", {"metadata": {"tags": ["lighthouse"]}, "limit": 50}),
])
def test_thoughtmcp(user, make_token, django_assert_max_num_queries, tool, arguments):
    token = make_token(user)
    store_batch(user, 0, 1)
    flat(lambda: call(token, "thoughtmcp", tool, {"userId": user.username, **arguments}),
         lambda start, count: store_batch(user, start, count),
         lambda data: len(data["data"]["memories"]), django_assert_max_num_queries)


@pytest.mark.parametrize("tool, top_k, shown", [("search_memories", 50, 50), ("context_search", 20, 20)])
def test_memgos(user, make_token, django_assert_max_num_queries, tool, top_k, shown):
    token = make_token(user)
    store_batch(user, 0, 1)
    flat(lambda: call(token, "memgos", tool, {"query": "lighthouse lamp station", "top_k": top_k}),
         lambda start, count: store_batch(user, start, count),
         _memgos_rows, django_assert_max_num_queries, shown_at_fifty=shown)


def _memgos_rows(data: dict) -> int:
    # search_memories groups by cube ({"results": {"text_mem": [{"memories": [...]}]}}); context_search is flat.
    if "context" in data:
        return len(data["context"])
    return sum(len(group["memories"]) for group in data["results"]["text_mem"])


def test_mind_get_context(user, make_token, django_assert_max_num_queries):
    token = make_token(user)
    project = project_create(actor=user, name="Lighthouses")

    def grow(start, count):
        for n in range(start, start + count):
            issue_add(actor=user, project_id=project.pk, title=f"Lamp {n} flickers at station {n}",
                      description=f"The lighthouse lamp at station {n} flickers after midnight")

    grow(0, 1)
    # The context keeps each kind's best 10.
    flat(lambda: call(token, "mind", "mind_get_context", {"query": "lighthouse lamp flickers", "types": ["issue"]}),
         grow, lambda data: len(data["issues"]), django_assert_max_num_queries, shown_at_fifty=10)

"""`manage.py mcp_stdio --profile context-graph`: a desktop client stores a node, gets it back in a budgeted
context with its citation tag, reads the pulse resource, and every answer carries the pulse."""
from __future__ import annotations

import json
import uuid

import pytest
from mcp.client import Client

from tests.mcp.support import stdio_parameters

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _answer(result) -> dict:
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    return payload


async def test_stdio_serves_context_graph(alice_token):
    session = str(uuid.uuid4())
    async with Client(stdio_parameters(alice_token, profile="context-graph")) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        stored = _answer(await client.call_tool("store_memory", {
            "content": "The staging database restarts every night at two.",
            "rationale": "Night restarts explain the failed two o'clock jobs on staging."}))
        context = _answer(await client.call_tool("inject_context", {
            "query": "when does the staging database restart", "session_id": session, "max_tokens": 100}))
        refused = await client.call_tool("get_node_lineage", {"node_id": "not-a-uuid"})
        pulse = json.loads((await client.read_resource("utl://current_session/pulse")).contents[0].text)
    assert len(tools) == 35 and {"inject_context", "merge_concepts", "restore_from_hash", "trigger_dream",
                                 "test_recall_accuracy"} <= tools
    assert stored["success"] is True and set(stored["pulse"]) == {"entropy", "coherence", "suggested"}
    assert stored["node_id"] in context["nodes_retrieved"]
    assert f"[node_{stored['node_id'].replace('-', '')[:12]}]" in context["context"]
    assert context["tokens_used"] <= 100
    assert refused.is_error
    error = _answer(refused)
    assert (error["error"]["code"], error["error"]["data"]["field"]) == (-32602, "node_id") and "pulse" in error
    assert pulse["entropy"] == context["utl_metrics"]["entropy"]

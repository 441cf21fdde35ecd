"""Calling a Context Graph tool through the SDK client and reading its answer: every answer, errors too, carries
the pulse, and its text is its structured content."""
from __future__ import annotations

import json

PULSE = {"entropy", "coherence", "suggested"}


def payload(result) -> dict:
    [block] = result.content
    data = json.loads(block.text)
    assert data == result.structured_content
    assert set(data["pulse"]) == PULSE
    return data


async def ok(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)  # the client validates it against the tool's outputSchema
    data = payload(result)
    assert result.is_error is False, data
    return data


async def refused(client, tool: str, arguments: dict, code: int, field: str) -> dict:
    result = await client.call_tool(tool, arguments)
    data = payload(result)
    assert result.is_error is True and data["success"] is False, data
    error = data["error"]
    assert (error["code"], error["data"]["field"]) == (code, field), error
    assert error["message"].strip() and error["data"]["suggestion"].strip()
    assert "Traceback" not in json.dumps(error)
    return error

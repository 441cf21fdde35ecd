"""Response envelopes: how a profile wraps a tool's data or failure into an MCP tool result. Each profile's own
envelope lives in its package (``apps/mcp/profiles/<profile>/envelope.py``); this is what they share.

An envelope turns adapter output (a plain dict) or a ``ToolFailure`` into a ``CallToolResult``:
one text block with the JSON (what every MCP client shows), the same object as structured
content, and ``isError`` on failures.
"""
from __future__ import annotations

import json
from typing import Any, Protocol

from mcp_types import CallToolResult, TextContent

from apps.mcp.errors import ToolFailure


class Envelope(Protocol):
    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        ...

    def failure(self, failure: ToolFailure) -> CallToolResult:
        ...


def tool_result(payload: dict[str, Any], *, is_error: bool) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def check_field_suggestion(failure: ToolFailure) -> str:
    """The suggestion of last resort: look again at the field at fault, or at the schema."""
    return f"Check {failure.field} and try again." if failure.field else "Check the tool's input schema."

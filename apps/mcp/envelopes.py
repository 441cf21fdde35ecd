"""Response envelopes: how each profile wraps a tool's data or failure into an MCP tool result.

An envelope turns adapter output (a plain dict) or a ``ToolFailure`` into a ``CallToolResult``:
one text block with the JSON (what every MCP client shows), the same object as structured
content, and ``isError`` on failures.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Protocol

from mcp_types import CallToolResult, TextContent

from apps.mcp.errors import MISSING_PARAMETER, ToolFailure
from apps.memories.models import SECTORS


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


def iso_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, to the millisecond (the form JavaScript clients produce and parse)."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ThoughtMcpEnvelope:
    """ThoughtMCP's MCPResponse: {success, data, metadata} or {success: false, error, suggestion}."""

    # The "Solution" column of the seed's error table, for the messages that start with its phrases.
    SOLUTIONS = {
        MISSING_PARAMETER: "Check input schema for required fields",
        "Memory not found": "Verify memoryId exists and belongs to user",
        "Content cannot be empty": "Provide non-empty content",
        "Invalid sector": f"Use: {', '.join(SECTORS)}",
    }

    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        metadata = {
            "timestamp": iso_timestamp(datetime.now(timezone.utc)),
            "processingTime": processing_ms,
            "componentsUsed": list(components_used),
        }
        return tool_result({"success": True, "data": data, "metadata": metadata}, is_error=False)

    def failure(self, failure: ToolFailure) -> CallToolResult:
        return tool_result({"success": False, "error": failure.message, "suggestion": self._suggestion(failure)},
                           is_error=True)

    def _suggestion(self, failure: ToolFailure) -> str:
        solution = next((text for phrase, text in self.SOLUTIONS.items() if failure.message.startswith(phrase)), None)
        parts = [part for part in (solution, failure.suggestion) if part]
        if not parts:
            parts = [f"Check {failure.field} and try again." if failure.field else "Check the tool's input schema."]
        return ". ".join(part.rstrip(".") for part in parts) + "."

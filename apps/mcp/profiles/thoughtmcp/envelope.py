"""ThoughtMCP's answers: its MCPResponse, {success, data, metadata} or {success: false, error, suggestion}."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from mcp_types import CallToolResult

from apps.core.timestamps import iso_timestamp
from apps.mcp.envelopes import check_field_suggestion, tool_result
from apps.mcp.errors import MISSING_PARAMETER, ToolFailure
from apps.memories.models import SECTORS


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
            parts = [check_field_suggestion(failure)]
        # The envelope has no field of its own: the suggestion names the argument at fault when nothing else does.
        if failure.field and not any(failure.field in text for text in (failure.message, *parts)):
            parts.append(f"The argument at fault is {failure.field}")
        return ". ".join(part.rstrip(".") for part in parts) + "."

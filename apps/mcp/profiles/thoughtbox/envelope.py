"""Thoughtbox's answers: the tool's result as JSON (with embedded resources in ``_meta``), or ``isError`` with the
seed's error code and how to fix it."""
from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent

from apps.mcp.envelopes import check_field_suggestion, tool_result
from apps.mcp.errors import ToolFailure


class ThoughtboxEnvelope:
    """Thoughtbox's answers: one text block with the tool's result as JSON (also as structured content), and
    ``_meta.embeddedResources`` when the adapter embeds resources (the patterns cookbook): an adapter returns them
    under ``EMBEDDED_RESOURCES``, in the seed's Embedded Resource Format. A failure is ``isError`` with a text that
    starts with the seed's error code and says how to fix it."""

    # Domain error codes (the reasoning services, apps.core.exceptions) -> the seed's error codes.
    CODES = {
        "session_not_found": "SESSION_NOT_FOUND",
        "thought_not_found": "THOUGHT_NOT_FOUND",
        "notebook_not_found": "NOTEBOOK_NOT_FOUND",
        "cell_not_found": "CELL_NOT_FOUND",
        "model_not_found": "MODEL_NOT_FOUND",
        "execution_failed": "EXECUTION_FAILED",
        "execution_disabled": "EXECUTION_FAILED",
        "export_failed": "EXPORT_FAILED",
        "invalid_input": "VALIDATION_ERROR",
        "rate_limited": "RATE_LIMITED",
        "permission_denied": "PERMISSION_DENIED",
        "conflict": "CONFLICT",
        "not_found": "NOT_FOUND",
    }
    # The seed's "Resolution" column, for when the error itself does not say what to do.
    RESOLUTIONS = {
        "SESSION_NOT_FOUND": "Check the session exists (thoughtbox://init/sessions lists yours) or let thought 1 "
                             "auto-create one.",
        "THOUGHT_NOT_FOUND": "Verify the thought number exists in this session.",
        "NOTEBOOK_NOT_FOUND": "Check the notebook id from the notebook tool's `list` operation.",
        "CELL_NOT_FOUND": "Check the cell id from the notebook tool's `list_cells` operation.",
        "MODEL_NOT_FOUND": "Use mental_models `list_models` to see the available models.",
        "EXECUTION_FAILED": "Check the code's syntax and the notebook's dependencies.",
        "EXPORT_FAILED": "Check the export destination can be written.",
    }
    # Domain codes that share a seed code, and what to add so the caller can tell them apart.
    QUALIFIERS = {"execution_disabled": "execution disabled"}
    EMBEDDED_RESOURCES = "_embeddedResources"

    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        result = {key: value for key, value in data.items() if key != self.EMBEDDED_RESOURCES}
        answer = tool_result(result, is_error=False)
        embedded = data.get(self.EMBEDDED_RESOURCES)
        return answer.model_copy(update={"meta": {"embeddedResources": embedded}}) if embedded else answer

    def failure(self, failure: ToolFailure) -> CallToolResult:
        code = self.CODES.get(failure.code) or self.CODES.get(failure.kind, "INTERNAL_ERROR")
        fix = failure.suggestion or self.RESOLUTIONS.get(code) or check_field_suggestion(failure)
        error = {"code": code, "message": failure.message, "suggestion": fix}
        if failure.field:
            error["field"] = failure.field
        qualifier = f" ({self.QUALIFIERS[failure.code]})" if failure.code in self.QUALIFIERS else ""
        return CallToolResult(
            content=[TextContent(type="text", text=f"{code}{qualifier}: {failure.message.rstrip('.')}. {fix}")],
            structured_content={"error": error}, is_error=True,
        )


def embedded_resource(*, uri: str, text: str, mime_type: str = "text/markdown") -> dict[str, Any]:
    """One entry of ``_meta.embeddedResources``, for the model (the seed's audience "llm")."""
    return {"uri": uri, "mimeType": mime_type, "text": text, "annotations": {"audience": ["llm"]}}

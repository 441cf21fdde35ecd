"""Mind's answers: the tool's data object itself, or {error: {code, message, details}} with the seed's error codes."""
from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult

from apps.mcp.envelopes import check_field_suggestion, tool_result
from apps.mcp.errors import ToolFailure


class MindEnvelope:
    """Mind's answers: the tool's data object itself, or {error: {code, message, details}} with the seed's
    error codes. ``details`` carries the field at fault and a suggestion of what to do."""

    # Domain error codes (apps.core.exceptions and the project services) -> the seed's codes.
    CODES = {
        "project_not_found": "PROJECT_NOT_FOUND",
        "session_not_active": "SESSION_NOT_ACTIVE",
        "invalid_input": "VALIDATION_ERROR",
        "permission_denied": "FORBIDDEN",
        "conflict": "CONFLICT",
        "rate_limited": "RATE_LIMITED",
    }
    # What to do about each seed error, when the error itself does not say.
    SUGGESTIONS = {
        "PROJECT_NOT_FOUND": "Use the id of one of your projects (mind_start_session returns it), or start a "
                             "session with project_name to find or create the project by name.",
        "SESSION_NOT_ACTIVE": "Call mind_start_session (with project_id, project_name or detect_from_path) first.",
        "ENTITY_NOT_FOUND": "Use an id that a Mind tool returned for one of your projects.",
    }
    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        return tool_result(data, is_error=False)

    def failure(self, failure: ToolFailure) -> CallToolResult:
        code = self.code_of(failure.code)
        details = {"field": failure.field} if failure.field else {}
        details["suggestion"] = self._suggestion(failure, code)
        return tool_result({"error": {"code": code, "message": failure.message, "details": details}}, is_error=True)

    @classmethod
    def code_of(cls, code: str) -> str:
        if code in cls.CODES:
            return cls.CODES[code]
        # Every other "not found" is about an entity the caller named (an issue, a decision, an edge).
        return "ENTITY_NOT_FOUND" if code.endswith("not_found") else "INTERNAL_ERROR"

    def _suggestion(self, failure: ToolFailure, code: str) -> str:
        return failure.suggestion or self.SUGGESTIONS.get(code) or check_field_suggestion(failure)

"""MemGOS's answers: {"success": true, ...the tool's fields}, or {"success": false, "error": {...}} with the seed's
error types."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from mcp_types import CallToolResult

from apps.core.timestamps import iso_timestamp
from apps.mcp.envelopes import check_field_suggestion, tool_result
from apps.mcp.errors import MISSING_PARAMETER, ToolFailure


class MemGosEnvelope:
    """MemGOS's answers: {"success": true, ...the tool's fields}, or {"success": false, "error": {type, message,
    code, details, timestamp}} with the seed's error types. ``details.parameter`` names the argument at fault;
    a rate limit's details say when to retry."""

    # Kinds of domain error (apps.core.exceptions, and chat's model backend) -> the seed's error type and code.
    KINDS = {
        "invalid_input": ("validation_error", "INVALID_PARAMETER"),
        "not_found": ("not_found_error", "NOT_FOUND"),
        "conflict": ("validation_error", "CONFLICT"),
        "permission_denied": ("authorization_error", "FORBIDDEN"),
        "rate_limited": ("rate_limit_error", "RATE_LIMITED"),
        "llm_unavailable": ("network_error", "LLM_UNAVAILABLE"),
    }
    UNAUTHENTICATED = "Authentication required"

    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        return tool_result({"success": True, **data}, is_error=False)

    def failure(self, failure: ToolFailure) -> CallToolResult:
        kind, code = self._kind(failure)
        details: dict[str, Any] = {"parameter": failure.field} if failure.field else {}
        details.update(failure.extra)
        # Every failure says what to do about it; the seed's details object is free-form.
        details["suggestion"] = failure.suggestion or check_field_suggestion(failure)
        error = {"type": kind, "message": self._message(failure, code), "code": code, "details": details,
                 "timestamp": iso_timestamp(datetime.now(timezone.utc))}
        return tool_result({"success": False, "error": error}, is_error=True)

    def _kind(self, failure: ToolFailure) -> tuple[str, str]:
        if failure.message.startswith(MISSING_PARAMETER):
            return "validation_error", "MISSING_PARAMETER"
        if failure.kind == "permission_denied" and failure.message.startswith(self.UNAUTHENTICATED):
            return "authentication_error", "UNAUTHENTICATED"
        return self.KINDS.get(failure.kind or failure.code, ("internal_error", "INTERNAL_ERROR"))

    @staticmethod
    def _message(failure: ToolFailure, code: str) -> str:
        """The seed's wording for missing arguments: "Required parameter 'query' is missing"."""
        if code != "MISSING_PARAMETER":
            return failure.message
        names = [f"'{name}'" for name in failure.message.split(":", 1)[1].strip().split(", ")]
        return f"Required parameter {names[0]} is missing" if len(names) == 1 else \
            f"Required parameters {', '.join(names)} are missing"

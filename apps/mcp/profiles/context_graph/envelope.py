"""Context Graph's answers: the tool's data object (with ``success`` where the seed has it), or ``isError`` with
{success: false, error: {code, message, data: {field, reason, suggestion}}} and the JSON-RPC codes of the seed's
family. The pulse is added to both by the profile's ``after_call`` (pulse.py), which can read the database."""
from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult

from apps.mcp.envelopes import check_field_suggestion, tool_result
from apps.mcp.errors import ToolFailure

INVALID_PARAMS = -32602
SESSION_NOT_FOUND = -32000
REFUSED = -32001
STORAGE = -32002
# A concept named in words that matches none of the caller's nodes (the error names the nearest).
CONCEPT_UNRESOLVED = -32003
RATE_LIMITED = -32004
INTERNAL = -32603


class ContextGraphEnvelope:
    # Domain error codes (specific first, then the error's class) -> the seed family's JSON-RPC codes.
    CODES = {
        "session_not_found": SESSION_NOT_FOUND,
        "concept_unresolved": CONCEPT_UNRESOLVED,
        "database_unavailable": STORAGE,
        "rate_limited": RATE_LIMITED,
        "invalid_input": INVALID_PARAMS,
        "not_found": INVALID_PARAMS,
        "permission_denied": REFUSED,
        "conflict": REFUSED,
        "unavailable": STORAGE,
    }

    def success(self, data: dict[str, Any], *, components_used: tuple[str, ...], processing_ms: int) -> CallToolResult:
        return tool_result(data, is_error=False)

    def failure(self, failure: ToolFailure) -> CallToolResult:
        code = self.CODES.get(failure.code) or self.CODES.get(failure.kind, INTERNAL)
        data: dict[str, Any] = {"field": failure.field, "reason": failure.code,
                                "suggestion": failure.suggestion or check_field_suggestion(failure)}
        data.update(failure.extra)
        return tool_result({"success": False, "error": {"code": code, "message": failure.message, "data": data}},
                           is_error=True)

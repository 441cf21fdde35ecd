"""The one place where the MCP edge turns exceptions into tool failures.

Every profile's envelope renders a ``ToolFailure``; nothing else in the edge inspects exceptions.
Messages of domain errors are already written for the caller (and follow the ThoughtMCP seed where
it has one); argument validation errors are phrased here, naming the field at fault.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field as dataclass_field

from django.db import OperationalError
from pydantic import ValidationError

from apps.core.exceptions import DomainError, database_unavailable, is_vector_mismatch, vectors_switched

MISSING_PARAMETER = "Missing required parameter"
UNKNOWN_PARAMETER = "Unknown parameter"
INTERNAL_ERROR = "Internal server error"
# Messages quote what the caller sent; a value of thousands of characters is quoted by its start, so that the
# message stays readable (and a 100k-character argument is not sent back twice, as text and structured content).
QUOTED_CHARS = 80
MESSAGE_CHARS = 1000
_LONG_QUOTE = re.compile("'([^']{%d})[^']+'" % QUOTED_CHARS)


@dataclass(frozen=True)
class ToolFailure:
    message: str
    code: str
    field: str | None = None
    suggestion: str | None = None
    # What else the error says, for envelopes that show details (a rate limit's retry_after, limit, reset_seconds).
    extra: dict = dataclass_field(default_factory=dict)
    # A domain error's class (NotFound "not_found", Conflict "conflict", ...), whatever specific code it carries.
    kind: str = ""


def tool_failure(exc: Exception, *, naming: str = "camelCase") -> ToolFailure:
    """``naming`` is how the tool's argument names are spelt on the wire (camelCase or snake_case), for the
    suggestion about an unknown argument."""
    if isinstance(exc, OperationalError):  # logged by the caller, like any error that is not a DomainError
        exc = database_unavailable()
    elif is_vector_mismatch(exc):
        exc = vectors_switched()
    if isinstance(exc, DomainError):
        extra = {key: value for key, value in exc.extra.items() if key not in ("field", "suggestion")}
        suggestion = exc.extra.get("suggestion")
        return ToolFailure(message=_readable(exc.message), code=exc.code, field=exc.extra.get("field"),
                           suggestion=_readable(suggestion) if suggestion else None, extra=extra, kind=type(exc).code)
    if isinstance(exc, ValidationError):
        return _argument_failure(exc, naming)
    # Whatever went wrong stays in the server log: a client never sees internals.
    return ToolFailure(message=INTERNAL_ERROR, code="internal_error",
                       suggestion="Try again; if it keeps failing, tell the Engram operator.")


def _readable(message: str) -> str:
    message = _LONG_QUOTE.sub(lambda match: f"'{match.group(1)}…'", message)
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + "…"


def _argument_failure(exc: ValidationError, naming: str) -> ToolFailure:
    errors = exc.errors(include_url=False)
    missing = [_field_path(error["loc"]) for error in errors if error["type"] == "missing"]
    if missing:
        return ToolFailure(message=f"{MISSING_PARAMETER}: {', '.join(missing)}", code="invalid_input",
                           field=missing[0], suggestion=f"Provide {', '.join(missing)}.")
    first = errors[0]
    field = _field_path(first["loc"])
    if first["type"] == "extra_forbidden":
        return ToolFailure(message=f"{UNKNOWN_PARAMETER}: {field}", code="invalid_input", field=field,
                           suggestion=f"Remove {field}: the tool's input schema does not have it (names are {naming}).")
    return ToolFailure(message=f"Invalid {field}: {first['msg']}", code="invalid_input", field=field,
                       suggestion=f"Send {field} as the tool's input schema describes.")


def _field_path(loc: tuple) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path

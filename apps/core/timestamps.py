"""How Engram writes a moment for clients: one form in MCP answers, exports and the shapes services build, so
that what one edge writes another can compare. Services and edges both use it, so it lives in core."""
from __future__ import annotations

from datetime import datetime, timezone


def iso_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, to the millisecond (the form JavaScript clients produce and parse)."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_or_none(moment: datetime | None) -> str | None:
    """``iso_timestamp``, or None for a moment that never happened (a user who never logged in)."""
    return iso_timestamp(moment) if moment is not None else None

"""Every numeric bound of Engram's inputs, in one place.

Services clean their numbers with these ranges (``Range`` for whole numbers, ``Interval`` for fractions),
and every edge reads the same range rather than writing its own: REST serializers (``.drf()``), MCP input
models (``.schema()``), dashboard forms (``Range.form()``) and the docs. A number outside a range is an
InvalidInput that names the field and the range, never a value handed on to PostgreSQL (whose bigint
overflows at 2^63) or to a loop.
"""
from __future__ import annotations

from dataclasses import dataclass

from apps.core.exceptions import InvalidInput


@dataclass(frozen=True)
class Range:
    """A closed range of whole numbers, with the default an edge fills in when the field is left out."""

    low: int
    high: int
    default: int | None = None

    def __str__(self) -> str:
        return f"from {self.low} to {self.high}"

    def clean(self, value, *, field: str) -> int:
        """The value as an int (a JSON 3.0 is 3; true, "3", 3.5 and NaN are refused), or InvalidInput."""
        if value is None and self.default is not None:
            return self.default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise InvalidInput(f"{field} must be a whole number {self}.", field=field)
        if value in (float("inf"), float("-inf")) or int(value) != value:
            raise InvalidInput(f"{field} must be a whole number {self}, got {value}.", field=field)
        if not self.low <= value <= self.high:
            raise InvalidInput(f"{field} must be {self}, got {value!r}.", field=field)
        return int(value)

    def drf(self) -> dict:
        """Keyword arguments for a DRF IntegerField (and so the OpenAPI minimum/maximum), whose messages then give
        the range too ("A valid integer is required." did not say which)."""
        message = f"Use a whole number {self}."
        return {"min_value": self.low, "max_value": self.high,
                "error_messages": {"invalid": message, "min_value": message, "max_value": message,
                                   "max_string_length": message}}

    def schema(self) -> dict:
        """Keyword arguments for a pydantic Field (and so the MCP inputSchema's minimum/maximum)."""
        return {"ge": self.low, "le": self.high}

    def form(self) -> dict:
        """Keyword arguments for a Django forms.IntegerField, whose messages then give the range too."""
        message = f"Use a whole number {self}."
        return {"min_value": self.low, "max_value": self.high,
                "error_messages": {"invalid": message, "min_value": message, "max_value": message}}


@dataclass(frozen=True)
class Interval:
    """A closed range of numbers, fractions included."""

    low: float
    high: float

    def __str__(self) -> str:
        return f"between {self.low:g} and {self.high:g}"

    def clean(self, value, *, field: str) -> float | None:
        """The value as a float (None stays None; true and "0.5" are refused), or InvalidInput."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidInput(f"{field} must be a number {self}.", field=field)
        if not self.low <= float(value) <= self.high:
            raise InvalidInput(f"{field} must be {self}, got {value}.", field=field)
        return float(value)

    def drf(self) -> dict:
        """Keyword arguments for a DRF FloatField (and so the OpenAPI minimum/maximum)."""
        return {"min_value": self.low, "max_value": self.high}

    def schema(self) -> dict:
        """Keyword arguments for a pydantic Field (and so the MCP inputSchema's minimum/maximum)."""
        return {"ge": self.low, "le": self.high}


# Memories stored by one batch call (REST's memories/batch/): one model call embeds them all.
BATCH_SIZE = Range(1, 100)

# Pagination of lists, searches and histories. Nobody pages ten thousand items deep; the bound keeps a
# retrieval's candidate pool and every SQL OFFSET small (an unbounded offset overflowed bigint).
PAGE_LIMIT = Range(1, 100, default=10)
OFFSET = Range(0, 10_000, default=0)
# A chat session's history, one page at a time.
HISTORY_LIMIT = Range(1, 1000, default=50)

# Memory-augmented chat: how many memories an answer draws on, and how long it may be.
CHAT_TOP_K = Range(1, 10, default=3)
CHAT_MAX_TOKENS = Range(50, 4000, default=500)

# An id of a table keyed by bigint (live-graph events): what a client may say it saw last.
EVENT_ID = Range(0, 2**63 - 1)

# A page of a REST list (tokens, cubes, projects, sessions, notebooks, ...): its `limit`; `offset` is OFFSET.
LIST_LIMIT = Range(1, 100, default=20)
# The live graph's snapshot: how many nodes, newest first (the page draws every one).
SNAPSHOT_NODES = Range(1, 10_000, default=2000)
# A memory's local graph: the memories within this many links of it, and at most this many of them (it included),
# nearest first, then the strongest paths (a page draws them all in a small frame).
NEIGHBOURHOOD_DEPTH = Range(1, 3, default=1)
NEIGHBOURHOOD_NODES = Range(1, 500, default=150)
# Mind's context: items per kind (decisions, issues, sharp edges, episodes).
CONTEXT_LIMIT = Range(1, 50, default=10)

# Thoughtbox's thoughtNumber, totalThoughts, revisesThought and branchFromThought (an int column in PostgreSQL).
THOUGHT_NUMBER = Range(1, 100_000)
# Where a new notebook cell goes: 0 (first) to the notebook's count (last); a notebook holds at most 500 cells.
CELL_POSITION = Range(0, 499)
# ThoughtMCP's think_parallel timeout, in milliseconds, and decompose_problem's depth.
PARALLEL_TIMEOUT_MS = Range(1000, 60_000, default=30_000)
DECOMPOSE_DEPTH = Range(1, 5, default=3)
# An API token's lifetime in days, where an edge asks for days (the dashboard's token form); a century, and
# beyond it the expiry date overflows.
TOKEN_EXPIRY_DAYS = Range(1, 36_500)

# A fraction from 0 to 1: a memory's importance, salience and strength, their minimums in a query, a link's weight.
UNIT = Interval(0.0, 1.0)
# Context Graph's boost_importance: the factor a node's importance is multiplied by (below 1 lowers it).
BOOST_FACTOR = Interval(0.1, 2.0)

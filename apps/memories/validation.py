"""Input rules shared by every edge: services call these, so REST, MCP, pages and commands say the same.

Messages follow the ThoughtMCP seed where it has one ("Content cannot be empty", "Invalid sector"); fields are
named as the services' keyword arguments, which each edge renames to its caller's names (apps/core/aliases.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.core.exceptions import InvalidInput
from apps.core.limits import OFFSET, PAGE_LIMIT, UNIT
from apps.cubes.validation import is_cube_id
from apps.memories.models import SECTORS

# The memory core's text bounds, read by the services and by every edge's schema.
MAX_LIST_ITEMS = 50
MAX_LABEL_CHARS = 100
MAX_CONTEXT_CHARS = 2000
MAX_ID_CHARS = 200
MAX_QUERY_CHARS = 2000


def clean_content(value, *, field_name: str = "content", max_chars: int | None = None) -> str:
    """``max_chars``: a caller's own limit (Context Graph's seed stores 65,536 characters); by default this
    server's ENGRAM_MAX_CONTENT_CHARS."""
    if not isinstance(value, str):
        raise InvalidInput("Content must be a string.", field=field_name)
    if "\x00" in value:
        raise InvalidInput("Content cannot contain NUL bytes (\\u0000): remove them.", field=field_name)
    value = value.strip()
    if not value:
        raise InvalidInput("Content cannot be empty", field=field_name)
    if max_chars is not None:
        if len(value) > max_chars:
            raise InvalidInput(f"Content is {len(value)} characters long; the limit is {max_chars}. Split it into "
                               "several memories.", field=field_name, extra={"limit": max_chars})
        return value
    limit = settings.ENGRAM_MAX_CONTENT_CHARS
    if len(value) > limit:
        raise InvalidInput(
            f"Content is {len(value)} characters long; the limit is {limit} (this server's ENGRAM_MAX_CONTENT_CHARS "
            f"setting). Split it into several memories.",
            field=field_name, extra={"limit": limit, "setting": "ENGRAM_MAX_CONTENT_CHARS"},
        )
    return value


def clean_sector(value, *, field_name: str = "primary_sector") -> str:
    if value not in SECTORS:
        raise InvalidInput(f"Invalid sector {value!r}: use one of {', '.join(SECTORS)}.", field=field_name)
    return value


def clean_sectors(values, *, field_name: str = "sectors") -> list[str]:
    if values is None:
        return list(SECTORS)
    if not isinstance(values, (list, tuple)):
        raise InvalidInput(f"{field_name} must be a list of sectors.", field=field_name)
    if not values:
        raise InvalidInput(f"{field_name} cannot be empty: leave it out to search all sectors.", field=field_name)
    return list(dict.fromkeys(clean_sector(v, field_name=field_name) for v in values))


def clean_unit(value, *, field_name: str) -> float | None:
    return UNIT.clean(value, field=field_name)


def clean_labels(values, *, field_name: str) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{field_name} must be a list of strings.", field=field_name)
    if len(values) > MAX_LIST_ITEMS:
        raise InvalidInput(f"{field_name} has {len(values)} items; at most {MAX_LIST_ITEMS}.", field=field_name)
    cleaned = []
    for value in values:
        value = value.strip()
        if "\x00" in value:
            raise InvalidInput(f"{field_name} cannot contain NUL bytes.", field=field_name)
        if len(value) > MAX_LABEL_CHARS:
            raise InvalidInput(f"Each of {field_name} has at most {MAX_LABEL_CHARS} characters.", field=field_name)
        if value:
            cleaned.append(value)
    return list(dict.fromkeys(cleaned))


def clean_text(value, *, field_name: str, max_chars: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be a string.", field=field_name)
    if "\x00" in value:
        raise InvalidInput(f"{field_name} cannot contain NUL bytes.", field=field_name)
    if len(value) > max_chars:
        raise InvalidInput(f"{field_name} has at most {max_chars} characters.", field=field_name)
    return value.strip()


def clean_query(text) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        raise InvalidInput("text must be a string.", field="text")
    if "\x00" in text:
        raise InvalidInput("text cannot contain NUL bytes.", field="text")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"text has at most {MAX_QUERY_CHARS} characters.", field="text")
    return text.strip()


def clean_datetime(value, *, field_name: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        if parsed is None:
            raise InvalidInput(
                f"{field_name} is not an ISO 8601 date-time (e.g. 2025-12-07T10:30:00Z): {value!r}.", field=field_name
            )
    else:
        raise InvalidInput(f"{field_name} must be an ISO 8601 date-time string.", field=field_name)
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.utc)
    return parsed


def clean_limit(value, *, default: int = PAGE_LIMIT.default) -> int:
    return default if value is None else PAGE_LIMIT.clean(value, field="limit")


def clean_offset(value) -> int:
    return OFFSET.clean(value, field="offset")


def clean_cube_ids(value, *, field_name: str = "cube_ids") -> tuple[str, ...]:
    """A list of cube ids (duplicates dropped, order kept); each must look like a cube id."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{field_name} must be a list of cube ids.", field=field_name)
    for index, cube_id in enumerate(value):
        if not is_cube_id(cube_id):
            raise InvalidInput(f"{field_name}[{index}] is not a cube id: use 1-100 letters, digits, '_' or '-'.",
                               field=f"{field_name}[{index}]")
    return tuple(dict.fromkeys(value))


@dataclass
class MemoryFilters:
    """Every filter of retrieve and search, already validated."""

    sectors: list[str] = field(default_factory=lambda: list(SECTORS))
    primary_sector: str | None = None
    min_strength: float | None = None
    min_salience: float | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    category: str | None = None
    cube_id: str | None = None
    # Several cubes at once (MemGOS's cube_ids); each must be readable, else "not found".
    cube_ids: tuple[str, ...] = ()
    session_id: str | None = None
    include_deleted: bool = False
    # A condition on memory rows that an app above memories adds, cleaned by that app (Context Graph's perspective
    # lock and node profile filters): it only narrows.
    restrict: Q | None = None

    @property
    def narrows_cubes(self) -> bool:
        """True when the filters keep less than the live memories of the cubes in scope."""
        return bool(self.primary_sector or self.min_strength is not None or self.min_salience is not None
                    or self.created_after or self.created_before or self.keywords or self.tags or self.category
                    or self.session_id or self.include_deleted or self.restrict is not None)

    @classmethod
    def build(cls, *, sectors=None, primary_sector=None, min_strength=None, min_salience=None, date_start=None,
              date_end=None, keywords=None, tags=None, category=None, cube_id=None, cube_ids=None,
              session_id=None, include_deleted=False) -> "MemoryFilters":
        start = clean_datetime(date_start, field_name="date_start")
        end = clean_datetime(date_end, field_name="date_end")
        if start and end and start > end:
            # The pair is at fault: reported as one field, which each edge names as its caller does.
            raise InvalidInput("date_start is after date_end: swap them.", field="date_range")
        return cls(
            sectors=clean_sectors(sectors),
            primary_sector=clean_sector(primary_sector) if primary_sector is not None else None,
            min_strength=clean_unit(min_strength, field_name="min_strength"),
            min_salience=clean_unit(min_salience, field_name="min_salience"),
            created_after=start,
            created_before=end,
            keywords=clean_labels(keywords, field_name="keywords"),
            tags=clean_labels(tags, field_name="tags"),
            category=clean_text(category, field_name="category", max_chars=MAX_LABEL_CHARS) or None,
            cube_id=cube_id or None,
            cube_ids=clean_cube_ids(cube_ids),
            session_id=session_id or None,
            include_deleted=bool(include_deleted),
        )

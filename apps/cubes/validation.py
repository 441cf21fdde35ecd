"""Input rules of the cube services, so REST, MCP and the dashboard give the same errors: each names the
field as the services spell it and says how to fix the value."""
from __future__ import annotations

import re

from apps.core.exceptions import InvalidInput
from apps.core.validation import clean_string
from apps.cubes.models import CUBE_ID_PATTERN, Cube, CubeMembership

MAX_CUBE_ID_CHARS = Cube._meta.get_field("id").max_length
MAX_NAME_CHARS = Cube._meta.get_field("name").max_length
MAX_PATH_CHARS = Cube._meta.get_field("path").max_length
MAX_DESCRIPTION_CHARS = 20000
SHARE_ROLES = tuple(CubeMembership.Role.values)


def is_cube_id(value) -> bool:
    """Whether ``value`` can be a cube id at all: one that cannot (a NUL byte, a slash) never reaches SQL."""
    return (isinstance(value, str) and len(value) <= MAX_CUBE_ID_CHARS
            and re.fullmatch(CUBE_ID_PATTERN, value) is not None)


def clean_cube_id(value, *, field: str = "cube_id") -> str:
    """The seed's rule: 1 to 100 of letters, digits, '_' and '-'."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{field} is required: 1 to {MAX_CUBE_ID_CHARS} letters, digits, '_' or '-'.", field=field)
    if len(value) > MAX_CUBE_ID_CHARS:
        raise InvalidInput(f"{field} is {len(value)} characters long; the limit is {MAX_CUBE_ID_CHARS}: shorten it.",
                           field=field)
    if not re.fullmatch(CUBE_ID_PATTERN, value):
        raise InvalidInput(f"{field} may hold only letters, digits, '_' and '-' (pattern {CUBE_ID_PATTERN}).",
                           field=field)
    return value


def clean_cube_name(value, *, field: str = "name") -> str:
    value = clean_string(value, field=field, max_chars=MAX_NAME_CHARS)
    if not value:
        raise InvalidInput(f"{field} cannot be empty: give the cube a name, or leave it out.", field=field)
    return value


def clean_description(value, *, field: str = "description") -> str:
    return "" if value is None else clean_string(value, field=field, max_chars=MAX_DESCRIPTION_CHARS)


def clean_path(value, *, field: str = "path") -> str:
    """Information only: Engram never opens, creates or lists it."""
    return "" if value is None else clean_string(value, field=field, max_chars=MAX_PATH_CHARS)


def clean_role(value, *, field: str = "role") -> str:
    if value not in SHARE_ROLES:
        raise InvalidInput(f"{field} must be one of {', '.join(SHARE_ROLES)}, got {value!r}.", field=field)
    return value

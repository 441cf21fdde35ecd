"""Input rules that services of several apps share, so that every edge words the same mistake the same way."""
from __future__ import annotations

from apps.core.exceptions import InvalidInput


def clean_string(value, *, field: str, max_chars: int) -> str:
    """A stripped string without NUL bytes (PostgreSQL text cannot hold them), within ``max_chars``."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}.", field=field)
    if "\x00" in value:
        raise InvalidInput(f"{field} cannot contain NUL bytes (\\u0000): remove them.", field=field)
    value = value.strip()
    if len(value) > max_chars:
        raise InvalidInput(f"{field} is {len(value)} characters long; the limit is {max_chars}: shorten it.",
                           field=field)
    return value

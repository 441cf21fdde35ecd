"""Input rules that services of several apps share, so that every edge words the same mistake the same way."""
from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from apps.core.exceptions import InvalidInput, NotFound

MAX_TITLE_CHARS = 300


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


def clean_title(value, *, field: str = "title", max_chars: int = MAX_TITLE_CHARS) -> str:
    """A required one-line text: a title or a name."""
    if value is None:
        raise InvalidInput(f"{field} is required.", field=field)
    value = clean_string(value, field=field, max_chars=max_chars)
    if not value:
        raise InvalidInput(f"{field} cannot be empty.", field=field)
    return value


def clean_choice(value, *, field: str, choices: Iterable[str]) -> str:
    """One of a fixed set (a status, a severity, a pattern type)."""
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        raise InvalidInput(f"{field} must be one of {', '.join(choices)}; got {value!r}.", field=field)
    return value


def clean_bool(value, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false, got {value!r}.", field=field)
    return value


def parse_uuid(value, *, field: str, label: str, code: str) -> uuid.UUID:
    """An id as a UUID. A malformed id cannot name anything, so it is "not found" like an unknown one
    (never a 500, and never a hint that the format was the problem for someone probing ids)."""
    try:
        return uuid.UUID(str(value)) if not isinstance(value, uuid.UUID) else value
    except (TypeError, ValueError, AttributeError):
        raise NotFound(f"{label} {value!r} not found.", code=code, extra={"field": field}) from None


# Characters no text of Engram's can hold: PostgreSQL's text and JSON refuse NUL (\u0000), and an unpaired UTF-16
# surrogate (a JSON "\ud800" escape) is not Unicode, so neither UTF-8, the database nor the tokenizer can take it.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def refuse_unstorable_text(arguments: Any, path: str = "") -> None:
    """InvalidInput naming the first argument (at any depth, keys of open objects too) whose text holds a character
    that no service could store or compare, so that it never reaches SQL, a file or the embedding model."""
    if isinstance(arguments, str):
        found = _UNSTORABLE.search(arguments)
        if found:
            what = "NUL bytes (\\u0000)" if found.group() == "\x00" else \
                f"unpaired surrogates (\\u{ord(found.group()):04x}), which are not Unicode text"
            raise InvalidInput(f"{path} cannot contain {what}: remove them (the first is at position "
                               f"{found.start()}).", field=path)
    elif isinstance(arguments, dict):
        for key, value in arguments.items():
            name = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _UNSTORABLE.search(key):
                raise InvalidInput(f"{path or 'The arguments'} has a key with a NUL character or an unpaired "
                                   f"surrogate: remove it.", field=path or None)
            refuse_unstorable_text(value, name)
    elif isinstance(arguments, list):
        for index, value in enumerate(arguments):
            refuse_unstorable_text(value, f"{path}[{index}]")

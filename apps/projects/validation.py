"""Input rules of the Mind services. Services call these, so REST, MCP, the forms and the admin give the
same errors: each message names the field and says how to fix it, and ``InvalidInput.field`` carries
the field's name as the caller spelled it (``alternatives[1].option``).

Limits: titles 300 characters, names 200, long text fields 20000, list items 1000 characters and 100
items, trigger phrases 200 characters each, confidence 0..1.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from apps.core.exceptions import InvalidInput
from apps.core.validation import clean_string, clean_title, parse_uuid
from apps.memories.validation import clean_unit

MAX_NAME_CHARS = 200
MAX_TEXT_CHARS = 20000
MAX_ITEM_CHARS = 1000
MAX_ITEMS = 100
MAX_PHRASE_CHARS = 200
MAX_PATH_CHARS = 1000
MAX_MOOD_CHARS = 500


def clean_name(value, *, field: str = "name") -> str:
    return clean_title(value, field=field, max_chars=MAX_NAME_CHARS)


def clean_text(value, *, field: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """An optional text field; None is the empty text."""
    if value is None:
        return ""
    return clean_string(value, field=field, max_chars=max_chars)


def clean_list(value, *, field: str, max_item_chars: int = MAX_ITEM_CHARS, max_items: int = MAX_ITEMS) -> list[str]:
    """A list of short texts, stripped, without empty items or repeats, in the given order. None is []."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{field} must be a list of strings (e.g. [\"first\", \"second\"]).", field=field)
    if len(value) > max_items:
        raise InvalidInput(f"{field} has {len(value)} items; at most {max_items} are allowed.", field=field)
    cleaned = [
        clean_string(item, field=f"{field}[{index}]", max_chars=max_item_chars)
        for index, item in enumerate(value)
    ]
    return list(dict.fromkeys(item for item in cleaned if item))


def clean_trigger_phrases(value, *, field: str = "trigger_phrases") -> list[str]:
    return clean_list(value, field=field, max_item_chars=MAX_PHRASE_CHARS)




def clean_confidence(value, *, field: str = "confidence", default: float | None = 0.7) -> float | None:
    """A number from 0 to 1 (the memory core's rule for unit values); None gives ``default``."""
    return default if value is None else clean_unit(value, field_name=field)




def clean_object_list(value, *, field: str, example: str, max_items: int = MAX_ITEMS) -> list:
    """A list of JSON objects (each then cleaned by the caller); None means an empty list."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{field} must be a list of objects like {example}.", field=field)
    if len(value) > max_items:
        raise InvalidInput(f"{field} has {len(value)} items; at most {max_items} are allowed.", field=field)
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise InvalidInput(f"{field}[{index}] must be an object like {example}.", field=f"{field}[{index}]")
    return list(value)


def _known_keys(item: dict, *, field: str, keys: Iterable[str]) -> None:
    unknown = sorted(set(item) - set(keys))
    if unknown:
        raise InvalidInput(f"{field}.{unknown[0]} is not a known key: use {', '.join(keys)}.",
                           field=f"{field}.{unknown[0]}")


def clean_alternatives(value, *, field: str = "alternatives") -> list[dict]:
    """[{option, rejected_because?}] -> [{"option": str, "rejected_because": str}]."""
    items = clean_object_list(value, field=field, example='{"option": "...", "rejected_because": "..."}')
    cleaned = []
    for index, item in enumerate(items):
        at = f"{field}[{index}]"
        _known_keys(item, field=at, keys=("option", "rejected_because"))
        cleaned.append({
            "option": clean_title(item.get("option"), field=f"{at}.option", max_chars=MAX_ITEM_CHARS),
            "rejected_because": clean_text(item.get("rejected_because"), field=f"{at}.rejected_because",
                                           max_chars=MAX_ITEM_CHARS),
        })
    return cleaned


def clean_attempt(value, *, field: str = "add_attempt") -> dict:
    """{what, result, learned?} -> {"what", "result", "learned"} (the service adds "at")."""
    if not isinstance(value, dict):
        raise InvalidInput(f'{field} must be an object like {{"what": "...", "result": "...", "learned": "..."}}.',
                           field=field)
    _known_keys(value, field=field, keys=("what", "result", "learned"))
    return {
        "what": clean_title(value.get("what"), field=f"{field}.what", max_chars=MAX_TEXT_CHARS),
        "result": clean_title(value.get("result"), field=f"{field}.result", max_chars=MAX_TEXT_CHARS),
        "learned": clean_text(value.get("learned"), field=f"{field}.learned"),
    }




def parse_project_id(value, *, field: str = "project_id") -> uuid.UUID:
    return parse_uuid(value, field=field, label="Project", code="project_not_found")


def parse_entity_id(value, *, field: str, label: str) -> uuid.UUID:
    return parse_uuid(value, field=field, label=label, code="entity_not_found")

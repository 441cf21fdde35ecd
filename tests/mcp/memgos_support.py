"""The MemGOS seed's tool sections, read from its JSON blocks: each tool's schema (name, description,
inputSchema), its response format and its example arguments, so that the tests compare Engram's tools and
answers with the seed's own text rather than with a copy of it."""
from __future__ import annotations

import json
import re
from pathlib import Path

from django.conf import settings

MEMGOS_SEED = Path(settings.BASE_DIR).parent / "shared" / "seeds" / "003_acccded3644303b7.txt"
_SECTION = re.compile(r"^### \d+\. (\w+)$", re.M)


def _json_after(section: str, heading: str) -> dict | None:
    match = re.search(r"#### " + heading + r"\s*```json\n(.*?)```", section, re.S)
    # list_tools' response elides its schemas as {...}.
    return json.loads(match.group(1).replace("{...}", "{}")) if match else None


def seed_tools() -> dict[str, dict]:
    """tool name -> {"schema": {name, description, inputSchema}, "response": dict, "example": dict | None}."""
    text = MEMGOS_SEED.read_text()
    headings = list(_SECTION.finditer(text))
    tools = {}
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else text.index("## Error Handling")
        section = text[heading.end():end]
        tools[heading.group(1)] = {"schema": _json_after(section, "Schema"),
                                   "response": _json_after(section, "Response Format"),
                                   "example": _json_after(section, "Example Usage")}
    return tools


def seed_error_types() -> list[str]:
    text = MEMGOS_SEED.read_text()
    block = text[text.index("### Common Error Types"):text.index("## Rate Limiting")]
    return re.findall(r"^- `(\w+)`", block, re.M)


def assert_shape(data, seed, where: str = "", *, optional: frozenset[str] = frozenset()) -> None:
    """``data`` has the seed response's keys (recursively into objects and the first item of lists; ``optional``
    ones may be missing), and the same JSON types. A memory's metadata is the caller's own: any object."""
    if isinstance(seed, dict):
        assert isinstance(data, dict), where
        if not seed or where.endswith(".metadata"):  # an elided object ({...}), or free-form metadata
            return
        assert set(seed) - optional <= set(data), (where, set(seed) - set(data))
        for key, value in seed.items():
            if key in data:
                assert_shape(data[key], value, f"{where}.{key}", optional=optional)
    elif isinstance(seed, list):
        assert isinstance(data, list), where
        if seed and data:
            for item in data:
                assert_shape(item, seed[0], f"{where}[]", optional=optional)
    elif isinstance(seed, bool):
        assert isinstance(data, bool), where
    elif isinstance(seed, (int, float)):
        assert isinstance(data, (int, float)) and not isinstance(data, bool), where
    elif isinstance(seed, str):
        assert isinstance(data, str) or data is None, where

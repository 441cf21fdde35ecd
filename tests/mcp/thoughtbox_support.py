"""The Thoughtbox seed (seeds/001) read as data: each tool's TypeScript schema (names, required, types, the
"min: 1" bounds, operation enums), annotations and JSON usage examples, the resource and template tables and
the prompts, so the tests compare Engram's profile with the seed's own text. Plus helpers to read the
Thoughtbox envelope of a tool result."""
from __future__ import annotations

import json
import re
from pathlib import Path

from django.conf import settings

THOUGHTBOX_SEED = Path(settings.BASE_DIR).parent / "shared" / "seeds" / "001_fb29208e2c2583e8.txt"
THOUGHTBOX_TOOLS = ("thoughtbox", "notebook", "mental_models", "export_reasoning_chain")
_TS_FIELD = re.compile(r"^\s*(?P<name>\w+)(?P<optional>\?)?:\s*(?P<type>[^;]+);\s*(?://\s*(?P<comment>.*))?$")
_TS_TYPES = {"string": "string", "boolean": "boolean", "number": "number"}


def seed_text() -> str:
    return THOUGHTBOX_SEED.read_text()


def tool_section(name: str) -> str:
    text = seed_text()
    start = text.index(f"\n### `{name}`\n")
    return text[start:text.index("\n---\n", start)]


def schema_block(name: str) -> str:
    return re.search(r"\*\*Schema\*\*:\s*```typescript\n(.*?)```", tool_section(name), re.S).group(1)


def seed_fields(name: str) -> dict[str, dict]:
    """The top-level fields of a tool's TypeScript schema: {name: {required, type, minimum?, enum?}}."""
    block = schema_block(name)
    # Join the multi-line union of `operation` into one line.
    block = re.sub(r"\|\s*\n\s*", "| ", block)
    fields = {}
    depth = 0
    for line in block.splitlines()[1:-1]:
        if depth == 0 and (match := _TS_FIELD.match(line)):
            type_text = match["type"].strip()
            field = {"required": not match["optional"]}
            if "'" in type_text:
                field |= {"type": "string", "enum": re.findall(r"'([^']+)'", type_text)}
            elif type_text.endswith("[]"):
                field |= {"type": "array", "items": _TS_TYPES[type_text[:-2]]}
            elif type_text.startswith(("{", "Record")):
                field["type"] = "object"
            else:
                field["type"] = _TS_TYPES[type_text]
            if match["comment"] and "min: 1" in match["comment"]:
                field["minimum"] = 1
            fields[match["name"]] = field
        elif depth == 0 and re.match(r"^\s*(\w+)\??:\s*\{\s*$", line):
            name_match = re.match(r"^\s*(\w+)(\?)?:", line)
            fields[name_match.group(1)] = {"required": not name_match.group(2), "type": "object", "properties": {}}
            depth = 1
            nested = fields[name_match.group(1)]["properties"]
        elif depth == 1:
            if line.strip().startswith("}"):
                depth = 0
            elif match := _TS_FIELD.match(line):
                nested[match["name"]] = {"type": _TS_TYPES[match["type"].strip()]}
    return fields


def seed_annotations(name: str) -> dict[str, bool] | None:
    block = re.search(r"\*\*Annotations\*\*:\n((?:- .*\n)+)", tool_section(name))
    if block is None:
        return None
    return {key: value == "true" for key, value in re.findall(r"`(\w+)`: (true|false)", block.group(1))}


def json_examples(section: str) -> list[dict]:
    """Every ```json block of a section, with the seed's `// comments` taken out."""
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    return [json.loads(re.sub(r"\s//[^\n]*", "", block)) for block in blocks]


def usage_examples() -> dict[str, dict]:
    """The thoughtbox tool's four usage examples by their heading (Forward thinking, Backward planning, ...)."""
    section = tool_section("thoughtbox")
    found = re.findall(r"\n([A-Z][^\n]*?):\n```json\n(.*?)```", section, re.S)
    return {heading.split(" (")[0]: json.loads(block) for heading, block in found}


def operation_examples(name: str) -> dict[str, dict]:
    """A tool's operation examples by operation (notebook, mental_models)."""
    return {example["operation"]: example for example in json_examples(tool_section(name))}


def _subsection(heading: str) -> str:
    """The text under a ``### heading`` up to the next heading of any level."""
    text = seed_text()
    start = text.index(f"### {heading}\n") + len(heading) + 5
    following = re.search(r"^#{2,3} ", text[start:], re.M)
    return text[start:start + following.start()] if following else text[start:]


def seed_table(heading: str) -> dict[str, str]:
    """A resources table (| `uri` | description |) under ``heading``."""
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \|$", _subsection(heading), re.M)
    return {uri: description.strip() for uri, description in rows}


def seed_prompt_arguments(name: str) -> dict[str, bool]:
    """A prompt's arguments (name -> required) from its TypeScript block; none when the seed says "None"."""
    block = re.search(r"```typescript\n(.*?)```", _subsection(f"`{name}`"), re.S)
    if block is None:
        return {}
    return {match["name"]: not match["optional"] for line in block.group(1).splitlines()
            if (match := _TS_FIELD.match(line))}


def result_of(result) -> dict:
    """A successful Thoughtbox answer: its one text block is the JSON of the structured content."""
    assert result.is_error is False, result.content[0].text
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    return payload


def embedded_of(result) -> list[dict]:
    return (result.meta or {}).get("embeddedResources", [])


def error_of(result, code: str, field: str | None = None) -> str:
    """A failed Thoughtbox answer: isError, a text starting with the seed's error code, never a traceback."""
    assert result.is_error is True
    [block] = result.content
    assert block.text.startswith(f"{code}: "), block.text
    assert "Traceback" not in block.text
    error = result.structured_content["error"]
    assert error["code"] == code.split(" (")[0] and error["suggestion"]
    if field is not None:
        assert error.get("field") == field, error
    return block.text

"""The Thoughtbox seed (seeds/001) as tests/contracts/thoughtbox.json holds it: each tool's TypeScript schema
(names, required, types, the "min: 1" bounds, operation enums), annotations and JSON usage examples, the
resource and template tables and the prompts, so the tests compare Engram's profile with the seed's own text.
Plus helpers to read the Thoughtbox envelope of a tool result."""
from __future__ import annotations

import json

from tests.contracts import contract

THOUGHTBOX_TOOLS = ("thoughtbox", "notebook", "mental_models", "export_reasoning_chain")


def seed_fields(name: str) -> dict[str, dict]:
    """The top-level fields of a tool's TypeScript schema: {name: {required, type, minimum?, enum?}}."""
    return contract("thoughtbox")["tools"][name]["fields"]


def seed_annotations(name: str) -> dict[str, bool] | None:
    return contract("thoughtbox")["tools"][name]["annotations"]


def usage_examples() -> dict[str, dict]:
    """The thoughtbox tool's four usage examples by their heading (Forward thinking, Backward planning, ...)."""
    return contract("thoughtbox")["usage_examples"]


def operation_examples(name: str) -> dict[str, dict]:
    """A tool's operation examples by operation (notebook, mental_models)."""
    return {example["operation"]: example for example in contract("thoughtbox")["tools"][name]["examples"]}


def seed_table(heading: str) -> dict[str, str]:
    """A resources table (uri -> description): "Static Resources" or "Resource Templates"."""
    return contract("thoughtbox")["resources"][heading]


def seed_prompt_arguments(name: str) -> dict[str, bool]:
    """A prompt's arguments (name -> required); none when the seed says "None"."""
    return contract("thoughtbox")["prompts"][name]


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

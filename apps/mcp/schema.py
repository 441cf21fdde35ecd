"""Tool input models and the JSON Schema that clients see for them.

A profile's input model states its seed's schema once: names, types, enums, ranges, required
fields and descriptions. ``advertised_schema`` turns the model into the seed's own JSON Schema
form, so ``tools/list`` shows exactly what the seed documents, while the model itself validates
every call (strict types, no unknown fields).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


# pydantic's bookkeeping that the seeds do not have.
_PYDANTIC_ONLY_KEYS = {"title", "additionalProperties"}


class SeedModel(BaseModel):
    """Base of every tool input model: camelCase names on the wire, strict JSON types, unknown
    fields refused (a misspelt optional argument must not be silently ignored)."""

    # NaN and infinity are no number a caller means (and compare false with every bound): refused as not finite.
    model_config = ConfigDict(strict=True, extra="forbid", alias_generator=to_camel, frozen=True, allow_inf_nan=False)


class SnakeCaseSeedModel(SeedModel):
    """SeedModel's strictness for the seeds whose names on the wire are snake_case (Mind, MemGOS), as the
    fields are named."""

    model_config = ConfigDict(alias_generator=None)


def given(**values: Any) -> dict[str, Any]:
    """The optional arguments the caller gave: the others keep the service's defaults (which it validates)."""
    return {name: value for name, value in values.items() if value is not None}


def argument_naming(model: type[SeedModel]) -> str:
    """How the model's argument names are spelt on the wire, for error messages that name them."""
    return "camelCase" if model.model_config.get("alias_generator") is to_camel else "snake_case"


def advertised_schema(model: type[SeedModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    # The tool's own description says what it does; a model docstring is for readers of the code.
    schema.pop("description", None)
    return _seed_form(schema, definitions)


def _seed_form(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    # Optional fields are `X | None = None` on our side, since clients often send null for "not
    # given"; the seeds say the same by leaving them out of "required", so X alone is advertised.
    any_of = schema.get("anyOf")
    if any_of and len(any_of) == 2 and {"type": "null"} in any_of:
        siblings = {key: value for key, value in schema.items() if key != "anyOf"}
        schema = {**next(option for option in any_of if option != {"type": "null"}), **siblings}
    if "$ref" in schema:
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**definitions[schema["$ref"].rsplit("/", 1)[-1]], **siblings}
    form = {}
    for key, value in schema.items():
        # An open object ("additionalProperties": true, MemGOS's metadata) is the seed's own word; kept.
        if (key in _PYDANTIC_ONLY_KEYS and value is not True) or (key == "default" and value is None):
            continue
        if key == "properties":
            value = {name: _seed_form(sub, definitions) for name, sub in value.items()}
        elif key == "items":
            value = _seed_form(value, definitions)
        form[key] = value
    return form

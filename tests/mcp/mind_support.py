"""The Mind seed's tool sections, as tests/contracts/mind.json holds them (generated from the seed's
TypeScript blocks): each tool's parameters (name, required, the TypeScript type, nested fields) and the
keys of what it returns, so the tests compare Engram's schemas and answers with the seed's own text."""
from __future__ import annotations

import json
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.contracts import contract

MIND_TOOLS = ("mind_start_session", "mind_end_session", "mind_get_context", "mind_check_edges", "mind_add_decision",
              "mind_add_issue", "mind_update_issue", "mind_add_edge", "mind_update_project", "mind_export")
_SCALARS = {"string": "string", "number": "number", "boolean": "boolean"}


@dataclass
class SeedField:
    name: str
    required: bool
    type_text: str
    children: dict[str, SeedField] = field(default_factory=dict)

    @property
    def enum(self) -> list[str] | None:
        values = re.findall(r'"([^"]+)"', self.type_text)
        return values or None

    def json_type(self) -> str:
        """The JSON Schema type the TypeScript type stands for."""
        text = self.type_text.rstrip(",")
        if text.startswith("[{") or text.endswith("[]"):
            return "array"
        if text.startswith("{"):
            return "object"
        if self.enum:
            return "string"
        return _SCALARS[text]

    def item_type(self) -> str | None:
        text = self.type_text.rstrip(",")
        if text.startswith("[{"):
            return "object"
        if text.endswith("[]"):
            return _SCALARS.get(text[:-2], "string")  # EntityType[] is a list of names
        return None


def _fields(specs: dict[str, dict]) -> dict[str, SeedField]:
    return {name: SeedField(name, spec["required"], spec["type"], _fields(spec["children"]))
            for name, spec in specs.items()}


def seed_tools() -> dict[str, dict[str, dict[str, SeedField]]]:
    """tool name -> {"params": fields, "returns": fields}."""
    tools = contract("mind")["tools"]
    return {name: {"params": _fields(tools[name]["params"]), "returns": _fields(tools[name]["returns"])}
            for name in MIND_TOOLS}


def seed_description(name: str) -> str:
    """The sentence under the tool's heading."""
    return contract("mind")["tools"][name]["description"]


def seed_example(name: str) -> dict:
    """The arguments of the tool's "Claude calls: ..." example."""
    example = contract("mind")["tools"][name]["example"]
    assert example is not None, f"the Mind seed has no example call of {name}"
    return example


def result_data(result) -> dict:
    """A Mind tool result's object; its text and structured forms must agree."""
    [block] = result.content
    payload = json.loads(block.text)
    assert payload == result.structured_content
    assert ("error" in payload) is result.is_error
    return payload


def assert_schema_is_seed(schema: dict, fields: dict[str, SeedField], *, where: str,
                          extras: frozenset[str] = frozenset()) -> None:
    """The advertised JSON schema has the seed's fields (plus ``extras``, as dotted paths), with its
    required set, types and enums, nested objects included."""
    properties = schema["properties"]
    extra_here = {path for path in extras if "." not in path}
    assert set(properties) == set(fields) | extra_here, where
    assert set(schema.get("required", [])) == {name for name, seed in fields.items() if seed.required}, where
    assert schema.get("additionalProperties") is None  # the seed form: unknown names are refused on call
    for name, seed in fields.items():
        prop = properties[name]
        assert prop["type"] == seed.json_type(), f"{where}.{name}"
        if seed.json_type() == "array":
            assert prop["items"].get("type", "string") == seed.item_type(), f"{where}.{name}"
        target = prop["items"] if seed.json_type() == "array" else prop
        if seed.enum and seed.json_type() == "string":
            assert target["enum"] == seed.enum, f"{where}.{name}"
        if seed.children:
            nested = {path.split(".", 1)[1] for path in extras if path.startswith(name + ".")}
            assert_schema_is_seed(target, seed.children, where=f"{where}.{name}", extras=frozenset(nested))


@asynccontextmanager
async def over_http_legacy(url: str, raw_token: str):
    """The SDK's client on the handshake-era protocol (initialize, then an MCP session id), as clients
    written before 2026-07-28 talk; tests.mcp.support.over_http speaks the current, sessionless one."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw_token}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client

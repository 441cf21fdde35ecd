"""The Mind seed's tool sections, read from its TypeScript blocks: each tool's parameters (name,
required, JSON type, enum, nested fields) and the keys of what it returns, so the tests compare
Engram's schemas and answers with the seed's own text rather than with a copy of it."""
from __future__ import annotations

import json
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from django.conf import settings
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

MIND_SEED = Path(settings.BASE_DIR).parent / "shared" / "seeds" / "004_17adc1a7bc3fb056.txt"
MIND_TOOLS = ("mind_start_session", "mind_end_session", "mind_get_context", "mind_check_edges", "mind_add_decision",
              "mind_add_issue", "mind_update_issue", "mind_add_edge", "mind_update_project", "mind_export")
# `  name?: type,   // comment`: indentation, name, optional mark, type (up to a comment).
_FIELD = re.compile(r"^(?P<indent> *)(?P<name>\w+)(?P<optional>\?)?:\s*(?P<type>[^/]*?)\s*(?://.*)?$")
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


def parse_block(block: str) -> dict[str, SeedField]:
    """The fields of one TypeScript object block, nested objects and arrays of objects included."""
    root: dict[str, SeedField] = {}
    stack: list[tuple[int, dict[str, SeedField]]] = [(-1, root)]
    for line in block.splitlines():
        match = _FIELD.match(line)
        if not match:
            continue
        indent = len(match["indent"])
        while stack[-1][0] >= indent:
            stack.pop()
        seed_field = SeedField(match["name"], not match["optional"], match["type"])
        stack[-1][1][seed_field.name] = seed_field
        if seed_field.type_text.startswith(("{", "[{")):
            stack.append((indent, seed_field.children))
    return root


def _typescript_after(section: str, heading: str) -> str:
    match = re.search(r"\*\*" + heading + r":\*\*\s*```typescript\n(.*?)```", section, re.S)
    assert match, f"no {heading} block"
    return match.group(1)


def seed_tools() -> dict[str, dict[str, dict[str, SeedField]]]:
    """tool name -> {"params": fields, "returns": fields}."""
    text = MIND_SEED.read_text()
    tools = {}
    for name in MIND_TOOLS:
        start = text.index(f"\n### {name}\n")
        end = text.find("\n### ", start + 1)
        section = text[start:end]
        tools[name] = {"params": parse_block(_typescript_after(section, "Parameters")),
                       "returns": parse_block(_typescript_after(section, "Returns"))}
    return tools


def seed_description(name: str) -> str:
    """The sentence under the tool's heading."""
    text = MIND_SEED.read_text()
    start = text.index(f"\n### {name}\n") + len(f"\n### {name}\n")
    return text[start:].strip().split("\n", 1)[0]


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

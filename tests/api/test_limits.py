"""The README's table of limits is apps/core/limits.py's ranges, and the REST schema carries the same bounds."""
import re
from pathlib import Path

import pytest

from apps.core import limits

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `(?P<name>[A-Z_]+)` \| [^|]+ \| (?P<low>[\d,]+) to (?P<high>[\d,]+) \| (?P<default>[\d,]+|none) \|$")


def number(text: str) -> int | None:
    return None if text == "none" else int(text.replace(",", ""))


def test_the_readme_lists_every_range_of_limits_py():
    documented = {
        match["name"]: (number(match["low"]), number(match["high"]), number(match["default"]))
        for match in map(ROW.match, README.read_text().splitlines()) if match
    }
    defined = {name: (value.low, value.high, value.default)
               for name, value in vars(limits).items() if isinstance(value, limits.Range)}
    assert documented == defined


@pytest.mark.django_db
@pytest.mark.parametrize(("schema_name", "field", "limit"), [
    ("ThoughtCreateRequest", "thought_number", limits.THOUGHT_NUMBER),
    ("CellCreateRequest", "position", limits.CELL_POSITION),
    ("ThinkParallelRequest", "timeout", limits.PARALLEL_TIMEOUT_MS),
    ("DecomposeRequest", "max_depth", limits.DECOMPOSE_DEPTH),
    ("ContextQueryRequest", "limit", limits.CONTEXT_LIMIT),
    ("MemoryQueryRequest", "offset", limits.OFFSET),
    ("ChatRequestRequest", "top_k", limits.CHAT_TOP_K),
])
def test_request_bodies_document_the_range(client, schema_name, field, limit):
    schema = client.get("/api/schema/?format=json").json()["components"]["schemas"][schema_name]
    bounds = schema["properties"][field]
    assert (bounds["minimum"], bounds["maximum"]) == (limit.low, limit.high)


@pytest.mark.django_db
def test_list_queries_document_the_range(client):
    operation = client.get("/api/schema/?format=json").json()["paths"]["/api/v1/tokens/"]["get"]
    parameters = {parameter["name"]: parameter["schema"] for parameter in operation["parameters"]}
    assert (parameters["limit"]["minimum"], parameters["limit"]["maximum"]) == (limits.LIST_LIMIT.low,
                                                                                 limits.LIST_LIMIT.high)
    assert (parameters["offset"]["minimum"], parameters["offset"]["maximum"]) == (limits.OFFSET.low, limits.OFFSET.high)

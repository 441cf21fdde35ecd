"""The MemGOS seed's tool sections, as tests/contracts/memgos.json holds them (generated from the seed's JSON
blocks): each tool's schema (name, description, inputSchema), its response format and its example arguments,
so that the tests compare Engram's tools and answers with the seed's own text."""
from __future__ import annotations

from tests.contracts import contract


def seed_tools() -> dict[str, dict]:
    """tool name -> {"schema": {name, description, inputSchema}, "response": dict, "example": dict | None}."""
    return contract("memgos")["tools"]


def seed_error_types() -> list[str]:
    return contract("memgos")["error_types"]


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

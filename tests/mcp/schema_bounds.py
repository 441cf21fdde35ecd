"""Tool schemas against their seed's: equal, except for bounds Engram adds where the seed gives none.

Every number an edge takes is bounded (apps/core/limits.py), and the inputSchema says so: a seed's
`{"type": "number", "minimum": 0}` offset is served with a `maximum` too. Nothing else may differ.
"""
ADDED_BOUNDS = frozenset({"minimum", "maximum", "maxLength", "maxItems"})


def without_added_bounds(served, seed):
    """`served` with each bound the seed does not have at the same place removed."""
    if isinstance(served, dict) and isinstance(seed, dict):
        return {key: without_added_bounds(value, seed.get(key)) for key, value in served.items()
                if key in seed or key not in ADDED_BOUNDS}
    if isinstance(served, list) and isinstance(seed, list) and len(served) == len(seed):
        return [without_added_bounds(a, b) for a, b in zip(served, seed)]
    return served


def assert_seed_schema(served: dict, seed: dict, name: str) -> None:
    assert without_added_bounds(served, seed) == seed, name

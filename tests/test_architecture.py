"""The layering rules of docs/architecture.md, checked on the imports of apps/ as written (ast, no import runs).

core -> domain apps -> edges: a module imports only from its own layer or below, no two modules of apps/ import
each other (directly or round a longer circle), and the two edge-only apps (mcp, dashboard) are imported by no
other app. Every import counts, including those inside functions and under TYPE_CHECKING: a lazy import is a
circle all the same.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parent.parent / "apps"
DOMAIN_APPS = {"accounts", "memories", "cubes", "projects", "chat", "reasoning", "graph"}
EDGE_APPS = {"mcp", "dashboard"}
# Modules (by name under any app) that serve a caller from outside: HTTP, MCP, websockets, admin, workers, CLI.
# An app's AppConfig (apps.py) wires its edges up, so it sits with them.
EDGE_MODULES = {"api", "admin", "tasks", "management", "views", "forms", "urls", "consumers", "routing",
                "pages", "handlers", "middleware", "health", "apps"}
LAYERS = {"core": 0, "domain": 1, "edge": 2}

pytestmark = pytest.mark.timeout(60)


def module_name(path: Path) -> str:
    parts = path.relative_to(APPS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {module_name(path): path for path in APPS.rglob("*.py") if "migrations" not in path.parts}
    assert len(found) > 100, f"only {len(found)} modules under {APPS}: is this the repository?"
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    app = parts[1] if len(parts) > 1 else ""
    if app in EDGE_APPS or any(part in EDGE_MODULES for part in parts[2:3]):
        return "edge"
    return "core" if app in {"core", ""} else "domain"


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of apps/ that ``module`` imports: ``from a.b import c`` is a.b.c when c is a module, else a.b."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in found if name in known and name != module}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {module: imports_of(module, path, known) for module, path in known.items()}


def test_the_layers_are_classified_as_the_document_says():
    assert layer("apps.core.exceptions") == "core"
    assert layer("apps.core.api.serializers") == "edge"
    assert layer("apps.memories.services.store") == "domain"
    assert layer("apps.memories.api.views") == "edge"
    assert layer("apps.memories.views") == "edge"
    assert layer("apps.mcp.profiles.memgos") == "edge"
    assert layer("apps.graph.consumers") == "edge"


def test_no_module_imports_from_a_layer_above_its_own(graph):
    upward = sorted(f"{module} ({layer(module)}) imports {target} ({layer(target)})"
                    for module, targets in graph.items() for target in targets
                    if LAYERS[layer(target)] > LAYERS[layer(module)])
    assert not upward, "imports must go down (core -> domain -> edges):\n" + "\n".join(upward)


def test_only_an_edge_app_imports_itself(graph):
    crossing = sorted(f"{module} imports {target}" for module, targets in graph.items() for target in targets
                      if target.split(".")[1] in EDGE_APPS and module.split(".")[1] != target.split(".")[1])
    assert not crossing, "apps.mcp and apps.dashboard are edges no other app builds on:\n" + "\n".join(crossing)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles(graph):
    found = circles(graph)
    assert not found, "modules that import each other, directly or round a circle:\n" + "\n".join(
        " <-> ".join(component) for component in found)

"""The modules of :mod:`reliab.fleet` import each other without a circle (module-level and
function-level imports alike: a deferred import still ties two modules together)."""

from __future__ import annotations

import ast
from pathlib import Path

import reliab.fleet

FOLDER = Path(reliab.fleet.__file__).parent


def imports_of(folder: Path, package: str = "reliab.fleet") -> dict[str, set[str]]:
    """Module name -> the modules of ``package`` it imports anywhere in its source."""
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for name in names:
        tree = ast.parse((folder / f"{name}.py").read_text())
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            found |= {t.rsplit(".", 1)[1] for t in targets if t.startswith(package + ".")} & names
        graph[name] = found - {name}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order), or ``None``."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_circle_finder_finds_a_circle_written_by_hand() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None


def test_fleet_modules_import_without_a_circle() -> None:
    graph = imports_of(FOLDER)
    assert {"telemetry", "_chunk", "_rows"} <= set(graph)
    assert circle(graph) is None

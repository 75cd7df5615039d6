"""No import circle among the kernel reader's modules (``reliab/io/formats/kernel/``).

Every import of one kernel module by another is collected from the source, function-level
imports included; the graph must have no cycle (so no two modules import each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

import reliab.io.formats.kernel as kernel

PACKAGE = "reliab.io.formats.kernel"


def _imports(path: Path) -> set[str]:
    """The kernel modules ``path`` imports (by module name; the package itself is left out)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE + "."):
            found.add(node.module.removeprefix(PACKAGE + ".").split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found.update(alias.name for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    folder = Path(kernel.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return {p.stem: _imports(p) & modules for p in folder.glob("*.py") if p.stem != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order), or ``None``."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_cycle_finder_finds_a_pair() -> None:
    assert _cycle({"a": {"b"}, "b": {"a"}, "c": set()}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_kernel_modules_import_no_circle() -> None:
    graph = _graph()
    assert "_bulk_route" in graph and "_bulk" in graph["_bulk_route"]
    assert _cycle(graph) is None

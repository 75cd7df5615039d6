"""Import layering of ``reliab``: contracts over every module, checked on the parsed source.

Every module of the package (found with :mod:`pkgutil`) is parsed with :mod:`ast`; every
``import`` and ``from … import`` is an edge, those inside functions and under
``TYPE_CHECKING`` included (a deferred import is still a dependency).  The contracts:

(a) layers, low to high (:data:`LAYERS`): no module imports a module of a higher layer;
(b) no private module (a ``_name`` part) and no private name is imported from outside the
    package that owns it (:func:`private_scope`);
(c) no import circle: Tarjan's strongly connected components of the module graph
    (R. Tarjan, "Depth-first search and linear graph algorithms", SIAM J. Comput. 1(2),
    1972) have one module each;
(d) the CLI uses the public API only: ``reliab.cli`` imports no private module or name from
    outside ``reliab.cli``.

What the code still does against them is listed in :data:`EXCEPTIONS`, each with its
reason; the tests fail on anything else, and on an exception that no longer occurs.
"""

from __future__ import annotations

import ast
import pkgutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import reliab

#: layers, low to high; a module belongs to the layer of the longest prefix listed
LAYERS: tuple[tuple[str, ...], ...] = (
    ("reliab", "reliab._contain", "reliab._allocator", "reliab._version", "reliab.errors", "reliab.schema",
     "reliab._tables",
     "reliab._rowcheck", "reliab._hostnames", "reliab._checks", "reliab._result", "reliab._lazy", "reliab._atomic",
     "reliab._deprecation"),
    ("reliab.io",),  # the readers and the parts of the ingest engine
    ("reliab.taxonomy",),
    ("reliab.models", "reliab.prepare", "reliab.align", "reliab.windows"),
    # the ingest pipeline attributes interruptions (reliab.taxonomy) and then costs them (a
    # reliab.models step), so it sits above both
    ("reliab.io.__init__", "reliab.io._driver", "reliab.io._modes", "reliab.io._streamed",
     "reliab.io.distributed"),
    ("reliab.fleet", "reliab.plots", "reliab._plotstyle", "reliab.datasets", "reliab.predict"),
    ("reliab.report",),
    ("reliab.study",),  # run_report runs the analyses and renders them with reliab.report
    ("reliab._demo",),
    ("reliab.cli", "reliab.__main__"),
)

#: (importer, imported, contract): what the code still does against a contract, and why
EXCEPTIONS: Mapping[tuple[str, str, str], str] = {
}

#: import circles still there, and why
KNOWN_CIRCLES: Mapping[tuple[str, ...], str] = {
}


@dataclass(frozen=True)
class Edge:
    """``importer`` imports ``module`` (``name`` from it, or the module itself when ``None``)."""

    importer: str
    module: str
    name: str | None
    line: int


def modules(package: object = reliab) -> dict[str, Path]:
    """Every module of ``package``: dotted name (a package as ``pkg.__init__``) -> source file."""
    root = Path(package.__file__).parent  # type: ignore[attr-defined]
    out = {f"{package.__name__}.__init__": root / "__init__.py"}  # type: ignore[attr-defined]
    for info in pkgutil.walk_packages([str(root)], prefix=f"{package.__name__}."):  # type: ignore[attr-defined]
        rel = Path(*info.name.split(".")[1:])
        out[f"{info.name}.__init__" if info.ispkg else info.name] = (
            root / rel / "__init__.py" if info.ispkg else root / rel.with_suffix(".py"))
    return out


def _resolve(dotted: str, known: set[str]) -> str | None:
    """The module ``dotted`` names: itself, its package's ``__init__``, or the longest known prefix."""
    while dotted:
        for candidate in (dotted, f"{dotted}.__init__"):
            if candidate in known:
                return candidate
        dotted = dotted.rpartition(".")[0]
    return None


def edges_of(name: str, source: str, known: set[str], top: str = "reliab") -> list[Edge]:
    """The imports of module ``name`` (source text ``source``) of modules in ``known``."""
    package = name.rpartition(".")[0]  # (a package's __init__: the package itself)
    out: list[Edge] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, known) if alias.name.split(".")[0] == top else None
                if target:
                    out.append(Edge(name, target, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            if base.split(".")[0] != top:
                continue
            for alias in node.names:
                sub = _resolve(f"{base}.{alias.name}", known)
                if sub is not None and sub.removesuffix(".__init__").endswith(f".{alias.name}"):
                    out.append(Edge(name, sub, None, node.lineno))  # a submodule
                else:
                    out.append(Edge(name, _resolve(base, known) or base, alias.name, node.lineno))
    return out


def graph(package: object = reliab) -> list[Edge]:
    """Every import edge between modules of ``package``."""
    found = modules(package)
    known = set(found)
    return [e for name, path in found.items()
            for e in edges_of(name, path.read_text(encoding="utf-8"), known, package.__name__)]  # type: ignore[attr-defined]


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    """The layer of ``module``: that of the longest listed prefix it starts with."""
    best, level = -1, -1
    for i, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(f"{prefix}.")) and len(prefix) > best:
                best, level = len(prefix), i
    if level < 0:
        raise AssertionError(f"{module} is in no layer of the test's LAYERS: add it")
    return level


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_scope(module: str, name: str | None) -> str | None:
    """The package a private ``module`` (or its private ``name``) belongs to, ``None`` if public.

    A private module ``a.b._c`` (or ``a._c.d``) is private to the package above its first
    private part (``a.b``); a private name of module ``a.b.m`` is private to ``a.b``, of a
    top-level module ``reliab.m`` to that module itself (the top-level package holds the
    shared base: its private modules, ``reliab._checks`` and ``reliab._result``, serve
    every package, its modules' private names do not).
    """
    parts = module.removesuffix(".__init__").split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    if name is not None and _private(name):
        is_package = module.endswith(".__init__")
        owner = parts if is_package or len(parts) == 2 else parts[:-1]
        return ".".join(owner)
    return None


def _within(importer: str, scope: str) -> bool:
    importer = importer.removesuffix(".__init__")
    return importer == scope or importer.startswith(f"{scope}.")


def upward(edges: Iterable[Edge], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[tuple[str, str]]:
    """Contract (a): the edges from a module to a higher layer."""
    return sorted({(e.importer, e.module) for e in edges if layer_of(e.module, layers) > layer_of(e.importer, layers)})


def private_crossings(edges: Iterable[Edge]) -> list[tuple[str, str]]:
    """Contract (b): private modules or names imported from outside their package."""
    out = set()
    for e in edges:
        scope = private_scope(e.module, e.name)
        if scope is not None and scope != "reliab" and not _within(e.importer, scope):
            out.add((e.importer, e.module))
        elif scope == "reliab" and e.name is not None and _private(e.name) and not _within(e.importer, e.module):
            out.add((e.importer, e.module))
    return sorted(out)


def cli_private(edges: Iterable[Edge]) -> list[tuple[str, str]]:
    """Contract (d): private modules or names the CLI takes from outside ``reliab.cli``."""
    return sorted({(e.importer, e.module) for e in edges
                   if _within(e.importer, "reliab.cli") and not _within(e.module.removesuffix(".__init__"), "reliab.cli")
                   and private_scope(e.module, e.name) is not None})


def circles(edges: Iterable[Edge]) -> list[list[str]]:
    """Contract (c): the import circles (strongly connected components of more than one
    module, Tarjan 1972), largest first.  A package's ``__init__`` and the modules it
    imports are one circle only when a module imports a name back from the ``__init__``."""
    succ: dict[str, set[str]] = {}
    for e in edges:
        succ.setdefault(e.importer, set()).add(e.module)
        succ.setdefault(e.module, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]  # iterative: no recursion limit
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            child = next(it, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def _unexcused(pairs: list[tuple[str, str]], contract: str) -> list[tuple[str, str]]:
    return [p for p in pairs if (*p, contract) not in EXCEPTIONS]


EDGES = graph()


def test_the_walk_sees_the_package() -> None:
    names = set(modules())
    assert {"reliab.io._driver", "reliab.cli.ingest", "reliab.taxonomy._attribute",
            "reliab.io.formats.kernel.__init__"} <= names
    assert any(e.importer == "reliab.io._driver" and e.module == "reliab.io._modes" for e in EDGES)
    # an import inside a function counts: _driver attributes through reliab.taxonomy lazily
    assert any(e.importer == "reliab.io._driver" and e.module == "reliab.taxonomy.__init__" for e in EDGES)


def test_no_upward_import() -> None:
    assert _unexcused(upward(EDGES), "layer") == []


def test_no_private_import_across_packages() -> None:
    assert _unexcused(private_crossings(EDGES), "private") == []


def test_the_cli_uses_the_public_api() -> None:
    assert cli_private(EDGES) == []


def test_no_import_circle() -> None:
    found = [c for c in circles(EDGES) if tuple(c) not in KNOWN_CIRCLES]
    largest = found[0] if found else []
    assert found == [], f"{len(found)} circle(s); the largest, {len(largest)} modules: {largest}"


def test_every_exception_still_occurs() -> None:
    """An exception whose import is gone is deleted from the list (it stays short)."""
    occurring = ({(*p, "layer") for p in upward(EDGES)} | {(*p, "private") for p in private_crossings(EDGES)})
    assert set(EXCEPTIONS) <= occurring
    assert set(KNOWN_CIRCLES) <= {tuple(c) for c in circles(EDGES)}


# --- the contracts fail where they should: a synthetic package and hand-written graphs ---

def _fake_package(tmp_path: Path, files: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> object:
    import types

    monkeypatch.syspath_prepend(str(tmp_path))  # pkgutil imports the sub-packages it walks

    for rel, text in files.items():
        path = tmp_path / "fakepkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    package = types.SimpleNamespace(__file__=str(tmp_path / "fakepkg" / "__init__.py"), __name__="fakepkg")
    return package


FAKE_LAYERS = (("fakepkg", "fakepkg.base"), ("fakepkg.io",), ("fakepkg.models",), ("fakepkg.cli",))


def test_a_deliberate_upward_import_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary package whose reader imports a model inside a function: one upward edge."""
    package = _fake_package(tmp_path, {
        "__init__.py": "",
        "base.py": "X = 1\n",
        "io/__init__.py": "",
        "io/reader.py": "from fakepkg.base import X\n\ndef read():\n    from fakepkg.models.fit import fit\n    return fit\n",
        "models/__init__.py": "",
        "models/fit.py": "from fakepkg.io.reader import read\n\ndef fit():\n    return read\n",
    }, monkeypatch)
    edges = graph(package)
    assert upward(edges, FAKE_LAYERS) == [("fakepkg.io.reader", "fakepkg.models.fit")]
    assert circles(edges) == [["fakepkg.io.reader", "fakepkg.models.fit"]]


def test_the_real_layers_catch_an_added_upward_import() -> None:
    """One added edge from the readers to reliab.models is reported, on the real graph."""
    added = Edge("reliab.io._lines", "reliab.models.weibull", None, 1)
    assert upward([*EDGES, added]) == [*sorted({*upward(EDGES), ("reliab.io._lines", "reliab.models.weibull")})]
    assert _unexcused(upward([*EDGES, added]), "layer") == [("reliab.io._lines", "reliab.models.weibull")]


def test_private_imports_across_packages_fail() -> None:
    edges = [
        Edge("reliab.cli.ingest", "reliab.io._driver", "run_keys", 1),  # a private module
        Edge("reliab.fleet.rates", "reliab.windows", "_measurements", 1),  # a private name
        Edge("reliab.io.formats.kernel._bulk", "reliab.io._lines", "frame", 1),  # inside reliab.io: allowed
        Edge("reliab.models.jobs.cost", "reliab.models.jobs._timeline", "_ns", 1),  # same package: allowed
        Edge("reliab.report.summary", "reliab._checks", "verify", 1),  # the shared base: allowed
    ]
    assert private_crossings(edges) == [("reliab.cli.ingest", "reliab.io._driver"),
                                        ("reliab.fleet.rates", "reliab.windows")]
    assert cli_private(edges) == [("reliab.cli.ingest", "reliab.io._driver")]


def test_circles_are_found_largest_first() -> None:
    """Hand-written graph: a 3-circle, a 2-circle, a self-import and a chain."""
    def e(a: str, b: str) -> Edge:
        return Edge(a, b, None, 1)

    edges = [e("a", "b"), e("b", "c"), e("c", "a"), e("d", "e"), e("e", "d"), e("f", "f"), e("f", "g")]
    assert circles(edges) == [["a", "b", "c"], ["d", "e"]]


def test_the_public_names_the_cli_uses_exist() -> None:
    """What the CLI takes from reliab.io and reliab.models.jobs is public there, the same object."""
    import importlib

    import reliab.io
    import reliab.models.jobs

    for name, module in reliab.io._LAZY.items():  # noqa: SLF001 - the table of the lazy names
        assert getattr(reliab.io, name) is getattr(importlib.import_module(module), name), name
        assert name in reliab.io.__all__ and name in dir(reliab.io)
    assert reliab.io.run_keys()[:2] == ("policy", "job_name")
    assert reliab.models.jobs.to_hours("90min", "restart_h") == 1.5
    assert reliab.models.jobs.DEFAULT_RESTARTS_MIN == importlib.import_module(
        "reliab.models.jobs.checkpoint").DEFAULT_RESTARTS_MIN

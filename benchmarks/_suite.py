"""The benchmark suite's plumbing: figures beside their baselines, the machine, one table, a JSON file.

Every benchmark returns :class:`Figure` rows: a measured value and, measured in the same
run on the same input, the baseline it is read against (``grep``, a bare ``gzip`` read,
lifelines, statsmodels, one worker…), with the ratio and the project's target where
there is one.  :func:`machine` describes where it ran (CPU, cores, memory, load average:
on a shared machine every absolute number moves with the load, the ratios much less).
:func:`write` saves ``benchmarks/results/<date>.json``; :func:`previous` finds the last
earlier file so that the table can show how each figure moved.
"""

from __future__ import annotations

import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
WORK = Path(__file__).parent / "_work"


@dataclass(frozen=True)
class Figure:
    """One measured figure and its baseline (same run, same input).

    ``ratio`` is ``value / baseline`` (for times: how many times slower than the baseline;
    for a speed-up the value is itself a ratio and the baseline 1).  ``target`` states the
    goal in words; ``met`` says whether the value meets it (``None``: no target).
    """

    section: str
    name: str
    value: float
    unit: str
    baseline: str = ""
    baseline_value: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.baseline_value in (None, 0):
            return None
        return self.value / float(self.baseline_value)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


def from_script(section: str, module: Any, argv: list[str], fallback: Callable[[], list[Figure]]) -> list[Figure]:
    """The figures of a benchmark script: its ``main(argv)`` if it takes arguments, else ``fallback()``.

    ``main(argv)`` may return a list of :class:`Figure`, or a dict: ``{"figures": [...]}`` or
    ``{name: Figure | dict of Figure fields | number}`` (a bare number becomes a figure
    without unit or baseline).
    """
    main = getattr(module, "main", None)
    if main is None or not inspect.signature(main).parameters:
        return fallback()
    return figures_of(section, main(argv))


def figures_of(section: str, result: Any) -> list[Figure]:
    """``result`` of a script's ``main(argv)`` as figures (see :func:`from_script`)."""
    if isinstance(result, dict) and "figures" in result:
        result = result["figures"]
    items = result.items() if isinstance(result, dict) else ((None, r) for r in result)
    out = []
    for name, item in items:
        if isinstance(item, Figure):
            out.append(item)
        elif isinstance(item, dict):
            known = {k: v for k, v in item.items() if k in Figure.__dataclass_fields__}
            out.append(Figure(**{"section": section, "name": str(name), "unit": "", **known}))
        elif isinstance(item, (int, float)):
            out.append(Figure(section, str(name), float(item), ""))
        else:
            raise TypeError(f"{section}: cannot read figure {name!r} of type {type(item).__name__}")
    return out


def median_time(fn: Callable[[], object], runs: int = 3, warm: bool = True) -> float:
    """Median wall seconds of ``runs`` calls (after one warm-up call)."""
    if warm:
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def child(cmd: list[str], env: dict[str, str] | None = None, out: list[str] | None = None) -> tuple[float, float | None]:
    """Run ``cmd`` as a child; its wall seconds and peak RSS in MiB (GNU ``time -f %M``).

    Output goes to a temporary file (GNU grep stops at the first match on /dev/null).
    """
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    with tempfile.TemporaryFile() as sink, tempfile.NamedTemporaryFile("r") as rss:
        full = [gnu_time, "-f", "%M", "-o", rss.name, *cmd] if gnu_time else cmd
        start = time.perf_counter()
        code = subprocess.call(full, stdout=sink, stderr=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - start
        text = rss.read().strip().splitlines()
        if out is not None:
            sink.seek(0)
            out.append(sink.read().decode())
    if code not in (0, 1):  # grep exits 1 when nothing matches
        raise RuntimeError(f"{' '.join(cmd[:3])}… failed with status {code}")
    return wall, (int(text[-1]) / 1024 if text and text[-1].isdigit() else None)


def median_child(cmd: list[str], runs: int = 3, env: dict[str, str] | None = None
                 ) -> tuple[float, float | None, list[str]]:
    """Median wall seconds, largest peak RSS (MiB) and outputs of ``runs`` runs of ``cmd``."""
    outs: list[str] = []
    results = [child(cmd, env, outs) for _ in range(runs)]
    rss = [r for _, r in results if r is not None]
    return statistics.median(w for w, _ in results), (max(rss) if rss else None), outs


def grep_cpu(words: tuple[str, ...] | list[str], path: Path) -> tuple[float, int]:
    """CPU seconds of one ``grep -c -F -e word …`` child over ``path``, and its count."""
    import resource

    grep = ["grep", "-c", "-F", *(x for w in words for x in ("-e", w)), str(path)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(grep, capture_output=True, text=True, check=False).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), int(out.split()[0])


_COUNTED = """
import resource, sys
from reliab.io.formats import {module} as m
full, n = m.{parser}, [0]
def counted(text, ctx):
    n[0] += 1
    return full(text, ctx)
m.{parser} = counted
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
c = cpu()
r = m.{reader}(sys.argv[1], year={year})
print(cpu() - c, len(r.tables["signals"]), n[0])
"""


def counted_reader_cpu(module: str, parser: str, reader: str, year: int, path: Path, cwd: Path,
                       base: str | None = None) -> tuple[float, int, int]:
    """CPU seconds of ``reliab.io.formats.<module>.<reader>(path, year=year)`` in a fresh child,
    its signal rows, and the lines its per-line parser ``<parser>`` took.

    ``base``: the checkout whose ``reliab`` the child imports (default this one); ``cwd`` is
    the child's working directory (a ``-c`` child puts it first on ``sys.path``: keep it out
    of any checkout).
    """
    code = _COUNTED.format(module=module, parser=parser, reader=reader, year=year)
    env = dict(os.environ, PYTHONPATH=base or str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         check=True, cwd=cwd, env=env).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def machine() -> dict[str, Any]:
    """CPU model, cores, memory, load averages, Python and library versions."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    versions = {}
    for mod in ("reliab", "pandas", "numpy", "polars", "pyarrow", "dask", "distributed", "lifelines",
                "statsmodels"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - a missing optional library is just not listed
            pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "platform": platform.platform(),
            "python": sys.version.split()[0], "load_average": list(os.getloadavg()), "versions": versions}


def previous(before: str, quick: bool = False) -> dict[str, Any] | None:
    """The newest results file older than ``before`` (a file name) of the same kind (quick or not)."""
    for path in sorted(RESULTS.glob("*.json"), reverse=True):
        if path.name >= before:
            continue
        data = json.loads(path.read_text())
        if bool(data.get("machine", {}).get("quick")) == quick:
            return data
    return None


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    if unit == "x" or abs(x) < 10:
        text = f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}"
    elif abs(x) < 1e4:
        text = f"{x:.1f}"
    else:
        text = f"{x:,.0f}"
    return f"{text} {unit}".strip()


def table(figures: list[Figure], before: dict[str, Any] | None = None) -> str:
    """The one table: figure, value, baseline, ratio, target (met?), previous run's value."""
    old = {(f["section"], f["name"]): f for f in (before or {}).get("figures", [])}
    header = ["section", "figure", "value", "baseline", "baseline value", "ratio", "target", "previous"]
    rows = [header]
    for f in figures:
        prev = old.get((f.section, f.name))
        target = f.target + ("" if f.met is None else " ✓" if f.met else " ✗")
        rows.append([f.section, f.name, _fmt(f.value, f.unit), f.baseline, _fmt(f.baseline_value, f.unit),
                     _fmt(f.ratio, "x"), target, _fmt(prev["value"], f.unit) if prev else "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  [{f.section}: {f.name}] {f.note}" for f in figures if f.note]
    return "\n".join(lines + (["", "notes:"] + notes if notes else []))


def report(figures: list[Figure]) -> dict[str, Any]:
    """Print the table and the load average of a script run; the figures as a dict for ``main``."""
    print(table(figures))
    load = os.getloadavg()[0]
    print(f"load average (1 min) at the end: {load:.2f} on {os.cpu_count()} CPUs")
    return {"figures": [f.to_dict() for f in figures], "load_average": load, "cpus": os.cpu_count()}


def appended(data: dict[str, Any], figures: list[Figure], info: dict[str, Any]
             ) -> tuple[list[Figure], dict[str, Any]]:
    """The figures of an earlier results file (``data``, as read) whose sections were not run
    again, then ``figures``; ``info`` with the earlier run's machine description under ``"runs"``."""
    again = {f.section for f in figures}
    keep = [Figure(**{k: v for k, v in f.items() if k != "ratio"}) for f in data["figures"]
            if f["section"] not in again]
    earlier = dict(data["machine"])
    runs = [*earlier.pop("runs", []), {k: v for k, v in earlier.items() if k != "extra"}]
    return keep + figures, {**info, "runs": runs}


def write(figures: list[Figure], info: dict[str, Any], name: str) -> Path:
    """Save the run as ``benchmarks/results/<name>`` (JSON) and return its path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps({"machine": info, "figures": [f.to_dict() for f in figures]}, indent=1,
                               default=str) + "\n", encoding="utf-8")
    return path

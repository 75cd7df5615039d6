"""Re-run the committed R reference scripts and fail if a committed value drifted.

Run from the repository root:  python tests/reference/r/check.py
Each ``<topic>.R`` here (not ``common.R``, ``datasets.R``) writes ``<topic>_values.csv``
(case, quantity, value at 17 significant digits) into the folder it is given; the committed
file must agree to 1e-9 relative (a newer R release may move the last digits of an iterative
fit).  ``datasets.R`` must re-export the committed CSVs of R's datasets unchanged.  Exit code
1 on any drift, with every difference listed; 0 when all agree.
"""

from __future__ import annotations

import csv
import filecmp
import math
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RTOL = 1e-9


def _read(path: Path) -> dict[tuple[str, str], float]:
    with path.open(newline="") as fh:
        return {(r["case"], r["quantity"]): float(r["value"]) for r in csv.DictReader(fh)}


def _differs(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return not (math.isnan(a) and math.isnan(b))
    if math.isinf(a) or math.isinf(b):
        return a != b
    return abs(a - b) > RTOL * max(1.0, abs(a), abs(b))


def _compare(topic: str, fresh: Path) -> list[str]:
    committed = HERE / f"{topic}_values.csv"
    if not committed.exists():
        return [f"{topic}: no committed {committed.name}"]
    old, new = _read(committed), _read(fresh)
    problems = [f"{topic}: {k} missing from the fresh run" for k in old.keys() - new.keys()]
    problems += [f"{topic}: {k} not in the committed values" for k in new.keys() - old.keys()]
    problems += [f"{topic}: {k} committed {old[k]!r}, R now {new[k]!r}"
                 for k in old.keys() & new.keys() if _differs(old[k], new[k])]
    return problems


def main() -> int:
    root = HERE.parents[2]
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        subprocess.run(["Rscript", str(HERE / "datasets.R"), str(data)], check=True, cwd=root)
        for csv_path in sorted((HERE / "data").glob("*.csv")):
            if not filecmp.cmp(csv_path, data / csv_path.name, shallow=False):
                problems.append(f"data/{csv_path.name}: R's dataset differs from the committed CSV")
        scripts = sorted(p for p in HERE.glob("*.R") if p.name not in ("common.R", "datasets.R"))
        for script in scripts:
            subprocess.run(["Rscript", str(script), tmp], check=True, cwd=root)
            problems += _compare(script.stem, Path(tmp) / f"{script.stem}_values.csv")
    for p in problems:
        print(p)
    print(f"R reference: {len(scripts)} script(s), {len(problems)} drift(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

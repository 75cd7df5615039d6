"""How much of the real-world log corpus reliab reads correctly, per family and per file.

Run: ``python benchmarks/real_world_coverage.py [--files] [--details] [--family kernel]``
(with reliab installed, or ``PYTHONPATH=.`` from the repository root).

The corpus is ``tests/reference/real_world/``: verbatim log text from public issue threads
and other projects' fixtures, each file beside a hand-written ``.expected.toml`` (format and
rules in that folder's README).  The scorer is ``tests/_real_world.py``; this script prints

* per family: files, sniffed source right, accounting right, recall (timed events, jobs or
  telemetry checks), recall of untimed events, precision, with the raw counts;
* with ``--files``: the same per file;
* with ``--details``: every missed event, spurious signal and failed telemetry check, which
  is the work list for the readers.

No baseline is printed: the corpus *is* the reference (the hand expectations), so the
numbers are reliab's distance from a correct reader.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _real_world as rw  # noqa: E402


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _family_table(scores: list[rw.FamilyScore]) -> list[str]:
    out = [f"{'family':<11} {'files':>5} {'source':>7} {'lines':>6} {'recall':>16} {'untimed':>14} {'precision':>16}"]
    for s in scores:
        c = s.counts()
        n = c["files"]
        out.append(
            f"{s.family:<11} {n:>5} {s.sources_ok:>3}/{n:<3} {s.accounting_ok:>2}/{n:<3} "
            f"{_pct(s.recall)} {c['recall_passed']:>4}/{c['recall_total']:<4} "
            f"{_pct(s.recall_untimed)} {c['untimed_matched']:>3}/{c['untimed_expected']:<3} "
            f"{_pct(s.precision)} {c['correct']:>4}/{c['emitted']:<4}")
    return out


def _file_rows(score: rw.FamilyScore) -> list[str]:
    out = []
    for f in score.files:
        passed, total = f.recall_units
        src = f.sniffed_source if f.source_ok else f"{f.sniffed_source} (want {f.expected_source})"
        acc = "ok" if f.accounting_ok else f"BAD {f.accounting} of {f.file_lines}"
        out.append(f"  {f.case.slug:<58} {src:<28} recall {passed:>3}/{total:<3} "
                   f"untimed {f.untimed_matched}/{f.untimed_expected} precision {f.correct}/{f.emitted} "
                   f"lines {acc}{'' if f.error is None else '  ERROR ' + f.error}")
    return out


def _details(score: rw.FamilyScore) -> list[str]:
    out = []
    for f in score.files:
        if f.perfect and not f.notes:
            continue
        out.append(f"  {f.case.name} ({f.case.data_path.name})")
        if f.error:
            out.append(f"    error: {f.error}")
        if not f.source_ok:
            out.append(f"    source: {f.sniffed_source} (expected {f.expected_source})")
        out += [f"    missed   {m}" for m in f.missed]
        out += [f"    spurious {s}" for s in f.spurious]
        out += [f"    check    {c}" for c in f.check_failures]
        out += [f"    note     {n}" for n in f.notes]
        if f.quarantined:
            out.append(f"    quarantined lines {f.quarantined[:20]}{' ...' if len(f.quarantined) > 20 else ''}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the coverage tables; return 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=rw.FAMILIES, action="append", help="only these families")
    ap.add_argument("--files", action="store_true", help="one line per file")
    ap.add_argument("--details", action="store_true", help="missed / spurious / failed checks")
    args = ap.parse_args(argv)
    scores = [rw.score_family(f) for f in (args.family or rw.FAMILIES)]
    print("\n".join(_family_table(scores)))
    if args.files or args.details:
        for s in scores:
            lines = (_file_rows(s) if args.files else []) + (_details(s) if args.details else [])
            print(f"\n{s.family}" + "".join(f"\n{line}" for line in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Checks shared by the tests of the NCCL reader's shortcuts (``test_nccl_quiet``,
``test_nccl_info_shortcut``): a shortcut must give exactly what the per-line parser gives,
line by line (rows, what they raise, the state left for ``finish``) and on whole files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io.formats import nccl


def context(tz: Any) -> LineContext:
    return LineContext("slurm-42.out", "nccl", options={"year": 2024},
                       state={"tz": tz, "job_id": "42", "recent": []})


def run(parse: Any, lines: list[str], ctx: LineContext) -> list[Any]:
    """``parse`` over ``lines``: per line its row(s), ``None``, or ``("ParseError", message)``."""
    out: list[Any] = []
    for lineno, text in enumerate(lines, 1):
        ctx.lineno = lineno
        try:
            row = parse(text, ctx)
        except ParseError as exc:
            out.append(("ParseError", exc.message))
            continue
        if isinstance(row, dict):
            row["_lineno"] = lineno
        out.append(row)
    return out


def rows_repr(rows: list[Any]) -> list[str]:
    """Rows compared through ``repr`` (a Timestamp's zone and resolution included)."""
    return [repr(sorted(r.items())) if isinstance(r, dict) else repr(r) for r in rows]


def assert_same_as_per_line(lines: list[str], tz: Any) -> list[Any]:
    """``parse_nccl_line`` (with its shortcuts) and ``parse_line_fully`` agree on ``lines``: row
    by row, after ``finish`` and on the state they leave.  Returns the shortcut's rows."""
    fast_ctx, slow_ctx = context(tz), context(tz)
    fast = run(nccl.parse_nccl_line, lines, fast_ctx)
    slow = run(nccl.parse_line_fully, lines, slow_ctx)
    assert rows_repr(fast) == rows_repr(slow)
    assert rows_repr(nccl._finish([r for r in fast if isinstance(r, dict)], fast_ctx)) == rows_repr(
        nccl._finish([r for r in slow if isinstance(r, dict)], slow_ctx))
    assert repr(sorted(fast_ctx.state.items())) == repr(sorted(slow_ctx.state.items()))
    return fast


def frames(path: str) -> tuple[Any, ...]:
    res = nccl.read_nccl(path)
    return (res.lines, res.parsed, res.irrelevant, res.malformed, res.notes, res.tables["signals"],
            res.quarantine)


def assert_files_same_without(shortcut: str, files: list[str], monkeypatch: pytest.MonkeyPatch,
                              ) -> tuple[list[tuple[Any, ...]], list[bool]]:
    """``files`` read with and without the reader's ``shortcut`` (``nccl.<shortcut>``, a line
    test) give the same counts, notes, signals and quarantine.  Returns the results read with
    it and, per line it was asked about, whether it took the line."""
    taken: list[bool] = []
    real: Callable[..., bool] = getattr(nccl, shortcut)
    monkeypatch.setattr(nccl, shortcut, lambda text, ctx: taken.append(real(text, ctx)) or taken[-1])
    fast = [frames(f) for f in files]
    monkeypatch.setattr(nccl, shortcut, lambda text, ctx: False)
    slow = [frames(f) for f in files]
    for f, a, b in zip(files, fast, slow, strict=True):
        assert a[:5] == b[:5], f
        pd.testing.assert_frame_equal(a[5], b[5], check_exact=True)
        if a[6] is None or b[6] is None:
            assert a[6] is b[6], f
        else:
            pd.testing.assert_frame_equal(a[6], b[6])
    return fast, taken

"""The kernel sniffer weighs a repeated head line once: the score is that of weighing every line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats import kernel

_LINES = ["[Fri Jun  7 12:13:51 2024] mlx5_core 0000:8c:00.1: failed", "[Fri Jun  7 12:13:51 2024] ",
          "2024-06-03T14:02:11.123456+00:00 node1 kernel: NVRM: Xid 79", "Jun  3 14:02:11 node1 kernel: x",
          "[12345.678901] nvme nvme0: I/O error", "random text", "", "   ", "[  +0.000001] y", "<6>kernel: z"]


def _every_line(lines: list[str]) -> float:
    """``sniff_kernel`` with each line weighed on its own, repeats included."""
    rows = [ln for ln in lines if ln.strip()]
    if not rows:
        return 0.0
    if sum(ln.startswith(kernel._NO_CLOCK) for ln in rows) * 2 >= len(rows):
        return 0.5
    hits = [w for w in map(kernel._stamp_weight, rows) if w > 0]
    if len(hits) * 2 < len(rows):
        return 0.0
    bonus = 0.05 if any("kernel" in ln or "NVRM" in ln for ln in rows) else 0.0
    return min(1.0, len(hits) / len(rows) * max(hits) + bonus)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=20))
def test_repeated_lines_keep_the_score(lines: list[str]) -> None:
    assert kernel.sniff_kernel("x.log", lines) == _every_line(lines)

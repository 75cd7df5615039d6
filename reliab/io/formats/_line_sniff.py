"""How many of a file's first lines one record pattern reads: the sniff of line formats whose
every record has one shape (the labelled HPC logs of the USENIX CFDR and LogHub)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def matching_lines(pattern: re.Pattern[str], lines: Sequence[str], *, head: int = 3) -> tuple[int, int]:
    """``(hits, n)``: how many of the ``n`` non-blank ``lines`` ``pattern`` matches whole.

    When none of the first ``head`` non-blank lines matches, ``hits`` is 0 without reading the
    rest: most files are told apart by their first lines, and this keeps the sniff cheap.
    """
    text = [line.rstrip("\r\n") for line in lines if line.strip()]
    if not any(pattern.fullmatch(line) for line in text[:head]):
        return 0, len(text)
    return sum(pattern.fullmatch(line) is not None for line in text), len(text)


__all__ = ["matching_lines"]

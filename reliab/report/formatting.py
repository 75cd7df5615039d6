"""Number and text formatting for report tables: significant digits, intervals, escapes."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

DASH = "—"

def fmt_num(x: Any, sig: int = 4) -> str:
    """Format a number with ``sig`` significant digits, thousands separators, no exponent.

    Examples
    --------
    >>> fmt_num(0.16731), fmt_num(50677.3), fmt_num(float("inf")), fmt_num(float("nan"))
    ('0.1673', '50,677', '∞', '—')
    """
    return fmt_with(x, decimals(x, sig))


def fmt_interval(est: Any, low: Any, high: Any, sig: int = 4) -> str:
    """Format ``est [low, high]`` with the decimals of the estimate applied to all three.

    Examples
    --------
    >>> fmt_interval(0.16731, 0.14142, 0.19661)
    '0.1673 [0.1414, 0.1966]'
    """
    ref = est if finite(est) and float(est) != 0 else (high if finite(high) else low)
    d = decimals(ref, sig)
    return f"{fmt_with(est, d)} [{fmt_with(low, d)}, {fmt_with(high, d)}]"


def fmt_int(x: Any) -> str:
    """Format a count with thousands separators (``—`` when missing)."""
    return DASH if x is None or pd.isna(x) else f"{int(x):,}"


def fmt_pct(x: Any, decimals: int = 1) -> str:
    """Format a percentage value (already × 100) without the ``%`` sign."""
    return DASH if x is None or pd.isna(x) else f"{float(x):.{decimals}f}"


def finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def decimals(x: Any, sig: int) -> int:
    if not finite(x) or float(x) == 0:
        return 0
    return max(0, sig - 1 - math.floor(math.log10(abs(float(x)))))


def fmt_with(x: Any, decimals: int) -> str:
    if x is None or pd.isna(x):
        return DASH
    v = float(x)
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:,.{decimals}f}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: Any, limit: int = 160) -> str:
    """Make a raw log line safe to show: control characters as ``\\xNN``, long lines cut.

    HTML escaping is the renderer's job; this only removes what no renderer can show.
    """
    if text is None or pd.isna(text):
        return ""
    s = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)).replace("\t", "  ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


# ---------------------------------------------------------------------------- helpers

"""Number and text formatting for the report: significant figures, units, intervals, escapes.

Estimates are shown to 3 significant figures (counts exactly), an interval with the same
decimals as its estimate, very long times in larger units (GPU-hours beyond ten GPU-years as
GPU-years), p-values to 2 figures.  Rendering only: nothing here estimates.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

DASH = "—"
SIG = 3
HOURS_PER_YEAR = 8766.0  # Julian year, 365.25 days


def finite(x: Any) -> bool:
    """True for a finite real number."""
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def decimals(x: Any, sig: int = SIG) -> int:
    """Decimals that show ``x`` to ``sig`` significant figures (0 for large values)."""
    if not finite(x) or float(x) == 0:
        return 0
    return max(0, sig - 1 - math.floor(math.log10(abs(float(x)))))


def fmt_with(x: Any, decimals: int) -> str:
    """``x`` with thousands separators and ``decimals`` decimals; ``—`` missing, ``∞`` infinite."""
    if x is None or (not isinstance(x, str) and pd.isna(x)):
        return DASH
    v = float(x)
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:,.{decimals}f}"


def fmt_num(x: Any, sig: int = SIG) -> str:
    """A number to ``sig`` significant figures, thousands separators, no exponent for
    ordinary sizes (scientific beyond 1e15 or below 1e-6).

    Examples
    --------
    >>> fmt_num(0.16731), fmt_num(50677.3), fmt_num(float("inf")), fmt_num(float("nan"))
    ('0.167', '50,700', '∞', '—')
    """
    if finite(x) and float(x) != 0 and not 1e-6 <= abs(float(x)) < 1e15:
        return f"{float(x):.{sig - 1}e}"
    return fmt_with(_round_sig(x, sig), decimals(x, sig))


def _round_sig(x: Any, sig: int) -> Any:
    """Large values rounded to ``sig`` significant figures (50,677 -> 50,700)."""
    if not finite(x) or float(x) == 0:
        return x
    digits = math.floor(math.log10(abs(float(x)))) + 1
    return round(float(x), sig - digits) if digits > sig else x


def fmt_interval(est: Any, low: Any, high: Any, sig: int = SIG) -> str:
    """``est [low, high]`` with the estimate's decimals applied to all three.

    Examples
    --------
    >>> fmt_interval(0.16731, 0.14142, 0.19661)
    '0.167 [0.141, 0.197]'
    """
    ref = est if finite(est) and float(est) != 0 else (high if finite(high) else low)
    if finite(ref) and float(ref) != 0 and not 1e-6 <= abs(float(ref)) < 1e15:
        return f"{fmt_num(est, sig)} [{fmt_num(low, sig)}, {fmt_num(high, sig)}]"
    d = decimals(ref, sig)
    return " ".join((fmt_with(_round_sig(est, sig), d), f"[{fmt_with(_round_sig(low, sig), d)},",
                     f"{fmt_with(_round_sig(high, sig), d)}]"))


def fmt_int(x: Any) -> str:
    """A count with thousands separators (``—`` when missing)."""
    return DASH if x is None or pd.isna(x) else f"{int(x):,}"


def fmt_pct(x: Any, decimals: int = 1) -> str:
    """A percentage value (already x 100) without the ``%`` sign."""
    return DASH if x is None or pd.isna(x) else f"{float(x):.{decimals}f}"


def fmt_p(p: Any) -> str:
    """A p-value to 2 significant figures, ``<0.001`` below that."""
    if not finite(p):
        return DASH
    return "<0.001" if float(p) < 0.001 else fmt_num(float(p), 2)


def fmt_hours(h: Any, unit: str = "h") -> str:
    """A duration in hours in a readable unit: minutes below 1 h, days beyond 1,000 h, years
    beyond ten years (``unit`` names the unit-hours, e.g. ``"GPU-h"``)."""
    if not finite(h):
        return fmt_num(h)
    v = float(h)
    if unit != "h" and v >= 10 * HOURS_PER_YEAR:
        return f"{fmt_num(v / HOURS_PER_YEAR)} {unit.replace('-h', '-years')}"
    if unit == "h" and v < 1:
        return f"{fmt_num(60 * v)} min"
    if unit == "h" and v >= 1000:
        return f"{fmt_num(v / 24)} days"
    return f"{fmt_num(v)} {unit}"


#: control characters, and the invisible ones that reorder or hide text (bidi controls,
#: zero-width characters: Unicode TR 9 and the "Trojan Source" attack, CVE-2021-42574)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_text(text: Any, limit: int = 160) -> str:
    """Make a raw log line safe to show: control characters as ``\\xNN``, long lines cut.

    HTML escaping is the renderer's job; this only removes what no renderer can show.
    """
    if text is None or (not isinstance(text, str) and pd.isna(text)):
        return ""
    s = _CONTROL.sub(_escaped, str(text)).replace("\t", "  ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


__all__ = ["DASH", "HOURS_PER_YEAR", "SIG", "clean_text", "decimals", "finite", "fmt_hours",
           "fmt_int", "fmt_interval", "fmt_num", "fmt_p", "fmt_pct", "fmt_with"]

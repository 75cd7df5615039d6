"""Invariants of published numbers: what every result declares must hold before it is shown.

A result class declares its invariants with a method ``invariants() -> tuple[Check, ...]``
(ETTR in [0, 1], counts conserved across categories, an interval containing its estimate,
costs of the same sign as the ETTR change ...).  :func:`verify` runs them on a mapping of
results before anything is rendered: a result with a failed check is replaced by a
:class:`~reliab.NotAvailable` whose reason names the check ("not shown: failed check
<name>"), and the failures (with their detail) are returned so the data-quality section can
list them.
A failed check is a bug in reliab, never a property of the data; under test
(``RELIAB_STRICT_CHECKS=1``, set by the test suite) it raises :class:`InvariantError`.

The helpers below build :class:`Check` values; none of them raises on a violated invariant.
This module sits below ``models`` and ``report`` so that both can use it.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from reliab._result import NotAvailable

#: environment variable that turns a failed check into an exception (the test suite sets it)
STRICT_ENV = "RELIAB_STRICT_CHECKS"


class InvariantError(AssertionError):
    """A published number broke an invariant its result declares (a bug in reliab)."""


@dataclasses.dataclass(frozen=True)
class Check:
    """One invariant and whether it held.

    Attributes
    ----------
    name : str
        Short identifier, e.g. ``"ettr_in_unit_interval"``; shown as "failed check <name>".
    ok : bool
        Whether the invariant held.
    detail : str
        What was checked and the values found, in words a reader can act on.
    """

    name: str
    ok: bool
    detail: str = ""


def _values(value: Any) -> np.ndarray:
    if np.isscalar(value) or value is None:
        value = [value]
    arr = np.asarray(list(value) if not isinstance(value, np.ndarray) else value, dtype=object)
    return np.array([np.nan if v is None else v for v in arr.ravel()], dtype=float)


def finite(name: str, value: Any, *, allow_nan: bool = False) -> Check:
    """Every value is a finite number (no infinity; no NaN unless ``allow_nan``: a bound that
    the result says is not estimable)."""
    v = _values(value)
    bad = np.isinf(v) if allow_nan else ~np.isfinite(v)
    return Check(name, not bad.any(), f"{int(bad.sum())} of {v.size} value(s) not finite" if bad.any()
                 else f"{v.size} finite value(s)")


def in_range(name: str, value: Any, lo: float = -math.inf, hi: float = math.inf, *,
             allow_nan: bool = False, tol: float = 1e-9) -> Check:
    """Every value lies in ``[lo, hi]`` (within ``tol``); NaN fails unless ``allow_nan``."""
    v = _values(value)
    nan = np.isnan(v)
    out = (~nan) & ((v < lo - tol) | (v > hi + tol))
    bad = out | (nan & (not allow_nan))
    if not bad.any():
        return Check(name, True, f"{v.size} value(s) in [{lo:g}, {hi:g}]")
    first = v[bad][0]
    return Check(name, False, f"{int(bad.sum())} of {v.size} value(s) outside [{lo:g}, {hi:g}] "
                              f"(first: {float(first)!r})")


def contains(name: str, lower: Any, estimate: Any, upper: Any, *, tol: float = 1e-9) -> Check:
    """Each interval ``[lower, upper]`` contains its estimate (NaN bounds are not checked)."""
    lo, est, hi = _values(lower), _values(estimate), _values(upper)
    scale = np.maximum(1.0, np.abs(est))
    with np.errstate(invalid="ignore"):
        bad = ((lo > est + tol * scale) | (hi < est - tol * scale)) & np.isfinite(est)
    if not bad.any():
        return Check(name, True, f"{est.size} interval(s) contain their estimate")
    i = int(np.flatnonzero(bad)[0])
    return Check(name, False, f"{int(bad.sum())} interval(s) miss their estimate "
                              f"(first: {float(est[i])!r} not in [{float(lo[i])!r}, {float(hi[i])!r}])")


def equal(name: str, a: Any, b: Any, *, rtol: float = 1e-9, atol: float = 1e-9,
          what: str = "") -> Check:
    """``a`` equals ``b`` within tolerance (conservation: a total and the sum of its parts)."""
    x, y = _values(a), _values(b)
    ok = x.shape == y.shape and bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))
    label = f"{what}: " if what else ""
    return Check(name, ok, f"{label}{a!r} {'==' if ok else '!='} {b!r}")


def same_sign(name: str, a: float, b: float, *, tol: float = 1e-9) -> Check:
    """``a`` and ``b`` have the same sign (either may be zero within ``tol``)."""
    ok = not ((a > tol and b < -tol) or (a < -tol and b > tol)) and not (
        math.isnan(a) or math.isnan(b))
    return Check(name, ok, f"{a!r} and {b!r} {'agree' if ok else 'differ'} in sign")


def monotone(name: str, value: Any, *, increasing: bool = False, tol: float = 1e-9) -> Check:
    """The values never rise (a survival curve), or never fall with ``increasing`` (a
    cumulative function); NaN values are skipped."""
    v = _values(value)
    v = v[~np.isnan(v)]
    step = np.diff(v) if increasing else -np.diff(v)
    bad = step < -tol * np.maximum(1.0, np.abs(v[1:]))
    way = "falls" if increasing else "rises"
    if not bad.any():
        return Check(name, True, f"{v.size} value(s) monotone")
    i = int(np.flatnonzero(bad)[0])
    return Check(name, False, f"{way} {int(bad.sum())} time(s) (first: {float(v[i])!r} -> "
                              f"{float(v[i + 1])!r})")


def positive(name: str, value: Any, *, allow_inf: bool = False) -> Check:
    """Every value is > 0 and finite (infinite allowed with ``allow_inf``: an MTBF with no
    failure, which the report prints as such)."""
    v = _values(value)
    bad = ~(v > 0) | (np.isinf(v) & (not allow_inf))
    if not bad.any():
        return Check(name, True, f"{v.size} positive value(s)")
    return Check(name, False, f"{int(bad.sum())} of {v.size} value(s) not positive and "
                              f"{'' if allow_inf else 'finite'} (first: {float(v[bad][0])!r})")


def table_intervals(prefix: str, frame: Any, columns: Iterable[tuple[str, str, str]],
                    *, lo: float = -math.inf, hi: float = math.inf,
                    allow_nan: bool = False) -> tuple[Check, ...]:
    """For each ``(estimate, low, high)`` column triple of ``frame``: the values lie in
    ``[lo, hi]`` and each interval contains its estimate (columns absent are skipped)."""
    out: list[Check] = []
    for est, low, high in columns:
        if est not in frame or low not in frame or high not in frame:
            continue
        out.append(in_range(f"{prefix}{est}_in_range", frame[[est, low, high]].to_numpy(),
                            lo, hi, allow_nan=allow_nan))
        out.append(contains(f"{prefix}{est}_interval_contains_estimate", frame[low].to_numpy(),
                            frame[est].to_numpy(), frame[high].to_numpy()))
    return tuple(out)


def checks_of(result: Any) -> tuple[Check, ...]:
    """The checks a result declares (``()`` for a result without ``invariants``)."""
    fn = getattr(result, "invariants", None)
    if not callable(fn) or isinstance(result, NotAvailable):
        return ()
    return tuple(fn())


def strict() -> bool:
    """Whether a failed check raises (``RELIAB_STRICT_CHECKS=1``: the test suite)."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def failures(result: Any) -> tuple[Check, ...]:
    """The checks of ``result`` that failed."""
    return tuple(c for c in checks_of(result) if not c.ok)


def hidden(what: str, failed: Iterable[Check]) -> NotAvailable:
    """The stand-in shown where a result failed a check."""
    names = ", ".join(dict.fromkeys(c.name for c in failed))
    return NotAvailable(what, f"not shown: failed check {names} (listed under Data quality)")


def verify(results: Mapping[str, Any], *, raise_on_failure: bool | None = None
           ) -> tuple[dict[str, Any], tuple[tuple[str, Check], ...]]:
    """Check every result's invariants; hide each result that fails one.

    Parameters
    ----------
    results : mapping of str to result
        Results by name (NotAvailable and objects without ``invariants`` pass unchanged).
    raise_on_failure : bool, optional
        Raise :class:`InvariantError` on the first failure; default :func:`strict`.

    Returns
    -------
    (dict, tuple)
        The results with every failing one replaced by :func:`hidden`, and the pairs
        ``(name, check)`` of every failed check, for the data-quality section.
    """
    raise_on_failure = strict() if raise_on_failure is None else raise_on_failure
    out: dict[str, Any] = {}
    failed: list[tuple[str, Check]] = []
    for key, result in results.items():
        bad = failures(result)
        if bad and raise_on_failure:
            raise InvariantError(f"{key}: " + "; ".join(f"{c.name}: {c.detail}" for c in bad))
        failed += [(key, c) for c in bad]
        out[key] = hidden(key, bad) if bad else _verify_parts(key, result, failed,
                                                              raise_on_failure)
    return out, tuple(failed)


def verify_across(results: Mapping[str, Any], checks: Iterable[tuple[tuple[str, ...], Check]],
                  *, raise_on_failure: bool | None = None
                  ) -> tuple[dict[str, Any], tuple[tuple[str, Check], ...]]:
    """Checks that relate several results (a count two tables must both give): each failed
    check hides every result it names, as :func:`verify` hides one.

    Parameters
    ----------
    results : mapping of str to result
        Results by name.
    checks : iterable of (tuple of str, Check)
        The names of the results each check relates, and the check.
    raise_on_failure : bool, optional
        Raise :class:`InvariantError` on the first failure; default :func:`strict`.

    Returns
    -------
    (dict, tuple)
        As :func:`verify`; a failure is listed under the names it relates, joined by " + ".
    """
    raise_on_failure = strict() if raise_on_failure is None else raise_on_failure
    out = dict(results)
    failed: list[tuple[str, Check]] = []
    bad_of: dict[str, list[Check]] = {}
    for keys, check in checks:
        if check.ok:
            continue
        if raise_on_failure:
            raise InvariantError(f"{' + '.join(keys)}: {check.name}: {check.detail}")
        failed.append((" + ".join(keys), check))
        for key in keys:
            bad_of.setdefault(key, []).append(check)
    for key, bad in bad_of.items():
        if key in out:
            out[key] = hidden(key, bad)
    return out, tuple(failed)


def _verify_parts(key: str, result: Any, failed: list[tuple[str, Check]],
                  raise_on_failure: bool) -> Any:
    """A composite result (``results``: pairs of name and part, ``skipped``: pairs of name and
    reason, as the environment study has) with each failing part moved to ``skipped``."""
    parts = getattr(result, "results", None)
    if not (dataclasses.is_dataclass(result) and hasattr(result, "skipped")
            and isinstance(parts, tuple) and all(isinstance(p, tuple) and len(p) == 2
                                                 for p in parts)):
        return result
    kept, skipped = [], list(result.skipped)
    for name, part in parts:
        sub, bad = verify({f"{key}.{name}": part}, raise_on_failure=raise_on_failure)
        failed += list(bad)
        if bad:
            skipped.append((name, sub[f"{key}.{name}"].reason))
        else:
            kept.append((name, part))
    if len(kept) == len(parts):
        return result
    return dataclasses.replace(result, results=tuple(kept), skipped=tuple(skipped))


__all__ = ["Check", "InvariantError", "checks_of", "contains", "equal", "failures", "finite",
           "hidden", "in_range", "monotone", "positive", "same_sign", "strict", "table_intervals",
           "verify", "verify_across"]

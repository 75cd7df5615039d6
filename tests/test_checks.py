"""The invariant helpers of :mod:`reliab._checks` and :func:`verify`'s hide-or-raise rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from reliab import NotAvailable
from reliab._checks import (
    Check,
    InvariantError,
    contains,
    equal,
    finite,
    in_range,
    monotone,
    positive,
    same_sign,
    verify,
)


def test_helpers_hold_and_fail():
    assert in_range("p", [0.0, 0.5, 1.0], 0, 1).ok
    assert not in_range("p", [0.2, 1.115], 0, 1).ok
    assert not in_range("p", math.nan, 0, 1).ok
    assert in_range("p", math.nan, 0, 1, allow_nan=True).ok
    assert finite("x", [1.0, 2.0]).ok and not finite("x", [1.0, math.inf]).ok
    assert finite("x", [1.0, math.nan], allow_nan=True).ok
    assert not finite("x", [math.nan, -math.inf], allow_nan=True).ok
    assert monotone("s", [1.0, 0.8, 0.8, 0.1]).ok and not monotone("s", [1.0, 0.5, 0.5000001]).ok
    assert monotone("h", [0.0, 0.2, 0.9], increasing=True).ok
    assert positive("m", [2.0, math.inf], allow_inf=True).ok and not positive("m", [0.0]).ok
    assert not positive("m", [math.inf]).ok
    assert contains("ci", [1.0], [2.0], [3.0]).ok
    assert not contains("ci", [2.5], [2.0], [3.0]).ok
    assert equal("n", 11, 11).ok and not equal("n", 10, 11).ok
    assert same_sign("s", 2.0, 5.0).ok and same_sign("s", 0.0, -1.0).ok
    assert not same_sign("s", -101.0, 4890.0).ok


@dataclasses.dataclass(frozen=True)
class _Fake:
    ettr: float

    def invariants(self):
        return (in_range("ettr_in_unit_interval", self.ettr, 0, 1),)


def test_verify_hides_a_failing_result_and_lists_it():
    results = {"good": _Fake(0.9), "bad": _Fake(1.115), "na": NotAvailable("x", "why")}
    shown, failed = verify(results, raise_on_failure=False)
    assert shown["good"] is results["good"] and shown["na"] is results["na"]
    assert isinstance(shown["bad"], NotAvailable)
    assert "failed check ettr_in_unit_interval" in shown["bad"].reason
    assert [(k, c.name) for k, c in failed] == [("bad", "ettr_in_unit_interval")]
    assert isinstance(failed[0][1], Check)


def test_verify_raises_under_test():
    with pytest.raises(InvariantError, match="ettr_in_unit_interval"):
        verify({"bad": _Fake(-8.5e16)})

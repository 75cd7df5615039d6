"""float32 samples against float64 levels: the answers of the float64 comparison, by hand values."""

from __future__ import annotations

import numpy as np
import pytest

from reliab.fleet._levels import above, float32_floor, steps_at_least

F32 = np.float32
# neighbouring float32 values around 70.1 (spacing 2**-17 between 64 and 128)
LOW, HIGH = 70.09999847412109375, 70.10000610351562500


def test_floor_rounds_down_not_to_nearest() -> None:
    assert float32_floor(70.1) == F32(LOW)
    assert float32_floor(70.100004) == F32(LOW)  # the nearest float32 is HIGH
    assert float32_floor(70.0) == F32(70.0)
    assert float32_floor(1e300) == np.finfo(np.float32).max
    assert float32_floor(-1e300) == F32(-np.inf)
    assert np.isnan(float32_floor(np.nan))


@pytest.mark.parametrize("level, expected", [(70.1, [False, True]), (70.100004, [False, True]),
                                             (LOW, [False, True]), (HIGH, [False, False]),
                                             (70.0999, [True, True]), (np.nan, [False, False])])
def test_above_is_the_float64_comparison(level: float, expected: list[bool]) -> None:
    got = above(np.array([LOW, HIGH], F32), level)
    assert got.tolist() == expected


def test_steps_decided_in_float64_where_float32_rounds() -> None:
    x = np.array([0.5, 1e8], F32)  # exact step 99,999,999.5; float32 difference 1e8
    assert steps_at_least(x, 99_999_999.75).tolist() == [False]
    assert steps_at_least(x, 99_999_999.5).tolist() == [True]
    assert steps_at_least(np.array([0.0, 0.1], F32), 0.1).tolist() == [True]  # 0.1f is above 0.1
    assert steps_at_least(np.array([1.0, np.nan, 400.0, np.inf, np.inf], F32), 300.0).tolist() == \
        [False, False, True, False]


def test_random_float32_agree_with_float64() -> None:
    rng = np.random.default_rng(3)
    x = (rng.normal(250.0, 150.0, 20_000)).astype(F32)
    x[::97] = np.nan
    for level in (300.0, 299.99999, 300.00001, 0.1):
        ref = np.abs(np.diff(x.astype(np.float64))) >= level
        assert np.array_equal(steps_at_least(x, level), ref)
        assert np.array_equal(above(x, level), x.astype(np.float64) > level)

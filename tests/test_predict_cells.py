"""The hazard's covariate cells (sufficient statistics of the Poisson GLM) and its fit on them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def test_indicator_cells_by_hand():
    from reliab.predict._models import indicator_cells

    x = np.array([[1, 0, 1], [1, 1, 0], [1, 0, 1], [1, 0, 0]], dtype=float)
    cells, inverse = indicator_cells(x)
    # distinct rows in lexicographic order, and the cell of every row
    assert cells.tolist() == [[1, 0, 0], [1, 0, 1], [1, 1, 0]]
    assert inverse.tolist() == [1, 2, 1, 0]
    assert cells.dtype == np.float64


def test_indicator_cells_no_term_is_one_cell():
    from reliab.predict._models import indicator_cells

    cells, inverse = indicator_cells(np.ones((5, 1)))
    assert cells.tolist() == [[1.0]]
    assert inverse.tolist() == [0] * 5


def test_hazard_rate_ratio_of_one_term_is_the_ratio_of_crude_rates():
    from reliab.predict._models import GLM_TERMS, fit_hazard

    # one binary term: the Poisson MLE is saturated, so exp(beta) is the ratio of the two
    # crude rates (events / hours), here (12 / 200 d) / (8 / 800 d) = 6
    term = GLM_TERMS[0]
    frame = pd.DataFrame(0.0, index=range(1000), columns=list(GLM_TERMS))
    frame.loc[:199, term] = 3.0
    y = np.zeros(1000)
    y[:12] = 1
    y[200:208] = 1
    hz = fit_hazard(frame, y)
    assert hz.terms == (term,)
    assert hz.rate_ratios(0.95)["rate_ratio"].iloc[0] == pytest.approx(6.0, rel=1e-6)
    # the intercept is the crude rate of the rows without the term: 8 / (800 * 24 h)
    assert np.exp(hz.params[0]) == pytest.approx(8 / (800 * 24), rel=1e-6)

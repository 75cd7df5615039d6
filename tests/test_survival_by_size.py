"""Log-rank test and RMST between job-size classes in the study (reliab.study._analyses)."""

from __future__ import annotations

import pandas as pd
import pytest

from reliab.errors import InsufficientDataError
from reliab.report import build_report, render_html
from reliab.study._analyses import _logrank_by_size, _rmst_by_size, _size_class


def _life(nodes: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"hours": [1.0, 2.0, 3.0, 4.0], "cause": ["GPU", "GPU", "NIC", "GPU"],
                         "nodes": pd.array(nodes, dtype="Int64")})


def test_size_classes_by_nodes():
    """Hand-written expectation: 1 / 2-7 / 8-63 / 64+ nodes; unknown node count: no class."""
    life = pd.DataFrame({"nodes": pd.array([1, 2, 7, 8, 63, 64, 4096, None], dtype="Int64")})
    assert _size_class(life).tolist() == ["1 node", "2-7 nodes", "2-7 nodes", "8-63 nodes",
                                          "8-63 nodes", "64+ nodes", "64+ nodes", pd.NA]


def test_logrank_between_sizes_by_hand():
    """Hand computation (Mantel 1966): 1-node allocations fail at 1 h and 2 h, 8-node ones at
    3 h and 4 h.  O = 2, E = 1/2 + 1/3, V = 1/4 + 2/9, chi-square = (7/6)^2 / (17/36) = 49/17."""
    res = _logrank_by_size(_life([1, 1, 8, 8]))
    assert res.chisq == pytest.approx(49 / 17, rel=1e-12)
    assert res.table["group"].tolist() == ["1 node", "8-63 nodes"]
    assert res.table["expected"].tolist() == pytest.approx([5 / 6, 19 / 6], rel=1e-12)


def test_rmst_between_sizes_to_the_shortest_longest_time():
    """tau = min over classes of the longest run (2 h).  By hand: the 1-node curve is 1 on
    [0, 1), 1/2 on [1, 2): RMST 1.5 h; 8-node curve stays 1 to 2 h: RMST 2 h."""
    res = _rmst_by_size(_life([1, 1, 8, 8]), 0.95)
    assert res.tau == 2.0
    assert res.table["rmst"].tolist() == pytest.approx([1.5, 2.0])
    html = render_html(build_report({"job_rmst": res, "job_logrank": _logrank_by_size(
        _life([1, 1, 8, 8]))}, title="sizes"))
    assert "Restricted mean run time by job size" in html and "log-rank" in html


def test_one_size_class_is_not_compared():
    """All allocations on one node: nothing to compare, a clear reason instead of a test."""
    with pytest.raises(InsufficientDataError, match="fewer than two job-size classes"):
        _logrank_by_size(_life([1, 1, 1, 1]))


def test_gray_test_between_sizes_renders():
    """Gray's test per component class between job sizes, 1 df (two sizes).  The one NIC
    interruption (3 h) comes when only the 8-node class is still at risk: its score variance is
    0, so NIC is named in the notes rather than given an infinite statistic."""
    from reliab.study._analyses import _gray_by_size

    res = _gray_by_size(_life([1, 1, 8, 8]))
    assert res.table["cause"].tolist() == ["GPU"] and (res.table["df"] == 1).all()
    assert "NIC" in res.notes[0]
    html = render_html(build_report({"job_gray": res}, title="sizes"))
    assert "Gray&#39;s test" in html or "Gray's test" in html


def test_fine_gray_on_job_size():
    """The commonest component (GPU) regressed on log2(nodes): 1-node allocations are
    interrupted by GPUs at 1, 2 and 5 h, 8-node ones at 3 and 6 h (NIC at 4 h, one censored at
    7 h): the estimate is finite and negative (larger jobs later), and the report renders it."""
    from reliab.study._analyses import _fine_gray_by_size

    life = pd.DataFrame({"hours": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                         "cause": ["GPU", "GPU", "GPU", "NIC", "GPU", "GPU", None],
                         "nodes": pd.array([1, 1, 8, 8, 1, 8, 8], dtype="Int64")})
    res = _fine_gray_by_size(life)
    assert res.cause == "GPU" and list(res.table.index) == ["log2_nodes"]
    assert -5 < res.table.loc["log2_nodes", "coef"] < 0
    html = render_html(build_report({"job_finegray": res}, title="sizes"))
    assert "Fine-Gray regression on job size" in html


def test_fine_gray_without_a_finite_estimate_says_so():
    """Every 1-node allocation fails from GPUs before any 8-node one: the partial likelihood
    keeps rising as the coefficient goes to minus infinity (monotone likelihood), so there is
    no estimate to report, and the error says why instead of returning coef -14.7."""
    from reliab.study._analyses import _fine_gray_by_size

    with pytest.raises(InsufficientDataError, match="did not converge"):
        _fine_gray_by_size(_life([1, 1, 8, 8]))

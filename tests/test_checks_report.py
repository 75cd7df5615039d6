"""A result that breaks an invariant is never rendered: the report and the run check first.

In a user's run (``raise_on_failure=False``) the result's section says "not shown: failed
check <name>", the data-quality section lists the check in "Failed checks" and
``results.json`` records it; under test (``RELIAB_STRICT_CHECKS=1``) the run raises.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab._checks import InvariantError, in_range, verify, verify_across
from reliab._result import ResultMixin
from reliab.models.environment.study import EnvironmentStudy
from reliab.report import build_report, render_html


@dataclasses.dataclass(frozen=True)
class _Share(ResultMixin):
    """A share that must lie in [0, 1]: 1.115 is the impossible number of issue 20."""

    share: float
    n: int = 3
    conf_level: float | None = None
    method: str = "a share"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame({"share": [self.share]})

    def invariants(self):
        return (in_range("share_in_unit_interval", self.share, 0, 1),)


def _html(report) -> str:
    return render_html(report)


def test_build_report_hides_the_failing_result_and_lists_the_check():
    report = build_report({"good": _Share(0.25), "impossible": _Share(1.115)},
                          raise_on_failure=False)
    html = _html(report)
    assert "not shown: failed check share_in_unit_interval" in html
    assert "1.115" not in html.split('id="data-quality"')[0]
    quality = html.split('id="data-quality"')[1]
    assert "Failed checks" in quality and "impossible" in quality
    assert "share_in_unit_interval" in quality


def test_no_failed_checks_table_without_failures():
    html = _html(build_report({"good": _Share(0.25)}, raise_on_failure=False))
    assert "Failed checks" not in html and 'id="data-quality"' not in html


def test_build_report_raises_under_test():
    with pytest.raises(InvariantError, match="share_in_unit_interval"):
        build_report({"impossible": _Share(1.115)})


def test_a_failing_part_of_a_composite_result_is_skipped_with_the_check():
    study = EnvironmentStudy(results=(("good", _Share(0.5)), ("bad", _Share(-0.2))),
                             skipped=(("power", "no power column"),), n=1, conf_level=0.95)
    shown, failed = verify({"environment": study}, raise_on_failure=False)
    assert [(k, c.name) for k, c in failed] == [("environment.bad", "share_in_unit_interval")]
    env = shown["environment"]
    assert [name for name, _ in env.results] == ["good"]
    assert dict(env.skipped)["bad"].startswith("not shown: failed check share_in_unit_interval")
    html = _html(build_report(shown, failed_checks=failed, raise_on_failure=False))
    assert "not shown: failed check share_in_unit_interval" in html.split('id="data-quality"')[0]
    assert "environment.bad" in html.split('id="data-quality"')[1]


def _run_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, extra: dict) -> reliab.ReportRun:
    import reliab.study._run as run_mod

    def fake_analyze(*args, **kwargs):
        return dict(extra)

    monkeypatch.setattr(run_mod, "analyze", fake_analyze)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "note.txt").write_text("nothing to read here\n")
    return run_mod.run_report(tmp_path / "logs", out=tmp_path / "out", pdf=False, tables=False)


def test_run_report_records_the_failed_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("RELIAB_STRICT_CHECKS", "0")
    run = _run_with(monkeypatch, tmp_path, {"good": _Share(0.25), "impossible": _Share(1.115)})
    assert isinstance(run.results["impossible"], reliab.NotAvailable)
    assert "1 failed check(s) of published numbers" in run.headline()
    data = json.loads(run.files["results.json"].read_text())
    assert data["failed_checks"] == [{"result": "impossible", "check": "share_in_unit_interval",
                                      "detail": data["failed_checks"][0]["detail"]}]
    assert "1.115" in data["failed_checks"][0]["detail"]
    assert data["results"]["impossible"]["type"] == "NotAvailable"
    html = run.files["report.html"].read_text()
    assert "not shown: failed check share_in_unit_interval" in html
    assert "Failed checks" in html.split('id="data-quality"')[1]


def test_run_report_raises_under_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with pytest.raises(InvariantError, match="impossible: share_in_unit_interval"):
        _run_with(monkeypatch, tmp_path, {"impossible": _Share(1.115)})


def test_counts_conserved_across_the_rate_tables():
    """A table per component that totals 10 where the ingest has 11 unexpected interruptions
    (the replay-versus-report discrepancy of issue 20, in the rate tables): both hidden."""
    from reliab.study._run import count_checks

    inter = pd.DataFrame({"planned": [False] * 11 + [True]})
    by_cat = reliab.estimate_rates(inter.assign(category="Faulty GPU", component="GPU"),
                                   by="category", gpu_days=100.0)
    by_comp = reliab.estimate_rates(inter.iloc[1:].assign(component="GPU"), by="component",
                                    gpu_days=100.0)
    checks = count_checks({"rates": by_cat, "rates_by_component": by_comp}, inter)
    assert [c.ok for _, c in checks] == [True, False]
    shown, failed = verify_across({"rates": by_cat, "rates_by_component": by_comp}, checks,
                                  raise_on_failure=False)
    assert shown["rates"] is by_cat and isinstance(shown["rates_by_component"], reliab.NotAvailable)
    assert [(k, c.name) for k, c in failed] == [
        ("rates_by_component", "rates_by_component_total_is_unexpected_interruptions")]
    with pytest.raises(InvariantError, match="rates_by_component_total_is_unexpected"):
        verify_across({"rates_by_component": by_comp}, checks)

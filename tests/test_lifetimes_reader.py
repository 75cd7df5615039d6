"""The unit-lifetime reader (inventories, replacement logs) and the formula design matrix,
on hand-written files whose expected lives are written out below."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.models.formula import design_matrix

LOG = """\
Serial Number,kind,cage,row,node,slot,batch,install_date,removal_date,removal_reason
GPU-A1,gpu,c0,r1,n01,0,b0,2024-01-01,2024-06-01,XID 79 fallen off the bus
GPU-A2,gpu,c0,r1,n01,1,b0,2024-01-01,,
GPU-A3,gpu,c1,r2,n02,0,b1,2024-01-01,2024-03-01,upgrade to H200
GPU-A1,gpu,c0,r1,n03,2,b0,2024-07-01,,
GPU-A4,gpu,c1,r2,n02,0,b1,2024-03-01,2024-02-01,
GPU-A5,gpu,c1,r2,n02,0,b1,notadate,,

GPU-A6,gpu,c1,r2,n02,0,b1,2024-03-01,2024-09-01,
GPU-A2,gpu,c0,r1,n01,1,b0,2024-01-01,2024-10-01,decommissioned
"""


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "replacements.csv"
    path.write_text(LOG)
    return path


def test_a_replacement_log_becomes_one_row_per_life(log):
    r = reliab.ingest(str(log))
    acc = r.accounting.iloc[0]
    assert acc["source"] == "lifetimes"
    # 10 lines: header, blank and GPU-A2's first row (updated by its last row) are irrelevant;
    # A4 (removed before installed) and A5 (install not a date) are malformed
    assert (acc["lines"], acc["parsed"], acc["irrelevant"], acc["malformed"]) == (10, 5, 3, 2)
    assert sorted(r.quarantine["lineno"]) == [6, 7]
    lt = r.lifetimes.set_index(["serial", "life"])
    assert list(lt.index) == [("GPU-A1", 1), ("GPU-A3", 1), ("GPU-A1", 2), ("GPU-A6", 1), ("GPU-A2", 1)]
    assert lt.loc[("GPU-A1", 1), "failed"] and lt.loc[("GPU-A6", 1), "failed"]  # no reason: failure
    assert not lt.loc[("GPU-A3", 1), "failed"]  # upgrade: planned
    assert not lt.loc[("GPU-A2", 1), "failed"]  # decommissioned: planned
    assert not lt.loc[("GPU-A1", 2), "failed"] and pd.isna(lt.loc[("GPU-A1", 2), "removed"])
    assert lt.loc[("GPU-A1", 2), "location"] == "c0/r1/n03/2"
    assert lt.loc[("GPU-A3", 1), "batch"] == "b1"
    assert lt.loc[("GPU-A1", 1), "removed"] == pd.Timestamp("2024-06-01", tz="UTC")
    notes = r.sources[str(log)].notes
    assert any("several lives" in n for n in notes)
    assert any("1 removal(s) without a reason" in n for n in notes)


def test_columns_map_their_headers_to_ours(tmp_path):
    path = tmp_path / "dimms.csv"
    path.write_text("Asset,Part,Rack,Put In,Pulled,Why\nD1,dimm,r7,2023-05-01 10:00,2023-08-01,CE storm\n")
    with pytest.raises(Exception, match="install"):  # 'Put In' names no role without a mapping
        reliab.ingest(str(path), source="lifetimes", strict=True)
    r = reliab.ingest(str(path), source="lifetimes",
                      columns={"Put In": "installed", "Pulled": "removed", "Why": "reason", "Part": "kind"})
    row = r.lifetimes.iloc[0]
    assert (row["serial"], row["kind"], row["rack"], row["reason"], bool(row["failed"])) == (
        "D1", "dimm", "r7", "CE storm", True)
    assert row["installed"] == pd.Timestamp("2023-05-01 10:00", tz="UTC")


def test_the_report_inventory_format_is_read(tmp_path):
    """The ``--inventory`` columns (unit, kind, installed, removed, removal_reason) are a
    lifetimes file too."""
    path = tmp_path / "inventory.csv"
    path.write_text("unit,kind,installed,removed,removal_reason\nnode01/gpu0,gpu,2024-01-01,2024-02-01,xid 48\n"
                    "node01/gpu1,gpu,2024-01-01,,\n")
    r = reliab.ingest(str(path))
    assert r.accounting["source"].tolist() == ["lifetimes"]
    assert r.lifetimes["serial"].tolist() == ["node01/gpu0", "node01/gpu1"]
    assert r.lifetimes["failed"].tolist() == [True, False]


def test_report_analyses_include_unit_lifetimes(log):
    from reliab.study import analyze, fleet_facts

    r = reliab.ingest(str(log))
    fleet = fleet_facts(jobs=r.jobs, signals=r.signals)
    out = analyze(r, fleet)
    surv = out["unit_survival"].summary()
    assert {"kind", "cage", "node"} <= set(surv["by"])
    kind = surv[surv["by"] == "kind"].iloc[0]
    assert (kind["n"], kind["failures"]) == (5, 2)
    # GPU-A2's decommissioning is the last date of the log: the end of observation, not an exit
    assert set(out["unit_removals"].summary()["cause"]) == {
        "XID 79 fallen off the bus", "upgrade to H200", "(no reason)"}
    assert "unit_cox" in out and "unit_weibull" in out


def test_design_matrix_codes_levels_against_the_reference():
    df = pd.DataFrame({"cage": ["c1", "c0", "c2", "c1"], "row": [1.0, 2.0, 3.0, 4.0],
                       "vendor": ["x", "y", "x", "x"]})
    d = design_matrix(df, "C(cage) + row + vendor", reference={"cage": "c1"})
    assert list(d.matrix.columns) == ["cage[T.c0]", "cage[T.c2]", "row", "vendor[T.y]"]
    np.testing.assert_array_equal(d.matrix.to_numpy(), [[0, 0, 1, 0], [1, 0, 2, 1], [0, 1, 3, 0],
                                                        [0, 0, 4, 0]])
    assert d.references == {"cage": "c1", "vendor": "x"}  # default: first sorted level
    with pytest.raises(ValueError, match="not among its levels"):
        design_matrix(df, "C(cage)", reference={"cage": "c9"})
    with pytest.raises(ValueError, match="missing value"):
        design_matrix(df.assign(row=[1.0, None, 2.0, 3.0]), "row")
    with pytest.raises(ValueError, match="not a column name"):
        design_matrix(df, "C(cage) + log(row)")


def test_cox_formula_rejects_nested_factors():
    from reliab.models.cox_formula import fit_cox_formula

    df = pd.DataFrame({"t": [1.0, 2, 3, 4, 5, 6], "e": [1, 1, 0, 1, 1, 0],
                       "rack": ["a", "a", "b", "b", "c", "c"], "row": ["r1", "r1", "r1", "r1", "r2", "r2"]})
    with pytest.raises(ValueError, match="collinear"):
        fit_cox_formula(df, "C(rack) + C(row)", duration="t", event="e")


def test_lifetimes_survive_parquet_and_other_ingest_modes_say_they_drop_them(log, tmp_path):
    from reliab import schema

    r = reliab.ingest(str(log))
    written = r.write_parquet(tmp_path / "pq")
    back = schema.read_parquet(str(written["lifetimes"]), "lifetimes")
    declared = [c.name for c in schema.LIFETIMES]
    pd.testing.assert_frame_equal(back[declared], r.lifetimes[declared], check_dtype=True)
    pd.testing.assert_frame_equal(back, r.lifetimes, check_dtype=False)  # extra columns: text
    for mode in ({"store": str(tmp_path / "st")}, {"output": str(tmp_path / "out")}):
        other = reliab.ingest(str(log), **mode)
        assert len(other.lifetimes) == 0
        assert any(n.startswith("Warning: 5 unit lives") for n in other.notes), other.notes


def test_report_inventory_option_takes_the_lifetimes_header(log):
    """``--inventory`` (exposure) reads the same files as the lifetimes reader."""
    from reliab.study import read_inventory

    inv = read_inventory(log)
    assert {"unit", "kind", "installed", "removed", "removal_reason"} <= set(inv.columns)
    assert inv["unit"].iloc[0] == "GPU-A1" and inv["removal_reason"].iloc[0] == "XID 79 fallen off the bus"


#: verbatim rows of ``data/gc_full.csv`` (lines 1-5, 166-168, 185, 7139) of the Titan GPU life
#: data, olcf/TitanGPULife (Ostrouchov et al., "GPU Lifetimes on Titan Supercomputer: Survival
#: Analysis and Reliability", SC20): one row per GPU life, ``event`` the failure mode seen
TITAN = """\
SN,location,insert,remove,duration,out,event
0320117100060,c11-2c1s4n1,2017-04-09 21:36:19,2019-08-01 20:07:33,72916274,FALSE,
0320117100061,c9-3c1s2n1,2017-04-09 21:36:19,2019-08-01 20:07:33,72916274,FALSE,
0320117100063,c6-2c1s2n0,2017-04-09 21:36:19,2019-08-01 20:07:33,72916274,FALSE,
0320117100064,c10-2c1s5n1,2017-04-09 21:36:19,2019-08-01 20:07:33,72916274,FALSE,
0320117100219,c13-5c2s2n1,2017-04-09 21:36:19,2018-03-03 10:04:58,28301319,FALSE,DBE
0320117100219,c3-2c1s3n0,2018-03-27 13:36:01,2018-05-12 22:41:16,4007115,FALSE,DBE
0320117100219,c3-2c1s3n1,2018-05-29 11:57:14,2018-05-29 22:27:25,37811,TRUE,DBE
0320117100236,c5-0c2s4n2,2017-04-09 21:36:19,2017-08-22 11:28:32,11627533,TRUE,
0323712007755,c12-7c1s5n0,,2016-07-19 20:15:20,,,OTB
"""


def test_titan_gpu_lives_verbatim(tmp_path):
    path = tmp_path / "gc_full.csv"
    path.write_text(TITAN)
    r = reliab.ingest(str(path), columns={"event": "reason"}, failure_reasons="DBE,OTB")  # as the CLI gives it
    acc = r.accounting.iloc[0]
    assert (acc["source"], acc["parsed"], acc["malformed"]) == ("lifetimes", 8, 1)
    assert r.quarantine["lineno"].tolist() == [10]  # an event row without an insert time
    lt = r.lifetimes.set_index(["serial", "life"])
    sn219 = lt.loc["0320117100219"]
    assert sn219.index.tolist() == [1, 2, 3] and sn219["failed"].all()  # three lives, each ended by a DBE
    assert sn219["location"].tolist() == ["c13-5c2s2n1", "c3-2c1s3n0", "c3-2c1s3n1"]
    assert sn219[["col", "row", "cage", "slot", "node"]].iloc[0].tolist() == ["13", "5", "2", "2", "1"]
    assert not lt.loc[("0320117100236", 1), "failed"]  # taken out without a failure event
    assert not lt.loc[("0320117100060", 1), "failed"]  # in service at the shutdown
    assert lt.loc[("0320117100219", 3), "removed"] == pd.Timestamp("2018-05-29 22:27:25", tz="UTC")


def test_report_window_reaches_the_lifetimes_without_exposure(log, tmp_path):
    """``reliab report inventory.csv --window A B`` (no --gpus): the window still truncates."""
    from reliab.study import run_report

    run = run_report([log], out=tmp_path / "rep", window=("2024-02-01", "2024-10-01"), pdf=False,
                     tables=False)
    surv = run.results["unit_survival"]
    assert not any("no observation start" in n for n in surv.notes)
    kind = surv.summary().set_index("by").loc["kind"]
    # every life reaches into the window (GPU-A3, the earliest removal, left on 2024-03-01)
    assert kind["n"] == 5


def test_ingest_summary_counts_the_lives(log):
    from typer.testing import CliRunner

    from reliab.cli import app

    out = CliRunner().invoke(app, ["ingest", str(log)])
    assert out.exit_code == 0, out.output
    assert "; 5 unit lives" in out.output
    assert reliab.ingest(str(log)).to_dict()["lifetimes"] == 5


def test_default_formula_leaves_out_a_nested_term():
    from reliab.models.lifetimes import default_formula

    lt = pd.DataFrame({"kind": ["gpu"] * 8, "batch": ["b0", "b0", "b0", "b0", "b1", "b1", "b1", "b1"],
                       "cage": ["c0", "c0", "c1", "c1", "c2", "c2", "c3", "c3"]})
    assert default_formula(lt) == "C(batch)"  # the cages nest the batches: C(cage) would be collinear
    assert default_formula(lt.assign(batch=["b0", "b1"] * 4)) == "C(batch) + C(cage)"
    assert default_formula(lt.assign(batch=[None, "b1"] * 4)) == "C(cage)"  # one recorded batch only

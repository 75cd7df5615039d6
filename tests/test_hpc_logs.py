"""Classic HPC system logs (LogHub samples of BlueGene/L, Thunderbird, LANL HPC) read into signals.

Expectations are written by hand from the published files (``tests/reference/hpc_logs``):
the alert labels are the first column of each BGL/Thunderbird line (LogHub's
``*_structured.csv`` ``Label`` column is the same column), counted with
``awk '{print $1}' BGL_2k.log | sort | uniq -c``; the LANL HPC counts with the awk
commands quoted beside them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

import reliab
from reliab.io._readfile import choose_source, read_file

REF = Path(__file__).resolve().parent / "reference" / "hpc_logs"
BGL = REF / "BGL" / "BGL_2k.log"
TBIRD = REF / "Thunderbird" / "Thunderbird_2k.log"
HPC = REF / "HPC" / "HPC_2k.log"

#: awk '$1!="-"{print $1}' BGL_2k.log | sort | uniq -c
BGL_ALERTS = {"KERNDTLB": 60, "KERNSTOR": 30, "APPSEV": 17, "KERNMNTF": 11, "KERNTERM": 7, "KERNREC": 5,
              "APPRES": 4, "APPREAD": 3, "KERNRTSP": 2, "APPTO": 2, "APPOUT": 1, "APPCHILD": 1}


def _read(path: Path, source: str | None = None):
    choice = choose_source(path, source)
    return choice, read_file(str(path), choice)


def test_bgl_sniffed_and_every_alert_found():
    choice, r = _read(BGL)
    assert choice.source == "bgl"
    sig = r.tables["signals"]
    assert r.lines == 2000 and r.malformed == 0
    assert r.parsed == sum(BGL_ALERTS.values()) == 143
    assert r.irrelevant == 1857  # the '-' (non-alert) lines
    counts = sig["signal"].value_counts().to_dict()
    assert counts == {f"bgl:{k.lower()}": v for k, v in BGL_ALERTS.items()}
    # every alert of the sample is recorded FATAL
    assert set(sig["severity"]) == {"critical"}


def test_bgl_specific_lines():
    _, r = _read(BGL)
    sig = r.tables["signals"].set_index("origin")
    row = sig.loc[f"{BGL}:9"]  # APPREAD 1117869872 ... 2005-06-04-00.24.32.432192 (local time, UTC-7)
    assert row["host"] == "R04-M1-N4-I:J18-U11"
    assert row["signal"] == "bgl:appread"
    assert row["time"] == pd.Timestamp("2005-06-04 07:24:32.432192", tz="UTC")
    assert row["message"].startswith("APPREAD APP FATAL: ciod: failed to read message prefix")
    row = sig.loc[f"{BGL}:1377"]  # KERNMNTF ... Lustre mount FAILED : bglio559
    assert row["host"] == "R42-M1-NC-I:J18-U11" and row["signal"] == "bgl:kernmntf"
    assert "Lustre mount FAILED : bglio559" in row["message"]
    # non-alert FATAL and SEVERE records are not alerts (the experts' label decides)
    for lineno in (32, 174, 523, 1202):
        assert f"{BGL}:{lineno}" not in sig.index


def test_bgl_alerts_map_to_taxonomy():
    res = reliab.ingest(BGL)
    from reliab.taxonomy import classify

    out = classify(res.signals)
    by = out.groupby("signal")["category"].first().to_dict()
    assert by["bgl:kernmntf"] == "Dependency"  # Lustre mount failure: the shared file system
    assert by["bgl:appsev"] == "Software Bug"


def test_thunderbird_sample_has_no_alerts_and_none_is_invented():
    choice, r = _read(TBIRD)
    assert choice.source == "sandia_syslog"
    assert (r.lines, r.parsed, r.irrelevant, r.malformed) == (2000, 0, 2000, 0)


def test_thunderbird_alert_line(tmp_path):
    # line 1 of Thunderbird_2k.log with its '-' replaced by the ECC category of the release
    text = ("ECC 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]:"
            " session closed for user root\n")
    path = tmp_path / "tbird.log"
    path.write_text(text + TBIRD.read_text().split("\n", 1)[1][:2000].rsplit("\n", 1)[0] + "\n")
    choice, r = _read(path)
    assert choice.source == "sandia_syslog"
    sig = r.tables["signals"]
    assert len(sig) == 1 and r.malformed == 0 and r.lines == r.parsed + r.irrelevant
    row = sig.iloc[0]
    assert row["signal"] == "sandia:ecc" and row["host"] == "dn228" and row["severity"] == "error"
    assert row["time"] == pd.Timestamp("2005-11-09 20:01:01", tz="UTC")  # 1131566461
    assert "crond(pam_unix)[2915]: session closed" in row["message"]


#: awk -f: a record is kept when its state or text names a failure (module rule); counted with
#: awk '$4 ~ /unavailable|niff.down|no_server|not_served|fdmn.panic|fdmn.full|temphigh/ ||
#:      ($3=="node" && $4=="psu") || ($4=="abort") || ($4=="error" && $3 ~ /cmd|action/) ||
#:      ($4=="status" && / not[- ]responding/) || ($3=="switch_module" && $4 ~ /control|bcast-error/) ||
#:      ($3=="switch_module" && $4=="error" && / Link error/)' HPC_2k.log | wc -l
#: (by component and state: 2 1 1 32 36 12 1 3 5 57 16 1 4 2 1 2 12)
HPC_KEPT = 188


def test_lanl_hpc_sample(tmp_path):
    choice, r = _read(HPC)
    assert choice.source == "lanl_hpc"
    assert r.lines == 2000 and r.malformed == 0
    sig = r.tables["signals"]
    assert r.parsed == len(sig)
    row = sig.set_index("origin").loc[f"{HPC}:1"]
    assert row["host"] == "node-246" and row["signal"] == "lanl_hpc:unix.hw:state_change.unavailable"
    assert row["severity"] == "error" and row["time"] == pd.Timestamp(1077804742, unit="s", tz="UTC")
    assert (sig["signal"] == "lanl_hpc:clusterfilesystem:fdmn.panic").sum() == 1
    assert set(sig.loc[sig["signal"] == "lanl_hpc:clusterfilesystem:fdmn.panic", "severity"]) == {"critical"}
    # routine records (temperatures, 'running', command progress) are not failures
    assert not sig["signal"].str.contains("temperature|partition:status|boot_cmd:success").any()


def test_lanl_hpc_kept_count():
    _, r = _read(HPC)
    assert r.parsed == HPC_KEPT


@pytest.mark.parametrize("path", [BGL, TBIRD, HPC])
def test_forced_kernel_reader_warns(path):
    res = reliab.ingest(path, source="kernel")
    reason = res.sources[str(path)].reason
    assert "the forced reader kernel recognised 0 of 2,000 lines" in reason
    assert any("the forced reader kernel recognised 0 of 2,000 lines" in n for n in res.notes)


def test_forced_reader_of_the_right_format_is_not_noted(tmp_path):
    # a BGL log whose lines are all non-alerts: the forced bgl reader parses none, rightly
    path = tmp_path / "quiet.log"
    path.write_text("\n".join(BGL.read_text().split("\n")[:8]) + "\n")
    res = reliab.ingest(path, source="bgl")
    assert int(res.accounting["parsed"].sum()) == 0
    assert not any("forced reader" in n for n in res.notes)
    assert "forced reader" not in res.sources[str(path)].reason


def test_forced_reader_warning_names_the_sniffed_source():
    res = reliab.ingest(BGL, source="kernel")
    assert "(sniffing picks bgl)" in res.sources[str(BGL)].reason


def test_forced_reader_warning_reaches_the_cli():
    proc = run_in_process("ingest", str(BGL), "--source", "kernel")
    assert proc.returncode == 0, proc.stderr
    assert "the forced reader kernel recognised 0 of 2,000 lines" in proc.stdout


def test_other_families_map_to_taxonomy():
    from reliab.taxonomy import classify

    frame = pd.DataFrame({"signal": ["sandia:ecc", "sandia:pbs_chk", "lanl_hpc:node:psu",
                                     "lanl_hpc:clusterfilesystem:fdmn.panic", "bgl:kerndtlb"],
                          "message": ["", "", "psu failure", "", ""]})
    cats = classify(frame)["category"].tolist()
    assert cats == ["System Memory", "Dependency", "Power Supply", "Dependency", "Unclassified"]

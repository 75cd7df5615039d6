"""End-to-end hand-over audit: real corpus text laid out as a cluster team hands it over.

Each test builds a small hand-over folder under ``tmp_path`` from verbatim files of
``tests/reference/real_world/`` (per-host folders, archives, links, snapshots) and checks
what a user of ``reliab.ingest`` / ``reliab report`` sees.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab import analyze_environment
from reliab._result import NotAvailable
from reliab.errors import UnknownFormatError
from reliab.report.document import Callout, Table
from reliab.report.quality import quality_section
from reliab.report.summary import summary_section

CORPUS = Path(__file__).parent / "reference" / "real_world"
SMI_Q_H100 = CORPUS / "nvidia_smi" / "gpud-nvidia-smi-q-535-h100x8.txt"


def _place(root: Path, layout: dict[str, Path]) -> Path:
    """Copy corpus files to ``root/<relative path>`` and return ``root``."""
    for rel, src in layout.items():
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return root


def test_environment_on_one_nvidia_smi_snapshot_says_why(tmp_path: Path) -> None:
    """An ``nvidia-smi -q`` snapshot (one sample per GPU) has no sampling interval: the
    power analyses are skipped with that reason, the study still runs, and no NumPy
    warning reaches the user (it used to fail whole: 'cannot convert float NaN to integer')."""
    res = reliab.ingest(_place(tmp_path, {"node-1/nvidia-smi-q.txt": SMI_Q_H100}))
    assert res.telemetry["power_w"].notna().sum() == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        study = analyze_environment(res.telemetry, min_step_w=100.0)
    skipped = dict(study.skipped)
    assert "one power sample per series" in skipped["power_swings"]
    assert "8 series" in skipped["power_swings"]


def _tar(archive: Path, members: dict[str, Path], mode: str) -> None:
    with tarfile.open(archive, mode) as tar:
        for name, src in members.items():
            tar.add(src, arcname=name)


@pytest.mark.parametrize("name, mode", [("extra-logs.tar.gz", "w:gz"), ("extra-logs.tar", "w")])
def test_tar_archive_is_accounted_as_an_archive(tmp_path: Path, name: str, mode: str) -> None:
    """A tar of logs in a hand-over is one stream of member headers and texts glued
    together: it used to be sniffed as a training log (the NCCL lines of one member won)
    and read as 5 lines, the kernel member's Xid lost.  It is a binary row naming tar."""
    root = tmp_path / "handover"
    root.mkdir()
    _tar(root / name, {"node-6/dmesg-T.log": CORPUS / "kernel" / "mcelog-91-mce-dmesg-T.log",
                       "node-6/train.log": CORPUS / "pytorch" / "verl-1309-ray-dated-ip-failure-detected.log"},
         mode)
    res = reliab.ingest(root)
    row = res.accounting.set_index("path").loc[str(root / name)]
    assert row["source"] == "binary"
    assert row["reason"].startswith("tar archive: its members are not read")
    assert row["parsed"] == 0 and row["lines"] == row["irrelevant"]
    assert res.signals.empty
    with pytest.raises(UnknownFormatError, match="tar archive"):
        reliab.ingest(root, strict=True)


def test_per_host_folders_name_the_host(tmp_path: Path) -> None:
    """``node-1/dmesg.log``, ``node-2/dmesg.log``: the host is the folder.  The signals of
    both nodes used to carry host 'dmesg' (one lemon instead of two nodes), a
    ``node-3/dmesg-T.log`` host 'dmesg-T' and ``node-1/sel.txt`` host 'sel'."""
    root = _place(tmp_path / "handover", {
        "node-1/dmesg.log": CORPUS / "kernel" / "gpud-sxid-readme-xid79-sxid20034-raw.log",
        "node-2/dmesg.log": CORPUS / "kernel" / "bumblebee-677-xid32-31-raw.log",
        "node-3/dmesg-T.log": CORPUS / "kernel" / "akash-support-209-xid79-dmesg-T.log",
        "node-1/sel.txt": CORPUS / "sel" / "gcm-sel-list-voltage-bus-fatal.log",
        "bmc/node-2.sel": CORPUS / "sel" / "sosreport-2015-sel-elist.log",
        "syslog/node-4/kern.log.1": CORPUS / "kernel" / "gcm-syslog-lost-carrier.log",
    })
    res = reliab.ingest(root, boot_time="2024-06-01T00:00:00Z")
    s = res.signals
    hosts = dict(zip(s["origin"].str.replace(str(root) + "/", "", regex=False), s["host"], strict=True))
    assert hosts["node-1/dmesg.log:3"] == "node-1"  # xid:79
    assert hosts["node-2/dmesg.log:1"] == "node-2"  # xid:32
    assert hosts["node-3/dmesg-T.log:3"] == "node-3"
    assert hosts["node-1/sel.txt:2"] == "node-1"
    assert hosts["bmc/node-2.sel:1"] == "node-2"  # one folder per source: the file name
    assert hosts["syslog/node-4/kern.log.1:1"] == "at7tj000004"  # the line's own host wins
    assert not set(s["host"]) & {"dmesg", "dmesg-T", "sel"}


def test_link_to_a_file_of_the_handover_is_read_once(tmp_path: Path) -> None:
    """``latest-dmesg.log -> node-3/dmesg-T.log`` beside its target: the Xid 79 used to be
    read twice (two signals, two hosts) and its lines counted twice.  The link gets a
    ``duplicate`` row naming the file read, which is the target, not the link."""
    root = _place(tmp_path / "handover", {
        "node-3/dmesg-T.log": CORPUS / "kernel" / "akash-support-209-xid79-dmesg-T.log"})
    (root / "latest-dmesg.log").symlink_to("node-3/dmesg-T.log")
    os.link(root / "node-3" / "dmesg-T.log", root / "node-3" / "dmesg-T.log.bak")
    res = reliab.ingest(root)
    assert list(res.signals["signal"]) == ["xid:79"]
    assert res.signals["origin"].iloc[0] == f"{root}/node-3/dmesg-T.log:3"
    acc = res.accounting.set_index("path")
    assert acc.loc[str(root / "node-3" / "dmesg-T.log"), "source"] == "kernel"
    for name, kind in (("latest-dmesg.log", "symbolic"), ("node-3/dmesg-T.log.bak", "hard")):
        row = acc.loc[str(root / name)]
        assert row["source"] == "duplicate" and row["lines"] == 0
        assert row["reason"].startswith(f"a {kind} link to {root}/node-3/dmesg-T.log, read there")
    assert res.accounting["lines"].sum() == 7
    assert any("skipped by name, or as another path of a file read (2 duplicate)" in n for n in res.notes)
    assert res.not_read().empty


def test_accounting_table_names_the_file_beside_one_with_malformed_lines(tmp_path: Path) -> None:
    """``ipmi/gpu-a01.sel`` (read) beside ``ipmi/gpu-a02.sel`` (records of an unset BMC clock,
    quarantined): the data-quality table used to label both rows 'ipmi/gpu-a02.sel'."""
    root = _place(tmp_path / "handover", {
        "ipmi/gpu-a01.sel": CORPUS / "sel" / "ipmitool-385-elist-two-digit-year-cet.log",
        "ipmi/gpu-a02.sel": CORPUS / "sel" / "op-build-594-sel-list-unset-clock-2000.log",
        "node-1/dmesg.log": CORPUS / "kernel" / "gpud-dmesg-iso-xid48-63-94.log"})
    section = quality_section(reliab.ingest(root))
    table = next(b for b in section.blocks if isinstance(b, Table) and b.title.startswith("Line accounting"))
    rows = {(r["Files"], r["Malformed"]) for r in table.data.to_dict("records")}
    assert ("ipmi/gpu-a01.sel", "0") in rows
    assert ("ipmi/gpu-a02.sel", "12") in rows
    assert list(table.data["Files"]).count("ipmi/gpu-a02.sel") == 1


def test_training_run_policy_without_job_records_names_no_run(tmp_path: Path) -> None:
    """Kernel and SEL captures without sacct under ``policy="training-run"``: the note used to
    read "Training run '' (no Slurm job records)", an empty run name."""
    root = _place(tmp_path / "handover", {
        "gpu-a01/dmesg.log": CORPUS / "kernel" / "gpud-dmesg-iso-xid48-63-94.log",
        "ipmi/gpu-a01.sel": CORPUS / "sel" / "ipmitool-385-elist-two-digit-year-cet.log"})
    res = reliab.ingest(root, policy="training-run")
    run_notes = [n for n in res.notes if "raining run" in n and "(no Slurm job records)" in n]
    assert run_notes == ["No training run (no Slurm job records): 0 ended allocation(s), 0 interruption(s)."]
    assert not any("''" in n for n in res.notes)


def test_file_in_a_legacy_encoding_says_so(tmp_path: Path) -> None:
    """A journal excerpt saved in GB18030 (its '6月' month is not UTF-8): the lines are
    quarantined for their timestamp, and the file's reason (``res.sources``, ``reliab ingest
    --files --why``) now says the bytes are not UTF-8 and how to convert them (it used to
    say nothing about the encoding)."""
    text = (CORPUS / "kernel" / "threestones-blog-bug-report-grep-cjk-month-journal-and-raw-xid79.log").read_text()
    path = tmp_path / "node-5" / "journal.log"
    path.parent.mkdir()
    path.write_bytes(text.encode("gb18030"))
    res = reliab.ingest(tmp_path)
    reason = res.sources[str(path)].reason
    assert "2 malformed line(s) hold bytes that are not UTF-8 (shown as U+FFFD; first: line 1)" in reason
    assert "iconv" in reason
    utf8 = tmp_path / "node-6" / "journal.log"
    utf8.parent.mkdir()
    utf8.write_text(text)
    clean = reliab.ingest(utf8.parent)
    assert clean.accounting["malformed"].iloc[0] == 1  # the raw dmesg line without a boot time
    assert "not UTF-8" not in clean.sources[str(utf8)].reason


def test_checkpoint_plan_without_checkpoint_lines_says_why(tmp_path: Path) -> None:
    """Real sacct records (a REQUEUED run) and no checkpoint-save lines: the plan used to be
    'not available: the data do not fit this analysis: checkpoint_write_h must be finite,
    got nan'; it now says the logs never timed a checkpoint write."""
    root = _place(tmp_path / "handover", {
        "slurm/sacct.txt": CORPUS / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"})
    res = reliab.ingest(root, policy="training-run")
    assert len(res.interruptions) == 1
    fleet = reliab.fleet_facts(jobs=res.jobs, signals=res.signals, gpus=64,
                               window=("2021-04-04T00:00:00Z", "2021-04-08T00:00:00Z"))
    results = reliab.analyze(res, fleet)
    assert np.isnan(results["job_costs"].checkpoint_write_h)
    plan = results["plan"]
    assert isinstance(plan, NotAvailable)
    assert plan.reason.startswith("no checkpoint write time: the training logs hold no checkpoint-save lines")


def test_cost_of_a_run_without_gpu_counts_warns_nothing(tmp_path: Path) -> None:
    """``sacct -P --format=JobID,State,Start,End`` has no GPU counts: the run's median GPU
    count is NaN, without NumPy's 'Mean of empty slice' RuntimeWarning on the terminal of
    ``reliab report`` (it used to print one)."""
    root = _place(tmp_path / "handover", {
        "slurm/sacct.txt": CORPUS / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"})
    res = reliab.ingest(root, policy="training-run")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cost = reliab.failure_cost(res.interruptions, res.jobs, res.signals, end="2021-04-08T00:00:00Z")
    assert np.isnan(cost.n_gpus)
    assert cost.n == 1


def test_lost_gpu_hours_unknown_is_not_zero(tmp_path: Path) -> None:
    """A REQUEUED run from sacct without GPU counts: the report's summary tile used to read
    'Lost GPU-hours 0' (the sum of unknowns); the total is now NaN and the tile says why."""
    root = _place(tmp_path / "handover", {
        "slurm/sacct.txt": CORPUS / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"})
    res = reliab.ingest(root, policy="training-run")
    fleet = reliab.fleet_facts(jobs=res.jobs, signals=res.signals, gpus=64,
                               window=("2021-04-04T00:00:00Z", "2021-04-08T00:00:00Z"))
    results = reliab.analyze(res, fleet)
    cost = results["job_costs"]
    assert cost.n == 1 and cost.interruptions["lost_gpu_hours"].isna().all()
    assert np.isnan(cost.lost_gpu_hours)
    tiles = {b.label: b for b in summary_section(results).blocks if isinstance(b, Callout)}
    assert tiles["Lost GPU-hours"].value == "—"
    assert tiles["Lost GPU-hours"].detail.startswith("not known: no interruption has a GPU count")


def test_job_survival_of_a_run_without_job_names(tmp_path: Path) -> None:
    """``sacct -P --format=JobID,State,Start,End`` has no JobName: the training run is the
    requeued job id.  Its survival used to be 'not available: no units given' (the run was
    looked up by name only); its allocation is now the unit, ended by the interruption."""
    root = _place(tmp_path / "handover", {
        "slurm/sacct.txt": CORPUS / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"})
    res = reliab.ingest(root, policy="training-run")
    fleet = reliab.fleet_facts(jobs=res.jobs, signals=res.signals, gpus=64,
                               window=("2021-04-04T00:00:00Z", "2021-04-08T00:00:00Z"))
    km = reliab.analyze(res, fleet)["job_km"]
    assert not isinstance(km, NotAvailable), km
    assert km.n == 1 and km.n_failures == 1  # 38872175: 2021-04-04T23:59:03 to 04-07T23:55:39, REQUEUED
    assert abs(float(km.summary()["time"].iloc[0]) - 71.943) < 1e-3


def test_cost_plot_without_gpu_count_is_labelled_in_hours(tmp_path: Path) -> None:
    """Without a GPU count the bars are hours (scale 1), yet the axis used to read 'lost
    GPU-hours'."""
    root = _place(tmp_path / "handover", {
        "slurm/sacct.txt": CORPUS / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"})
    res = reliab.ingest(root, policy="training-run")
    cost = reliab.failure_cost(res.interruptions, res.jobs, res.signals, end="2021-04-08T00:00:00Z")
    ax = cost.plot().axes[0]
    assert ax.get_xlabel() == "lost work (hours; GPU count unknown)"
    # 30 min of lost work, and the downtime from the end (23:55:39) to the window end (00:00:00)
    # with no later allocation in the window: 261 s, in hours
    assert abs(sum(p.get_width() for p in ax.patches) - (0.5 + 261 / 3600)) < 1e-9


def test_manifest_takes_toml_datetimes_for_every_time_option(tmp_path: Path) -> None:
    """``boot_time = 2024-06-01T00:00:00Z`` is a TOML date-time in the README's manifest; the
    same spelling for the scrape time of a dcgm-exporter ``/metrics`` capture used to stop
    the run: "key 'time' must be a string (str | None), got datetime"."""
    root = _place(tmp_path / "handover", {
        "metrics/gpu-node-01.prom": CORPUS / "dcgm" / "cncf-kops-l4-full-scrape.prom"})
    (root / "reliab.toml").write_text('[[files]]\nglob = "metrics/*.prom"\ntime = 2024-06-03T12:00:00Z\n')
    res = reliab.ingest(root)
    tel = res.telemetry
    assert len(tel) == 1
    assert tel["time"].iloc[0] == pd.Timestamp("2024-06-03T12:00:00Z")
    (root / "reliab.toml").write_text('[[files]]\nglob = "metrics/*.prom"\ntime = 2024-06-03T14:00:00+02:00\n')
    assert reliab.ingest(root).telemetry["time"].iloc[0] == pd.Timestamp("2024-06-03T12:00:00Z")

"""``prometheus://`` against a real Prometheus, backfilled with the bundled sample's telemetry.

The history is the sample generator's telemetry (``data/llama3-54d/telemetry``): one day of
16 GPUs at 1 min written as dcgm-exporter series (``DCGM_FI_DEV_GPU_TEMP``… with the labels
dcgm-exporter sets: ``Hostname`` on one node, ``hostname`` on the other as after
dcgm-exporter#655, ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``), a last-XID
gauge with known changes, and the first 8 days of the cluster series at 1 min (11,520
points per series: two chunks at Prometheus' 11,000 points per series; more days would only
slow the backfill, which costs ~0.2 s per 2-hour block here).  ``promtool tsdb
create-blocks-from openmetrics`` writes the blocks and ``prometheus`` serves them on 127.0.0.1.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from live_servers import PROMETHEUS_BINARIES, PrometheusServer, free_ports, missing, openmetrics
from typer.testing import CliRunner

import reliab
from reliab.errors import SourceError
from reliab.io.sources._http import ApiError, get_json
from reliab.io.sources._series import Samples, add_answer, column_for, gpu_of, host_of, xid_signals

TELEMETRY = reliab.sample_path() / "telemetry"
GPU_CSV = TELEMETRY / "gpus_1min_20240603.csv"
CLUSTER_CSV = TELEMETRY / "cluster_1min.csv"
DCGM = {"temp_c": "DCGM_FI_DEV_GPU_TEMP", "power_w": "DCGM_FI_DEV_POWER_USAGE",
        "sm_clock_mhz": "DCGM_FI_DEV_SM_CLOCK", "util_pct": "DCGM_FI_DEV_GPU_UTIL"}
FACILITY = {"facility_ambient_celsius": "ambient_c", "facility_power_watts": "power_w",
            "training_throughput_tokens_per_second": "throughput_tokens_per_s"}
MODEL = "NVIDIA H100 80GB HBM3"
#: (host index, gpu, minute of the day, new last-XID value); GPU 0 of the second host starts at 94
XID_CHANGES = ((0, "3", 600, 79), (0, "3", 840, 48), (1, "5", 480, 13))
XID_BASELINE = (1, "0", 94)
CLUSTER_DAYS = 8


def _labels(host: str, gpu: str, k: int) -> dict[str, str]:
    g = int(gpu)
    return {"gpu": gpu, "UUID": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{host}.{gpu}')}",
            "pci_bus_id": f"00000000:{0x18 + 0x10 * g:02X}:00.0", "device": f"nvidia{g}",
            "modelName": MODEL, ("Hostname" if k == 0 else "hostname"): host,
            "instance": f"{host}:9400", "job": "dcgm-exporter"}


def _history() -> tuple[list[str], dict]:
    gpus = pd.read_csv(GPU_CSV, dtype={"gpu": str})
    cluster = pd.read_csv(CLUSTER_CSV).head(CLUSTER_DAYS * 1440)
    hosts = sorted(gpus["host"].unique())
    families: dict[str, list] = {m: [] for m in [*DCGM.values(), "DCGM_FI_DEV_XID_ERRORS", *FACILITY]}
    day0 = None
    for (host, gpu), g in gpus.groupby(["host", "gpu"], sort=True):
        t = (pd.to_datetime(g["time"], utc=True).astype("int64") // 10**9).to_numpy()
        day0 = t[0] if day0 is None else day0
        labels = _labels(host, gpu, hosts.index(host))
        for col, metric in DCGM.items():
            families[metric].append((labels, t, g[col].to_numpy(dtype=float)))
        xid = np.zeros(len(t))
        for k, xg, minute, code in XID_CHANGES:
            if hosts[k] == host and xg == gpu:
                xid[minute:] = code
        if hosts[XID_BASELINE[0]] == host and XID_BASELINE[1] == gpu:
            xid[:] = XID_BASELINE[2]
        families["DCGM_FI_DEV_XID_ERRORS"].append((labels, t, xid))
    t = (pd.to_datetime(cluster["time"], utc=True).astype("int64") // 10**9).to_numpy()
    for metric, col in FACILITY.items():
        families[metric].append(({"host": "cluster", "job": "facility"}, t, cluster[col].to_numpy(dtype=float)))
    return openmetrics(families), {"hosts": hosts, "day0": int(day0)}


@pytest.fixture(scope="session")
def prom(tmp_path_factory):
    """Prometheus serving the backfilled history; a second one on a copy with a low sample limit."""
    absent = missing(PROMETHEUS_BINARIES)
    if absent:
        pytest.skip(f"Prometheus not installed ({', '.join(absent)}); Debian: apt-get install prometheus")
    text, info = _history()
    main = PrometheusServer(tmp_path_factory.mktemp("prometheus"))
    small = PrometheusServer(tmp_path_factory.mktemp("prometheus-small"))
    try:
        main.start(text)
        shutil.copytree(main.data, small.root / "data")  # the same blocks, another server
        small.start([], max_samples=20_000, data=small.root / "data")
        yield {"url": main.url, "small": small.url, "port": main.port, **info}
    finally:
        main.stop()
        small.stop()


def _expected(path: Path, rename: dict[str, str] | None = None) -> pd.DataFrame:
    table = reliab.ingest(path).telemetry.rename(columns=rename or {})
    if path == CLUSTER_CSV:
        table = table[table["time"] <= _window(path)[1]]
    return table.sort_values(["time", "host", "gpu"], kind="stable").reset_index(drop=True)


def _window(path: Path) -> tuple[pd.Timestamp, pd.Timestamp]:
    t = pd.to_datetime(pd.read_csv(path, usecols=["time"])["time"], utc=True)
    if path == CLUSTER_CSV:
        return t.min(), t.min() + pd.Timedelta(minutes=CLUSTER_DAYS * 1440 - 1)
    return t.min(), t.max()


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    got = got.sort_values(["time", "host", "gpu"], kind="stable").reset_index(drop=True)
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.slow
def test_gpu_history_round_trip_is_exact(prom):
    start, end = _window(GPU_CSV)
    res = reliab.ingest(prom["url"], start=start, end=end, step="60s")
    got = res.telemetry.drop(columns="last_xid_code")
    want = _expected(GPU_CSV, {"util_pct": "util_gpu_pct"})[list(got.columns)]
    _same(got, want)
    assert len(got) == 16 * 1440 and set(got["host"]) == set(prom["hosts"])  # Hostname and hostname
    assert sorted(got["gpu"].unique()) == [str(g) for g in range(8)]
    assert len(res.accounting) == 1 and res.accounting["malformed"].sum() == 0
    acc = res.accounting.iloc[0]
    assert acc["lines"] == acc["parsed"] == 16 * 1440 * 5  # 4 measurements + the XID gauge
    notes = next(iter(res.sources.values())).reason
    assert f"GPU model {MODEL}: 16 GPU(s)" in notes and "XID gauge already 94" in notes


@pytest.mark.slow
def test_xid_changes_become_signals(prom):
    start, end = _window(GPU_CSV)
    res = reliab.ingest(prom["url"], start=start, end=end, step="60s")
    sig = res.signals.sort_values("time").reset_index(drop=True)
    want = sorted((pd.Timestamp(prom["day0"] + 60 * minute, unit="s", tz="UTC"), prom["hosts"][k], gpu,
                   f"xid:{code}") for k, gpu, minute, code in XID_CHANGES)
    assert list(zip(sig["time"], sig["host"], sig["gpu"], sig["signal"], strict=True)) == want
    assert set(sig["source"]) == {"prometheus"} and sig["origin"].str.startswith(prom["url"]).all()
    assert sig.loc[sig["signal"] == "xid:79", "severity"].tolist() == ["critical"]
    assert "48" in sig["message"].iloc[1] and "GPU-" in sig["message"].iloc[1]


@pytest.mark.slow
def test_window_of_several_chunks_is_exact(prom):
    start, end = _window(CLUSTER_CSV)
    res = reliab.ingest(prom["url"], start=start, end=end, step="60s", metrics=FACILITY)
    n = CLUSTER_DAYS * 1440
    assert len(res.accounting) == -(-n // 11_000) == 2
    assert res.accounting["lines"].tolist() == [3 * 11_000, 3 * (n - 11_000)]
    assert res.accounting["path"].is_unique
    _same(res.telemetry, _expected(CLUSTER_CSV))


@pytest.mark.slow
def test_the_server_refuses_more_than_11000_points(prom):
    with pytest.raises(ApiError, match="11,000 points per timeseries"):
        get_json(f"http://127.0.0.1:{prom['port']}/api/v1/query_range",
                 {"query": "facility_power_watts", "start": 0, "end": 11_001 * 60, "step": 60},
                 location="test", timeout_s=30)


@pytest.mark.slow
def test_queries_split_under_the_server_sample_limit(prom):
    start, end = _window(CLUSTER_CSV)
    res = reliab.ingest(prom["small"], start=start, end=end, step="60s", metrics=FACILITY)
    assert len(res.accounting) > 2  # 3 series x 11,000 points > 20,000 samples: halved
    assert res.accounting["lines"].sum() == 3 * CLUSTER_DAYS * 1440
    _same(res.telemetry, _expected(CLUSTER_CSV))


# ---------------------------------------------------------------- errors: one line, nothing written
def _one_line_cli_error(args: list[str], out: Path) -> str:
    from reliab.cli import app

    result = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("reliab: error: "), result.output
    assert not out.exists()
    return lines[0]


def test_server_down(tmp_path):
    port = free_ports(1)[0]
    line = _one_line_cli_error(["ingest", f"prometheus://127.0.0.1:{port}", "--start", "2024-06-03",
                                "--end", "2024-06-04"], tmp_path / "out")
    assert f"cannot reach http://127.0.0.1:{port}/api/v1/query_range" in line and "refused" in line


@pytest.mark.slow
def test_wrong_url(prom, tmp_path):
    line = _one_line_cli_error(["ingest", prom["url"] + "/not-prometheus", "--start", "2024-06-03",
                                "--end", "2024-06-04"], tmp_path / "out")
    assert "HTTP 404" in line and "/not-prometheus/api/v1/query_range" in line
    line = _one_line_cli_error(["ingest", "prometheus://", "--start", "2024-06-03"], tmp_path / "out")
    assert "no host" in line


@pytest.mark.slow
def test_empty_window(prom, tmp_path):
    line = _one_line_cli_error(["ingest", prom["url"], "--start", "2001-01-01", "--end", "2001-01-02"],
                               tmp_path / "out")
    assert "no samples of DCGM_FI_DEV_GPU_TEMP" in line and "between 2001-01-01T00:00:00 and" in line


@pytest.mark.slow
def test_cli_writes_the_telemetry(prom, tmp_path):
    from reliab.cli import app

    start, end = _window(GPU_CSV)
    out = tmp_path / "tables"
    result = CliRunner().invoke(app, ["ingest", prom["url"], "--start", start.isoformat(), "--end",
                                      end.isoformat(), "--step", "1min", "--metrics", "DCGM_FI_DEV_POWER_USAGE",
                                      "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    got = reliab.schema.read_parquet(str(out / "telemetry.parquet"), "telemetry")
    _same(got, _expected(GPU_CSV)[["time", "host", "gpu", "power_w"]])


# ---------------------------------------------------------------- no server needed
def test_columns_follow_dcgm_and_prometheus_naming():
    assert column_for("DCGM_FI_DEV_GPU_TEMP") == "temp_c"
    assert column_for("DCGM_FI_DEV_XID_ERRORS") == "last_xid_code"
    assert column_for("DCGM_FI_DEV_CLOCKS_EVENT_REASONS") == "clock_event_reasons_flag"
    assert column_for("DCGM_FI_PROF_SM_ACTIVE") == "dcgm_prof_sm_active_raw"
    assert column_for("node_hwmon_temp_celsius") == "node_hwmon_temp_c"
    assert column_for("node_energy_joules_total") == "node_energy_j"
    assert column_for("ipmi_power_watts") == "ipmi_power_w"
    assert column_for("node_network_receive_errs_total") == "node_network_receive_errs_count"
    assert column_for("up") == "up_raw"


def test_host_and_gpu_labels():
    assert host_of({"Hostname": "a", "hostname": "b", "instance": "c:9400"}) == ("a", "Hostname")
    assert host_of({"hostname": "b", "instance": "c:9400"}) == ("b", "hostname")
    assert host_of({"instance": "c:9400"}) == ("c", "instance")
    assert host_of({"instance": "[fe80::1]:9400"})[0] == "[fe80::1]:9400"
    assert host_of({"job": "x"}) == (None, None)
    assert gpu_of({"gpu": "3", "UUID": "GPU-x"}) == "3"
    assert gpu_of({"UUID": "GPU-x"}) == "GPU-x"
    assert gpu_of({"pci_bus_id": "00000000:18:00.0"}) == "0000:18:00"
    assert gpu_of({"device": "nvidia7"}) == "7"
    assert gpu_of({}) is None


def _answer(series: list[tuple[dict, list[tuple[float, str]]]]) -> list[dict]:
    return [{"metric": labels, "values": [[t, v] for t, v in values]} for labels, values in series]


def test_answer_accounting_duplicates_and_bad_samples():
    """Two series for one GPU (a second scrape job) and a series without a host label."""
    gpu = {"__name__": "DCGM_FI_DEV_GPU_TEMP", "Hostname": "n1", "gpu": "0"}
    answer = _answer([({**gpu, "job": "a"}, [(60, "50"), (120, "51")]),
                      ({**gpu, "job": "b"}, [(120, "51"), (180, "+Inf")]),
                      ({"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "1"}, [(60, "40")])])
    samples = Samples()
    count = add_answer(samples, answer, 0, {"DCGM_FI_DEV_GPU_TEMP": "temp_c"}, None)
    assert (count.lines, count.parsed, count.irrelevant) == (5, 2, 1)
    assert [(p, r) for p, r, _ in count.bad] == [(4, "infinite value"), (5, "no host label "
                                                 "(Hostname/hostname/host/node/nodename/instance)")]


def test_xid_gauge_changes():
    xid = {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "n1", "gpu": "2", "UUID": "GPU-abc"}
    answer = _answer([(xid, [(0, "0"), (60, "0"), (120, "79"), (180, "79"), (240, "0"), (300, "79"), (360, "NaN"),
                             (420, "31")])])
    samples = Samples()
    add_answer(samples, answer, 0, {}, None)
    sig, notes = xid_signals(samples, ["prometheus://x?start=a"])
    assert sig["signal"].tolist() == ["xid:79", "xid:79", "xid:31"]
    assert [t.value // 10**9 for t in sig["time"]] == [120, 300, 420]
    assert sig["origin"].tolist() == ["prometheus://x?start=a:3", "prometheus://x?start=a:6",
                                      "prometheus://x?start=a:8"]
    assert notes == []


def test_bad_options_fail_before_any_request():
    with pytest.raises(ValueError, match="step="):
        reliab.ingest("prometheus://127.0.0.1:1", start="2024-06-01", step="0s")
    with pytest.raises(ValueError, match="max_points="):
        reliab.ingest("prometheus://127.0.0.1:1", start="2024-06-01", max_points=20_000)
    with pytest.raises(ValueError, match="needs a column name"):
        reliab.ingest("prometheus://127.0.0.1:1", start="2024-06-01", metrics=["avg(up)"])
    with pytest.raises(reliab.UnknownFormatError, match="no source handles s3://"):
        reliab.ingest("s3://bucket/logs")
    with pytest.raises(SourceError, match="cannot reach"):
        reliab.ingest("prometheus://127.0.0.1:1", start="2024-06-01", end="2024-06-02")


@pytest.mark.slow
def test_report_names_source_and_window_of_telemetry(prom):
    from reliab.report.provenance import provenance

    start, end = _window(GPU_CSV)
    res = reliab.ingest(prom["url"], start=start, end=end, step="60s")
    where = provenance(res.accounting, {"telemetry": res.telemetry, "signals": res.signals})
    tel = where.set_index("Table").loc["telemetry"]
    assert tel["From"] == f"{prom['url']} (prometheus)"
    assert tel["Window asked"] == f"{start:%Y-%m-%dT%H:%M:%S} – {end:%Y-%m-%dT%H:%M:%S}"
    assert tel["Window of the data"] == f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC"

"""``reliab.ingest(..., engine="dask")`` on a LocalCluster gives exactly the local result.

One LocalCluster (2 single-threaded worker processes) serves the whole session
(``dask_client`` in conftest.py).  Tables are compared as they come, row order included.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.datasets import simulate_cluster
from reliab.io import IngestResult, ingest
from reliab.io import distributed as dist
from reliab.io._partitioned import MANIFEST, read_manifest, read_table

pytest.importorskip("dask.distributed")

TABLES = ("signals", "jobs", "telemetry", "quarantine", "interruptions", "accounting", "user_failures")
#: lines the kernel reader cannot read, planted in the large log (their line numbers are checked)
NO_CODE = "2024-06-03T01:00:00.000000+00:00 node0007 kernel: NVRM: Xid (PCI:0000:18:00): , pid=1"
BAD_TIME = "2024-13-45T01:00:00.000000+00:00 node0007 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."


def assert_same(got: IngestResult, want: IngestResult) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name), obj=name)
    assert dict(got.sources) == dict(want.sources)
    assert got.notes == want.notes and got.policy == want.policy


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated cluster's files, one large kernel log (split into ranges) and a gzip copy.

    The large log is the cluster's rsyslog days concatenated, with two unreadable signal lines
    planted and CRLF line ends in its second half.
    """
    folder = tmp_path_factory.mktemp("generated")
    simulate_cluster(n_gpus=512, days=7, counts="expected", seed=1, noise_lines_per_node_day=30,
                     background_per_node_day=1.0).write(folder)
    days = sorted((folder / "syslog").glob("messages-*.log"))
    lines = [ln for day in days for ln in day.read_text().splitlines()]
    lines.insert(len(lines) // 3, NO_CODE)
    lines.insert(2 * len(lines) // 3, BAD_TIME)
    half = len(lines) // 2
    big = folder / "central" / "messages"
    big.parent.mkdir()
    big.write_bytes(("\n".join(lines[:half]) + "\n").encode() + ("\r\n".join(lines[half:]) + "\r\n").encode())
    with open(days[0], "rb") as src, gzip.open(folder / "central" / "messages-old.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return folder


@pytest.fixture
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> int:
    """Range reads of anything above 64 KiB, and batches of 256 KiB (many tasks on small input)."""
    monkeypatch.setattr(dist, "RANGE_BYTES", 64 << 10)
    monkeypatch.setattr(dist, "BATCH_BYTES", 256 << 10)
    return 64 << 10


def test_bundled_folder_equals_local(dask_client: object, sample_ingest: IngestResult) -> None:
    """The bundled sample, passed as a folder as a user would: every table identical."""
    got = reliab.ingest(reliab.sample_path(), policy="training-run", engine="dask", client=dask_client)
    assert len(got.interruptions) == 466 and len(got.accounting) > 1000
    assert_same(got, sample_ingest)


def test_generated_set_with_a_file_in_byte_ranges(dask_client: object, generated: Path,
                                                  small_ranges: int) -> None:
    big = generated / "central" / "messages"
    assert big.stat().st_size > 20 * small_ranges  # read as 20+ ranges
    from dask.distributed import get_task_stream

    local = ingest(generated)
    with get_task_stream(dask_client) as stream:
        got = ingest(generated, engine="dask", client=dask_client)
    assert_same(got, local)
    keys = [str(t["key"]) for t in stream.data]
    assert sum(k.startswith("reliab-span-") for k in keys) > 20  # the big file, as ranges
    kernel = local.accounting.loc[local.accounting["source"] == "kernel", "path"]
    split = [p for p in kernel if Path(p).stat().st_size > small_ranges and not p.endswith(".gz")]
    assert str(big) in split and sum(k.startswith("reliab-parse-") for k in keys) == len(split)
    acc = got.accounting.set_index("path")
    assert acc.loc[str(big), "source"] == "kernel" and acc.loc[str(big), "malformed"] == 2
    text = big.read_bytes().splitlines()
    quarantined = got.quarantine[got.quarantine["path"] == str(big)]
    assert [text[n - 1].decode() for n in quarantined["lineno"]] == [NO_CODE, BAD_TIME]
    from_big = got.signals[got.signals["origin"].str.startswith(f"{big}:")]
    assert len(from_big) > 100
    for origin, host in zip(from_big["origin"].head(50), from_big["host"].head(50), strict=True):
        assert host in text[int(origin.rsplit(":", 1)[1]) - 1].decode()


def test_partitioned_output(dask_client: object, generated: Path, small_ranges: int, tmp_path: Path) -> None:
    local = ingest(generated)
    out = tmp_path / "tables"
    got = ingest(generated, engine="dask", client=dask_client, output=out)
    assert_same(got, local)
    for name in ("signals", "jobs", "telemetry", "quarantine", "interruptions", "accounting"):
        pd.testing.assert_frame_equal(read_table(out, name), getattr(local, name), obj=name)
    kernel_days = sorted(p.name for p in (out / "signals" / "source=kernel").iterdir())
    assert kernel_days == sorted(f"date={d}" for d in local.signals.loc[
        local.signals["source"] == "kernel", "time"].dt.strftime("%Y-%m-%d").unique())
    assert (out / "quarantine" / "source=kernel").is_dir() and (out / MANIFEST).is_file()
    assert not list(out.rglob("*.tmp"))
    manifest = read_manifest(out)
    assert sum(p["rows"] for p in manifest["tables"]["signals"]) == len(local.signals)
    again = ingest(generated, engine="dask", client=dask_client, output=out)  # replaces the run
    assert_same(again, local)
    files = {str(p.relative_to(out)) for p in out.rglob("part-*.parquet")}
    assert files == {p["path"] for t in read_manifest(out)["tables"].values() for p in t}


def test_options_errors() -> None:
    with pytest.raises(ValueError, match="engine"):
        ingest(reliab.sample_path(), engine="spark")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine='dask'"):
        ingest(reliab.sample_path(), client=object())  # (output= works locally too: reliab.io._streamed)
    with pytest.raises(ValueError, match="store="):
        ingest(reliab.sample_path(), engine="dask", store="s", output="x")
    with pytest.raises(ValueError, match="workers"):
        with dist.dask_client(workers=0):
            pass


def test_own_cluster_runs_no_profiler_and_slow_timers() -> None:
    """The cluster reliab starts has no dashboard: its workers run no statistical profiler and
    check their event loop, system and memory less often (idle, a 2-worker cluster with
    Dask's defaults costs about 50 ms of CPU a second; a reduction of a few seconds pays it)."""
    def settings(dask_worker: object) -> tuple:
        import dask

        return ("profile" in dask_worker.periodic_callbacks,  # type: ignore[attr-defined]
                *(dask.config.get(f"distributed.{k}") for k in ("admin.tick.interval",
                                                                "admin.system-monitor.interval",
                                                                "worker.memory.monitor-interval")))

    with dist.dask_client(workers=1) as client:
        got = list(client.run(settings).values())
    assert got == [(False, "500ms", "5s", "1s")]


def test_own_cluster_leaves_port_8787_alone() -> None:
    """reliab's cluster has no dashboard, so its scheduler's HTTP server (health and metrics
    routes, which Dask starts anyway) takes a free local port: with port 8787 taken (by another
    cluster, or here), Dask would otherwise warn "Port 8787 is already in use"."""
    import socket
    import warnings

    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8787))
        held.listen()
    except OSError:  # already taken: as good
        pass
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with dist.dask_client(workers=1) as client:
                http = client.cluster.scheduler.http_server
    finally:
        held.close()
    assert [str(w.message) for w in seen if "already in use" in str(w.message)] == []
    assert http.address == "127.0.0.1" and http.port != 8787  # (bound to this machine only, as Dask binds it by default)


def test_batches_keep_order_and_size() -> None:
    assert dist.batches([10, 10, 50, 10, 200, 5], 60) == [[0, 1], [2, 3], [4], [5]]


def test_missing_dask_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ImportError, match=r"reliab\[distributed\]"):
        ingest(reliab.sample_path(), engine="dask")


def test_cli_engine_dask(dask_client: object, generated: Path, tmp_path: Path) -> None:
    """``reliab ingest --engine dask --scheduler …`` prints what the local engine prints and writes the partitions."""
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "reliab", "ingest", str(generated), "-q", *args],
                              capture_output=True, text=True, timeout=600)

    address = dask_client.scheduler.address
    local, remote = run(), run("--engine", "dask", "--scheduler", address, "--out", str(tmp_path / "t"))
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    assert remote.stdout.splitlines()[:-1] == local.stdout.splitlines()
    assert remote.stdout.splitlines()[-1].startswith("wrote ") and (tmp_path / "t" / MANIFEST).is_file()
    bad = run("--workers", "2")
    assert bad.returncode == 1 and "--engine dask" in bad.stderr


def test_cli_engine_dask_own_local_cluster_with_store(generated: Path, tmp_path: Path) -> None:
    """``--engine dask --workers 1 --store``: the CLI starts its own LocalCluster; the store's run
    prints what the local engine's store run prints (the store's path aside)."""
    import subprocess
    import sys

    logs = tmp_path / "logs"
    logs.mkdir()
    for path in sorted((generated / "dmesg").iterdir())[:12]:
        shutil.copy(path, logs / path.name)

    def run(store: str, *args: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "reliab", "ingest", str(logs), "-q", "--store",
                               str(tmp_path / store), *args], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.replace(str(tmp_path / store), "<store>").splitlines()

    local = run("local")
    assert "files: 12 new, 0 appended, 0 rotated, 0 rewritten, 0 unchanged" in local
    assert run("dask", "--engine", "dask", "--workers", "1") == local
    assert (tmp_path / "dask" / "ledger.parquet").is_file()


def _fake_source() -> str:
    """A live source read by the client only (the workers never see it): ``scaletest://<kernel log>``."""
    from dataclasses import replace

    from reliab.io._readfile import read_file
    from reliab.io._registry import register_source, sources
    from reliab.io._result import SourceChoice

    scheme = "scaletest"
    if all(s.scheme != scheme for s in sources()):
        @register_source(scheme)
        def _read(url: str, *, strict: bool = False):  # noqa: ANN202 - a test double
            """Kernel log behind a URL (test double)."""
            result = read_file(url.split("://", 1)[1], SourceChoice("kernel", 1.0, ""), {}, strict)
            signals = result.tables["signals"].assign(origin=lambda d: url + d["origin"].str.partition(":")[2])
            yield replace(result, path=url, tables={"signals": signals}, quarantine=None, malformed=0,
                          irrelevant=result.irrelevant + result.malformed)
    return scheme


def test_live_source_between_files_keeps_its_place(dask_client: object, generated: Path, tmp_path: Path) -> None:
    scheme = _fake_source()
    days = sorted((generated / "syslog").glob("messages-*.log"))
    inputs = [generated / "dmesg", f"{scheme}://{days[0]}", generated / "syslog", f"{scheme}://{days[1]}",
              generated / "slurm"]
    local = ingest(inputs)
    assert local.signals["origin"].str.startswith(f"{scheme}://").sum() > 5
    assert_same(ingest(inputs, engine="dask", client=dask_client), local)
    out = tmp_path / "tables"
    assert_same(ingest(inputs, engine="dask", client=dask_client, output=out), local)
    for name in ("signals", "jobs", "quarantine"):
        pd.testing.assert_frame_equal(read_table(out, name), getattr(local, name), obj=name)

"""The folder walk and what follows it on hostile folders (issue 21, items 9 and 10).

A store folder inside the input folder is set aside, not read back as input; ``reliab
report`` hashes only the files the run read (a 200 GB sparse hidden core dump used to keep
it busy for minutes); a folder nested 1,100 deep is walked (it raised RecursionError); host
names that differ only by invisible or compatibility characters are one host.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

import reliab

XID = "NVRM: Xid (PCI:0000:3a:00): 79, pid=2000002, name=pt_main_thread, GPU has fallen off the bus."


def _syslog(host: str, second: int) -> str:
    return f"2024-06-01T01:20:{second:02d}.000000+00:00 {host} kernel: {XID}\n"


def test_a_store_inside_the_input_folder_is_skipped_with_a_row(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text(_syslog("node1", 1))
    store = tmp_path / "store"
    reliab.ingest(tmp_path, store=store)
    assert any(store.rglob("*.parquet"))
    second = reliab.ingest(tmp_path, store=store)
    acc = second.accounting.set_index("path")
    assert acc.loc[str(store), "source"] == "skipped"
    assert "store" in acc.loc[str(store), "reason"]
    assert not [p for p in acc.index if p.startswith(str(store) + os.sep)]


def test_an_output_folder_inside_the_input_folder_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(_syslog("node1", 1))
    out = tmp_path / "tables"
    reliab.ingest(tmp_path, output=out)
    again = reliab.ingest(tmp_path, output=out)
    acc = again.accounting.set_index("path")
    assert acc.loc[str(out), "source"] == "skipped"
    assert len(again.signals) == 1


def test_report_does_not_hash_a_huge_skipped_file(tmp_path: Path) -> None:
    root = tmp_path / "h"
    root.mkdir()
    (root / "a.log").write_text(_syslog("node1", 1))
    with open(root / ".core.12345", "wb") as fh:  # 200 GB, sparse: no disk used
        fh.truncate(200 << 30)
    env = {**os.environ, "PYTHONPATH": str(Path(reliab.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-m", "reliab", "report", str(root), "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=90, env=env, check=False)
    assert done.returncode == 0, done.stderr
    digests = (tmp_path / "r" / "inputs.sha256").read_text()
    assert "a.log" in digests and ".core.12345" not in digests


def test_a_folder_nested_1100_deep_is_walked(tmp_path: Path) -> None:
    deep = tmp_path
    for _ in range(1100):  # one level at a time (Path.mkdir(parents=True) recurses too)
        deep = deep / "d"
        deep.mkdir()
    (deep / "a.log").write_text(_syslog("node1", 1))
    try:
        res = reliab.ingest(tmp_path)
        assert len(res.signals) == 1
        assert list(res.accounting["path"]) == [str(deep / "a.log")]
    finally:  # pytest's own clean-up (shutil.rmtree, recursive on Python < 3.12) cannot remove 1,100 levels
        (deep / "a.log").unlink()
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent
    assert not any(tmp_path.iterdir())


LOOK_ALIKES = ("node01", "node01\u202e", "\u200bnode01", "node\u200d01", "\uff4e\uff4f\uff44\uff45\uff10\uff11",
               "node01\ufeff", "\u2066node01\u2069")


def test_look_alike_hosts_are_one_host(tmp_path: Path) -> None:
    (tmp_path / "kern.log").write_text("".join(_syslog(h, i) for i, h in enumerate(LOOK_ALIKES)), encoding="utf-8")
    res = reliab.ingest(tmp_path)
    assert len(res.signals) == len(LOOK_ALIKES)
    assert set(res.signals["host"]) == {"node01"}


def test_host_normalisation_keeps_ordinary_names() -> None:
    from reliab.schema import conform

    df = pd.DataFrame({"time": pd.to_datetime(["2024-06-01"] * 3, utc=True), "host": ["gpu-a100-07", "Node.Rack3", None],
                       "signal": ["xid:79"] * 3, "source": ["kernel"] * 3})
    assert list(conform(df, "signals")["host"].fillna("-")) == ["gpu-a100-07", "Node.Rack3", "-"]

"""Identical content under two names (a copy, the same file compressed and not) is read once."""

from __future__ import annotations

import gzip
import lzma
import shutil
from pathlib import Path

import reliab

BGL = Path(__file__).resolve().parent / "reference" / "hpc_logs" / "BGL" / "BGL_2k.log"
ALERTS = 143  # awk '$1!="-"' BGL_2k.log | wc -l


def _rows(res, source):
    acc = res.accounting
    return acc[acc["source"] == source]


def test_plain_and_xz_read_once(tmp_path):
    shutil.copy(BGL, tmp_path / "x.log")
    (tmp_path / "x.log.xz").write_bytes(lzma.compress(BGL.read_bytes()))
    res = reliab.ingest(tmp_path)
    assert len(res.signals) == ALERTS
    dup = _rows(res, "duplicate")
    assert dup["path"].tolist() == [str(tmp_path / "x.log.xz")]
    assert str(tmp_path / "x.log") in dup["reason"].iat[0]
    assert _rows(res, "bgl")["path"].tolist() == [str(tmp_path / "x.log")]


def test_copy_under_another_name_and_gz(tmp_path):
    shutil.copy(BGL, tmp_path / "a.log")
    shutil.copy(BGL, tmp_path / "b.log")
    (tmp_path / "c.log.gz").write_bytes(gzip.compress(BGL.read_bytes()))
    res = reliab.ingest(tmp_path)
    assert len(res.signals) == ALERTS
    assert sorted(_rows(res, "duplicate")["path"]) == [str(tmp_path / "b.log"), str(tmp_path / "c.log.gz")]


def test_same_size_other_content_both_read(tmp_path):
    text = BGL.read_text()
    (tmp_path / "a.log").write_text(text)
    lines = text.split("\n")
    (tmp_path / "b.log").write_text("\n".join([*lines[1000:], *lines[:1000]]))  # same bytes, other order
    res = reliab.ingest(tmp_path)
    assert len(res.signals) == 2 * ALERTS
    assert _rows(res, "duplicate").empty


def test_empty_files_are_not_duplicates(tmp_path):
    (tmp_path / "a.log").write_bytes(b"")
    (tmp_path / "b.log").write_bytes(b"")
    res = reliab.ingest(tmp_path)
    assert _rows(res, "duplicate").empty
    assert len(_rows(res, "empty")) == 2


def test_per_host_captures_of_identical_content_are_both_read(tmp_path):
    # the SEL of two hosts, both empty: the file names carry the hosts (data/llama3-54d has such)
    (tmp_path / "node0187.sel").write_text("SEL has no entries\n")
    (tmp_path / "node1205.sel").write_text("SEL has no entries\n")
    res = reliab.ingest(tmp_path)
    assert _rows(res, "duplicate").empty
    assert sorted(_rows(res, "sel")["path"]) == [str(tmp_path / "node0187.sel"), str(tmp_path / "node1205.sel")]


def test_lanl_csv_and_its_xz_read_once(tmp_path):
    # the case: a LANL failure file beside its .xz gave every failure twice
    src = Path(__file__).resolve().parent / "reference" / "lanl_failures_1996_2005"
    lines = (src / "LA-UR-05-7318-failure-data-1996-2005.csv").read_bytes().splitlines(keepends=True)[:301]
    data = b"".join(lines)
    (tmp_path / "x.csv").write_bytes(data)
    (tmp_path / "x.csv.xz").write_bytes(lzma.compress(data))
    res = reliab.ingest(tmp_path)
    assert len(res.signals) == 300  # 300 records under the header
    assert _rows(res, "duplicate")["path"].tolist() == [str(tmp_path / "x.csv.xz")]

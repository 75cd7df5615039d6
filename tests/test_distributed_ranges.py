"""Byte ranges: a kernel log read as ranges gives exactly the whole-file result.

The ranges are read in-process here (collect, then feed: what the Dask tasks do), so
hypothesis can try many cut points and line shapes quickly; ``test_distributed.py`` runs
the same through a LocalCluster.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io import _ranges
from reliab.io._prefilter import MAX_LINE_BYTES
from reliab.io._readfile import choose_source, read_file
from reliab.io._registry import FileResult
from reliab.io._tasks import Item, collect_span, read_spans

#: real shapes: rsyslog lines of the bundled sample's writers (docs/raw-formats.md)
XID = "2024-06-03T00:49:59.170203+00:00 node1440 kernel: NVRM: Xid (PCI:0000:ba:00): 48, pid=2000006, name=pt_main_thread, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."
LINK = "2024-06-03T00:09:54.435256+00:00 node1329 systemd-networkd[2385]: ens2f0np0: Lost carrier"
MLX = "2024-06-03T00:33:38.449243+00:00 node1522 kernel: mlx5_core 0000:e6:00.1: mlx5_cmd_out_err:838:(pid 52918): ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3)"
NOISE = "2024-06-03T00:27:50.323961+00:00 node0042 CRON[14705]: (root) CMD (/usr/local/bin/node-health-check --quiet)"
#: signal lines the kernel reader cannot read: they go to the quarantine with their line
NO_CODE = "2024-06-03T01:00:00.000000+00:00 node0007 kernel: NVRM: Xid (PCI:0000:18:00): , pid=1"
BAD_TIME = "2024-13-45T01:00:00.000000+00:00 node0007 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."
POOL = [XID, LINK, MLX, NOISE, NOISE, NOISE, NO_CODE, BAD_TIME, "", "NVRM ü \udcff odd bytes"]


def _encode(line: str) -> bytes:
    return line.encode("utf-8", errors="surrogateescape")


def _ranged(path: Path, range_bytes: int) -> tuple[FileResult, int]:
    """The file read as ranges of ``range_bytes`` (in-process), and the number of ranges."""
    choice = choose_source(path, "kernel")
    spans = _ranges.spans(str(path), range_bytes)
    hits = [collect_span(span, choice, {}) for span in spans]
    out = read_spans(Item(str(path), "kernel", "forced"), choice, False, None, "", 0, *hits)
    return out.results[0], len(spans)


def _assert_same(got: FileResult, want: FileResult) -> None:
    assert (got.lines, got.parsed, got.irrelevant, got.malformed) == (
        want.lines, want.parsed, want.irrelevant, want.malformed)
    pd.testing.assert_frame_equal(got.tables["signals"], want.tables["signals"])
    pd.testing.assert_frame_equal(got.quarantine, want.quarantine)
    assert got.notes == want.notes


def _whole(path: Path) -> FileResult:
    return read_file(str(path), choose_source(path, "kernel"), {})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(POOL), min_size=1, max_size=60),
       ends=st.lists(st.sampled_from(["\n", "\r\n"] + (["\r"] if _ranges._CR_ENDS else [])),
                     min_size=60, max_size=60),
       last=st.booleans(), range_bytes=st.integers(1, 700))
def test_ranges_equal_whole_file(tmp_path: Path, lines: list[str], ends: list[str], last: bool,
                                 range_bytes: int) -> None:
    body = b"".join(_encode(line) + ends[i].encode() for i, line in enumerate(lines))
    if not last:  # a last line without its terminator
        body = body[: -len(ends[len(lines) - 1])]
    path = tmp_path / "messages.log"
    path.write_bytes(body)
    got, n = _ranged(path, range_bytes)
    _assert_same(got, _whole(path))
    assert n >= 1


def test_cuts_fall_on_line_starts(tmp_path: Path) -> None:
    path = tmp_path / "k.log"
    path.write_bytes(b"aaaa\r\nbb\ncc\r\n" * 10 + b"tail")
    spans = _ranges.spans(str(path), 5)
    data = path.read_bytes()
    assert spans[0].start == 0 and spans[-1].stop == len(data)
    for a, b in zip(spans, spans[1:], strict=False):
        assert a.stop == b.start and data[b.start - 1:b.start] == b"\n"  # never between \r and \n
    assert [s.index for s in spans] == list(range(len(spans))) and all(s.count == len(spans) for s in spans)


def test_an_over_long_line_across_many_ranges(tmp_path: Path) -> None:
    """A 1.5 MiB line (over the 1 MiB limit) spans several ranges: one range, one quarantine row."""
    long = "2024-06-03T01:00:00.000000+00:00 node0001 kernel: NVRM: Xid " + "x" * (MAX_LINE_BYTES + MAX_LINE_BYTES // 2)
    path = tmp_path / "k.log"
    path.write_text("\n".join([NOISE, XID, long, XID, NO_CODE, NOISE]) + "\n")
    got, n = _ranged(path, 256 << 10)
    want = _whole(path)
    _assert_same(got, want)
    assert 2 <= n < 6  # the cuts inside the long line moved to its end
    assert got.quarantine["lineno"].tolist() == [3, 5]
    assert "exceeds" in got.quarantine["reason"].iloc[0]


def test_quarantine_line_numbers_are_those_of_the_whole_file(tmp_path: Path) -> None:
    lines = [NOISE] * 500 + [NO_CODE] + [NOISE] * 300 + [XID, BAD_TIME] + [NOISE] * 40
    path = tmp_path / "k.log"
    path.write_text("\n".join(lines) + "\n")
    got, n = _ranged(path, 4096)
    assert n > 10
    assert got.quarantine["lineno"].tolist() == [501, 803]
    assert got.tables["signals"]["origin"].tolist() == [f"{path}:802"]
    _assert_same(got, _whole(path))


def test_gzip_files_are_never_split(tmp_path: Path) -> None:
    path = tmp_path / "k.log.gz"
    with gzip.open(path, "wt") as fh:
        fh.write((NOISE + "\n") * 5000)
    assert len(_ranges.spans(str(path), 1024)) == 1
    assert not _ranges.splittable(str(path), "kernel", 1024)
    plain = tmp_path / "k.log"
    plain.write_text((NOISE + "\n") * 5000)
    assert _ranges.splittable(str(plain), "kernel", 1024)
    assert not _ranges.splittable(str(plain), "sacct", 1024)  # only line-scanned readers split


def test_a_scan_without_prefilter_reads_the_file_whole(tmp_path: Path) -> None:
    """A reader that looks at every line (no literals) is not split: the file is read whole."""
    from reliab.io._lines import scan_lines

    path = tmp_path / "k.log"
    path.write_text((NOISE + "\n") * 300)
    span = _ranges.spans(str(path), 1000)[1]
    with _ranges.collecting(span) as mode:
        empty = scan_lines(str(path), "x", lambda text, ctx: None, literals=None)
    assert empty.lines == 0 and mode.hits is not None and not mode.hits.split
    lines = (XID + "\n" + NOISE + "\n") * 100
    path.write_text(lines)
    choice = choose_source(path, "kernel")
    hits = [collect_span(s, choice, {}) for s in _ranges.spans(str(path), 1000)]
    hits[3].split = False  # as a reltime capture reports it
    out = read_spans(Item(str(path), "kernel", "forced"), choice, False, None, "", 0, *hits)
    _assert_same(out.results[0], _whole(path))


def test_range_bytes_must_be_positive(tmp_path: Path) -> None:
    path = tmp_path / "k.log"
    path.write_text("x\n")
    with pytest.raises(ValueError, match="range_bytes"):
        _ranges.spans(str(path), 0)


def test_reltime_capture_is_read_whole(tmp_path: Path) -> None:
    """``dmesg --reltime`` output is read line by line (each line moves the clock): never split."""
    path = tmp_path / "node0001.log"
    path.write_text("[Jun26 06:24] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"
                    + "[  +0.000010] mlx5_core 0000:1a:00.0 ens1f0np0: Link down\n" * 300)
    choice = choose_source(path, "kernel")
    hits = [collect_span(span, choice, {"year": 2024}) for span in _ranges.spans(str(path), 1000)]
    assert len(hits) > 1 and not any(h.split for h in hits)
    out = read_spans(Item(str(path), "kernel", "forced", {"year": 2024}), choice, False, None, "", 0, *hits)
    want = read_file(str(path), choice, {"year": 2024})
    assert want.parsed > 100
    _assert_same(out.results[0], want)

"""The polars prefilter and bulk parser (``_fastscan``, ``_bulk``) against line-by-line references."""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Callable
from datetime import UTC
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.errors import ParseError
from reliab.io import _fastscan, _lines, _prefilter
from reliab.io._lines import LineContext
from reliab.io.formats.kernel import _bulk, _bulk_route, parse_kernel_line, read_kernel

LIMIT = 64
XID = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus."
PIECES = [
    b"2024-06-03T14:02:11+00:00 n1 kernel: " + XID.encode(), b"Jun  3 14:02:11 n2 kernel: ",
    b"[12.5] EDAC MC0: 1 UE x", b"NVRM: Xid (PCI:zz): 1", b"noise ", b"mlx5_core a b: Link down",
    b"\n", b"\r\n", b"\xff\xfe", b"\x00", b"q" * 70, b"SXid", b"caf\xc3\xa9 ",
    b"[Mon Jun  3 14:02:11 2024] nvme nvme3: controller is down; will reset",
    # shapes the bulk parser takes, and near misses it must leave to the per-line parser
    b"2024-06-03T14:02:12.5Z n3 kernel: NVRM: Xid (PCI:0000:3A:00.0): 013, name='a, b', x ",
    b"2024-06-03T14:02:13+05:30 n4 kernel[7]:NVRM: Xid ( 0000:18:00 ): 48",
    b"2024-02-30T14:02:11+00:00 n5 kernel: NVRM: Xid (PCI:0000:18:00): 79, bad day",
    b"2024-06-03T14:02:11+00:00 kernel: NVRM: Xid (PCI:0000:18:00): 79, no host",
    b"2024-06-03T14:02:11+00:00 n6 kernel: NVRM: Xid (PCI:0000:18:00): 79, caf\xc3\xa9",
    b"Jun  4 01:00:00 n2 kernel: EDAC MC1: 2 UE y", b"\xef\xbb\xbf",
    b"2024-06-03T14:02:14Z n7 kernel: mlx5_core a b: Link down", b"2024-06-03T14:02:15Z n8 nd[5]: e0: Lost carrier",
    b"2024-06-03T14:02:16Z n9 kernel: EDAC MC0: 1 UE x", b"2024-06-03T14:02:16Z n9 kernel: [1.5] e: Lost carrier",
    # shapes of the real-world corpus: look-back rules (bus drops, AER severity lines, indented
    # continuations) must decide alike on both routes
    b"2024-06-03T14:02:16Z n9 kernel: EDAC MC0: 2 CE memory read error x",
    b"2024-06-03T14:02:16Z n9 kernel: mce: [Hardware Error]: Machine check events logged",
    b"2024-06-03T14:02:16Z n9 kernel: NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",
    b"2024-06-03T14:02:12+00:00 n1 kernel: NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",  # after an Xid 79
    b"2024-06-03T14:02:16Z n9 kernel: NVRM: The NVIDIA GPU 0000:18:00.0",
    b"               NVRM: fallen off the bus and is not responding to commands.",
    b"2024-06-03T14:02:17Z n9 kernel: pcieport 0000:00:02.0: AER: Corrected error received: id=0010",
    b"2024-06-03T14:02:17Z n9 kernel: pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=x",
    b"2024-06-03T14:02:17Z n9 kernel: pcieport 0000:80:1b.4: AER: Uncorrectable (Non-Fatal) error message"
    b" received from 0000:80:1b.4",
    b"2024-06-03T14:02:18Z n9 kernel: nvme nvme1: I/O 775 QID 2 timeout, aborting",
    b"2024-06-03T14:02:17Z n9 kernel: nvidia 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=x",
    b"2024-06-03T14:02:17Z n9 kernel: pcieport 0000:00:02.0: AER: enabled with IRQ 26",
    b"2024-06-03T14:02:17Z n9 kernel: mce: [Hardware Error]: TSC 0 ADDR 3f6b4a540",
    b"2024-06-03T14:02:17Z n9 kernel: EDAC MC0: Giving out device to module skx_edac",
    b"2999-06-03T14:02:11+00:00 n1 kernel: " + XID.encode(), b"2024-06-03T14:02:11Z 2001:db8::7 kernel: " + XID.encode(),
    b"2024-06-03T14:02:19Z n9 kernel: {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 0",
    b"2024-06-03T14:02:19Z n9 kernel: {1}[Hardware Error]: event severity: corrected",
    b"kernel: " + XID.encode(),  # an excerpt whose date and host were cut away
    # NVSwitch SXid reports (first and detail lines), decided in bulk when a group holds only their shape
    b"2024-06-03T14:02:11Z n1 kernel: nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal, Link 28 (First)",
    b"2024-06-03T14:02:11Z n1 kernel: nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Severity 0 Engine instance 28",
    b"2024-06-03T14:02:12Z n2 kernel: nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Data {0x0, 0x1}",
    b"2024-06-03T14:02:12Z n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c6:00.0): 20034, Severity 1 Engine instance 48",
    b"2024-06-03T14:02:12Z n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c6:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
    # matchers whose trigger is not one of a bulk shape: the AMD machine-check status line (a
    # ``Hardware Error`` line that is no noise) and other drivers' link-down wording, alone and
    # on a line a bulk shape would otherwise take
    b"2024-06-03T14:02:20Z n9 kernel: [Hardware Error]: Deferred error, no action required.",
    b"2024-06-03T14:02:20Z n9 kernel: mce: [Hardware Error]: System Fatal error.",
    b"2024-06-03T14:02:21Z n9 kernel: igb 0000:01:00.0 eno1: NIC Link is Down",
    b"2024-06-03T14:02:21Z n9 kernel: EDAC MC0: 2 CE memory read error eno1: NIC Link is Down",
]


def reference(data: bytes, literals: tuple[bytes, ...]) -> tuple[list[tuple[int, str, bool]], int]:
    """Candidates ``(lineno, text, over-long)`` and line count, one line at a time."""
    lines = data.split(b"\n") if data else []
    if data.endswith(b"\n"):
        lines.pop()
    out = []
    for i, line in enumerate(lines, 1):
        size = len(line) + (i < len(lines) or data.endswith(b"\n"))
        if size > LIMIT:
            out.append((i, line[: LIMIT + 1].decode("utf-8", "replace")[:50], True))
        elif any(lit in line for lit in literals):
            out.append((i, line.decode("utf-8", "replace").rstrip("\r\n"), False))
    return out, len(lines)


def _small(monkeypatch: pytest.MonkeyPatch, block: int, limit: int = LIMIT) -> None:
    monkeypatch.setattr(_prefilter, "MAX_LINE_BYTES", limit)
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", limit)
    monkeypatch.setattr(_prefilter, "_CHUNK", 16)
    monkeypatch.setattr(_prefilter, "_BLOCK", limit)
    monkeypatch.setattr(_fastscan, "BLOCK", block)
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 1 + block % 5)  # several batches, groups
    monkeypatch.setattr(_fastscan, "BULK_ROWS", 1 + block % 3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join), st.integers(8, 200))
def test_fast_candidates_match_reference(monkeypatch: pytest.MonkeyPatch, data: bytes, block: int) -> None:
    _small(monkeypatch, block)
    lits = (b"NVRM: Xid", b"EDAC", b"Link down", b"controller is down")
    counter = [0]
    got = []
    for n, raw, size in _fastscan.fast_candidates(io.BytesIO(data), lits, counter):
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        long = size > LIMIT
        got.append((n, text[:50] if long else text.rstrip("\r\n"), long))
    assert (got, counter[0]) == reference(data, lits)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join), st.integers(8, 200))
def test_path_candidates_match_reference(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                                         data: bytes, block: int) -> None:
    """The polars route by path, invalid UTF-8 and over-long lines falling back part-way."""
    _small(monkeypatch, block)
    path = tmp_path_factory.mktemp("p") / "lines.log"
    path.write_bytes(data)
    lits = (b"NVRM: Xid", b"EDAC", b"Link down", b"controller is down")
    counter = [0]
    got = []
    for n, raw, size in _fastscan.path_candidates(str(path), lits, counter):
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        long = size > LIMIT
        got.append((n, text[:50] if long else text.rstrip("\r\n"), long))
    assert (got, counter[0]) == reference(data, lits)


def _result(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch, year: int | None = 2024) -> tuple:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if fast else 1 << 60)
    res = read_kernel(str(path), year=year)
    signals = res.tables["signals"].astype(str).values.tolist()
    return (res.lines, res.parsed, res.irrelevant, res.malformed, signals,
            res.quarantine.astype(str).values.tolist(), res.notes,
            [str(t) for t in res.tables["signals"].dtypes])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join), st.integers(8, 200),
       st.booleans(), st.sampled_from([2024, None]))
def test_kernel_reader_fast_equals_reference(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                                             data: bytes, block: int, packed: bool, year: int | None) -> None:
    """Polars route with bulk parsing (plain and gzip) == the pure-Python line-by-line path.

    ``year=None`` makes RFC 3164 lines take their year from the file's first dated line,
    which may be a bulk-parsed one.
    """
    _small(monkeypatch, block, limit=LIMIT if block % 2 else 1 << 20)  # odd: tiny limit
    path = tmp_path_factory.mktemp("k") / ("node7.log.gz" if packed else "node7.log")
    path.write_bytes(gzip.compress(data) if packed else data)
    assert _result(path, True, monkeypatch, year) == _result(path, False, monkeypatch, year)


# --- bulk parser against the per-line parser, line by line

#: per part of an Xid line: shapes the bulk parser should take, then near misses
_PARTS: dict[str, tuple[list[str], list[str]]] = {
    "date": (["2024-06-03", "1999-12-31", "2100-02-28", "2024-02-29"],
             ["0001-01-01", "9999-12-31", "2023-02-29", "2024-13-01", "2024-00-10", "2024-06-00", "2024-6-03"]),
    "time": (["14:02:11", "00:00:00", "23:59:59"], ["24:00:00", "12:60:00", "12:00:60", "9:00:00"]),
    "frac": (["", ".5", ".123456", ".000001"], [".1234567", ".", ",123"]),
    "off": (["+00:00", "Z", "-07:30", "+23:59", "+05:45"], ["+24:00", "+0000", "", "z", "+5:00"]),
    "head": (["n1 kernel: ", "n1 kernel:", "n1 kernel[12]: ", "n-1.x_y systemd-x: "],
             ["kernel: ", "n1  kernel: ", "n1 kernel[x]: ", "n1 ker:nel: ", "n\u00e9 kernel: ", "n1 kernel:  "]),
    "pci": (["PCI:0000:18:00", "0000:18:00", "PCI:0000abCD:Ab:1f.7", " PCI:0000:18:00.0 "],
            ["pci:0000:18:00", "PCI:000:18:00", "PCI:123456789:18:00", "PCI:0000:18:0", "PCI:0000:18:00.8",
             "PCI:0000:18:00.", "PCI:00g0:18:00", "PCI:0000:18:00,x"]),
    "sep": ([": ", ":", " ", "", ":   "], [":: ", " : "]),
    "code": (["79", "079", "0", "48", "63", "999999999"], ["1234567890", "x", "", "92a", "\u0667"]),
    "tail": (["", "  ", ",", ", ", ",  x  ", ", pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
              ", pid=1234, name=python3, Ch 00000008", ", name='a, b', text, more ", ", pid=<unknown>, x",
              ",pid=12,name=q,", ", name='unterminated, y", ", pid=1, pid=2, x", ", name=, x"],
             [" x", ", caf\u00e9", ", tab\there", ", \u3000 wide ", ", cr\r", ",\x85x"]),
}


@st.composite
def _xid_lines(draw: st.DrawFn) -> str:
    """An Xid line in the bulk shape, or (half the time) with one part a near miss."""
    parts = {name: draw(st.sampled_from(good)) for name, (good, _) in _PARTS.items()}
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(_PARTS)))
        parts[name] = draw(st.sampled_from(_PARTS[name][1]))
    p = parts
    return f"{p['date']}T{p['time']}{p['frac']}{p['off']} {p['head']}NVRM: Xid ({p['pci']}){p['sep']}{p['code']}{p['tail']}"


def _python_row(text: str, lineno: int) -> dict | None | str:
    ctx = LineContext(path="x.log", source="kernel", lineno=lineno, state={"tz": UTC, "host": "stem"})
    try:
        row = parse_kernel_line(text, ctx)
    except ParseError as exc:
        return f"error: {exc.message}"
    if row is None or "_partial" in row or "_mono" in row:
        return None
    return {k: v for k, v in row.items() if not k.startswith("_")}


@settings(max_examples=300, deadline=None)
@given(st.lists(_xid_lines(), min_size=1, max_size=30))
def test_bulk_xid_rows_equal_per_line_rows(lines: list[str]) -> None:
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    ctx = LineContext(path="x.log", source="kernel", state={"tz": UTC, "host": "stem"})
    rows, rest = _bulk.kernel_xid(hits, ctx)
    assert sorted(rows["_lineno"].to_list() + [i + 1 for i in rest["i"].to_list()]) == list(range(1, len(lines) + 1))
    assert rest["line"].to_list() == [lines[i] for i in rest["i"].to_list()]
    for row in rows.to_dicts():
        lineno = row.pop("_lineno")
        assert _python_row(lines[lineno - 1], lineno) == row, lines[lineno - 1]


def test_bulk_takes_the_common_shapes() -> None:
    lines = [
        "2024-06-03T14:02:11.123456+00:00 node0421 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>',"
        " name=<unknown>, GPU has fallen off the bus.",
        "2024-06-03T14:02:11Z node1 kernel: NVRM: Xid (PCI:0000:AB:00.1): 013, pid=7, name=x, SM Warp",
        "2024-06-03T14:02:11-05:00 node1 kernel[3]: NVRM: Xid (0000:18:00): 63",
    ]
    hits = pl.DataFrame({"i": [0, 1, 2], "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    rows, rest = _bulk.kernel_xid(hits, LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"}))
    assert rest.height == 0
    assert rows["signal"].to_list() == ["xid:79", "xid:13", "xid:63"]
    assert rows["severity"].to_list() == ["critical", "error", "warning"]
    assert rows["gpu"].to_list() == ["0000:18:00", "0000:ab:00", "0000:18:00"]
    assert rows["message"].to_list() == ["GPU has fallen off the bus.", "SM Warp", ""]


def test_polars_settings_are_left_as_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"x NVRM: Xid\n" * 3)
    monkeypatch.delenv("POLARS_NDJSON_CHUNK_SIZE", raising=False)
    monkeypatch.setenv("POLARS_LINES_CHUNK_PREFETCH_LIMIT", "3")
    counter = [0]
    assert len(list(_fastscan.path_candidates(str(path), (b"Xid",), counter))) == 3 and counter[0] == 3
    assert "POLARS_NDJSON_CHUNK_SIZE" not in os.environ
    assert os.environ["POLARS_LINES_CHUNK_PREFETCH_LIMIT"] == "3"


def test_gzip_multi_member_and_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    line = f"2024-06-03T14:02:11+00:00 node1 kernel: {XID}\n".encode()
    noise = b"2024-06-03T14:02:12+00:00 node1 CRON[1]: run\n"
    path = tmp_path / "node1.log.gz"
    path.write_bytes(gzip.compress(line + noise * 3) + gzip.compress(line) + b"\x00" * 8)
    res = read_kernel(str(path))
    assert (res.lines, res.parsed, res.malformed) == (5, 2, 0)
    big = gzip.compress((line + noise * 50) * 400)
    path.write_bytes(big[: len(big) // 2])
    res = read_kernel(str(path))
    assert res.lines == res.parsed + res.irrelevant + res.malformed and res.parsed > 0
    assert "stream ended abnormally" in res.quarantine["reason"].iloc[-1]
    path.write_bytes(gzip.compress(line) + b"garbage")
    res = read_kernel(str(path))
    assert res.parsed == 1 and "stream ended abnormally" in res.quarantine["reason"].iloc[-1]


# --- the other rsyslog signal shapes (mlx5, networkd, nvme, blk, MCE, EDAC, AER)

#: messages after ``tag: ``: shapes the bulk parser should take, then near misses it must
#: leave to the per-line parser (or that the per-line parser reads differently)
_OTHER_GOOD = [
    "mlx5_core 0000:1a:00.0 ens1f0np0: Link down", "mlx5_core a b:c: Link down",
    "mlx5_core 0000:1a:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error ",
    "mlx5_core 0000:1a:00.0: Port module event[error]: ", "mlx5_core 0000:1a:00.0: health: device's health compromised",
    "mlx5_core x health compromised - reached miss count", "ens1f0np0: Lost carrier", "a:b: Lost carrier",
    "nvme nvme3: controller is down; will reset: CSTS=0xffffffff ", "nvme nvme0: controller is down",
    "blk_update_request: I/O error, dev nvme3n1, sector 123456 op 0x0:(READ)", "I/O error, dev sda,",
    "mce: [Hardware Error]: CPU 12: Machine Check: 0 Bank 5: be00000000800400",
    "mce: [Hardware Error]: CPU 0: Machine Check Exception:  7 Bank 1 ",
    "EDAC MC0: 1 UE memory read error on CPU_SrcID#0 (channel:1)", "EDAC sbridge MC12: 30 UE x ", "EDAC MC1: 2 UE",
    "pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0",
    "AER: Multiple Uncorrected (Fatal) error received:   0000:18:00.0 tail", "pcieport a:b: AER: Uncorrected (Fatal) error received",
    "EDAC MC0: 1 CE memory read error on x", "EDAC skx MC4: 262 CE x OVERFLOW", "mce: [Hardware Error]: Machine check events logged",
    "pcieport 0000:00:02.0: AER: Corrected error received: id=0010", "AER: Multiple Corrected error received: id=00e8",
    "pcieport a:b: AER: Uncorrectable (Non-Fatal) error message received from c",
    "pcieport a:b: AER: Uncorrectable (Fatal) error message received from c",
    "nvme nvme1: I/O 7 QID 2 timeout, aborting", "nvme nvme12: I/O 1 QID 30 timeout, reset controller",
]
_OTHER_BAD = [
    "mlx5_core a b c: Link down", "mlx5_core a b: Link down mlx5_core", "mlx5_core a b: Link down, Link down",
    "mlx5_core a: Link down", "[12.5] ens1: Lost carrier", "[12.5]ens1: Lost carrier", " ens1: Lost carrier",
    "ens1: Lost carrier EDAC", "mlx5_core a:: health compromised", "mlx5_core : health compromised",
    "mlx5_core a b: Link down health compromised", "nvme nvmeX: controller is down", "I/O error, dev ,x",
    "I/O error, dev a b, c", "mce: [Hardware Error]: CPU x: Machine Check: y",
    "mce: [Hardware Error]: CPU 1: Machine Check: Machine Check", "EDAC MC0: 1 UEx", "EDAC EDAC MC0: 1 UE",
    "x pcieport a: AER: Uncorrected (Fatal) error received: b", "AER: Uncorrected (Fatal) error received: caf\u00e9",
    "AER: Uncorrected error received: x", "NVRM: Xid (PCI:0000:18:00): 79, EDAC MC0: 1 UE", "SXid EDAC MC0: 1 UE",
    "ens1: Lost carrier\t", "ens1: Lost\u00a0carrier", "mlx5_core 0000:1a:00.0: Port module event[error]:",
    "mce: [Hardware Error]: Machine check events logged x", "EDAC MC0: 1 CEx", "AER: Corrected error received: caf\u00e9",
    "mce: [Hardware Error]: CPU 1: Machine Check: Machine check events logged", "EDAC MC0: CE page 0x1",
    "pcieport a: AER: Corrected error received: x PCIe Bus Error", "AER: Uncorrected error received: x y",
    "nvme nvme1: I/O 7 QID x timeout, aborting", "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",
]
_OTHER_HEADS = ["2024-06-03T14:02:11.5+00:00 n1 kernel: ", "2024-06-03T14:02:11Z n-2 systemd-networkd[2385]: ",
                "2024-06-03T14:02:11Z n1 kernel:", "2024-02-30T14:02:11Z n1 kernel: ", "2024-06-03T14:02:11Z kernel: ",
                "2024-06-03T14:02:11Z pcieport x: ", "2024-06-03T14:02:11Z n1 mlx5_core: ", "Jun  3 14:02:11 n1 kernel: "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OTHER_HEADS), st.sampled_from(_OTHER_GOOD + _OTHER_BAD)),
                min_size=1, max_size=30))
def test_bulk_other_rows_equal_per_line_rows(pairs: list[tuple[str, str]]) -> None:
    lines = [head + body for head, body in pairs]
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    ctx = LineContext(path="x.log", source="kernel", state={"tz": UTC, "host": "stem"})
    rows, rest = _bulk_route.kernel_rows(hits, ctx)
    assert rows["_lineno"].to_list() == sorted(rows["_lineno"].to_list())
    # (the rows of RFC 3164 lines wait for the year, kept back with their lines: ``_late``)
    late = [n for frame in ctx.state.get("bulk_late", []) for n in frame["_lineno"].to_list()]
    assert all(lines[n - 1].startswith("Jun") for n in late)
    assert sorted(rows["_lineno"].to_list() + [i + 1 for i in rest["i"].to_list()] + late) == list(
        range(1, len(lines) + 1))
    assert rest["line"].to_list() == [lines[i] for i in rest["i"].to_list()]
    for row in rows.to_dicts():
        lineno = row.pop("_lineno")
        assert _python_row(lines[lineno - 1], lineno) == row, lines[lineno - 1]


def test_bulk_takes_the_other_common_shapes() -> None:
    """Every common shape is taken; the last lines of a group are always left to the per-line
    parser (the next group may hold their continuation lines)."""
    tail = [f"2024-06-03T14:02:11Z n1 kernel: EDAC MC0: {k} CE tail" for k in range(_bulk_route._AER_LINES + 1)]
    lines = [_OTHER_HEADS[0] + body for body in _OTHER_GOOD] + tail
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    rows, rest = _bulk_route.kernel_rows(hits, LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"}))
    assert rest["i"].to_list() == list(range(len(_OTHER_GOOD), len(lines)))
    assert rows["_lineno"].to_list() == list(range(1, len(_OTHER_GOOD) + 1))
    assert rows["host"].unique().to_list() == ["n1"]


# --- NVSwitch SXid reports: first and detail lines decided in bulk, all of a group's or none

_SX = "2024-06-03T14:02:1{s}Z n{h} kernel: nvidia-nvswitch{w}: SXid (PCI:0000:c{w}:00.0): {c}, "
_SXID_TEXTS = ["Non-fatal, Link 28 egress non-posted PRIV error (First)", "Fatal, Link 48 LTSSM Fault Up",
               "Severity 0 Engine instance 28 Sub-engine instance 00", "Severity 1 Engine instance 48 Sub-engine",
               "Data {0x00000000, 0x00000001}", "fatal", " Non-fatal, x , fatal ", "", "Data{x}"]
#: SXid lines the bulk shape refuses (the group then goes to the per-line parser whole)
_SXID_ODD = ["2024-06-03T14:02:11Z n1 kernel: x nvidia-nvswitch1: SXid (PCI:0000:c1:00.0): 12028, Fatal",
             "2024-06-03T14:02:11Z n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c1:00.0): 1234567890, Fatal",
             "2024-06-03T14:02:11Z n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c1:00.0): x, Fatal",
             "Jun  3 14:02:11 n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c1:00.0): 12028, Fatal",
             "2024-06-03T14:02:11Z n1 kernel: nvidia-nvswitch1: SXid (PCI:0000:c1:00.0): 12028, caf\u00e9"]
_FILLER = "2024-06-03T14:02:19Z n9 kernel: EDAC MC0: 1 CE memory read error on x"


def _group(draw: st.DrawFn, odd: list[str], shape: Callable[[st.DrawFn], str]) -> list[str]:
    """1-25 lines: mostly ``shape``, some filler, now and then an odd near-miss; filler tail."""
    lines = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.integers(0, 12))
        if kind == 0:
            lines.append(_FILLER)
        elif kind == 1 and draw(st.integers(0, 3)) == 0:
            lines.append(draw(st.sampled_from(odd)))
        else:
            lines.append(shape(draw))
    return lines + [_FILLER] * (_bulk_route._AER_LINES + 1)  # the tail of a group is always held back


def _sxid_line(draw: st.DrawFn) -> str:
    head = _SX.format(s=draw(st.integers(0, 9)), h=draw(st.integers(1, 2)), w=draw(st.integers(1, 2)),
                      c=draw(st.sampled_from(["12028", "20034", "012028"])))
    return head + draw(st.sampled_from(_SXID_TEXTS))


@st.composite
def _sxid_group(draw: st.DrawFn) -> list[str]:
    return _group(draw, _SXID_ODD, _sxid_line)


def _sequential(lines: list[str], ctx: LineContext, numbers: list[int]) -> dict[int, dict | str]:
    out: dict[int, dict | str] = {}
    for n in numbers:
        ctx.lineno = n
        try:
            row = parse_kernel_line(lines[n - 1], ctx)
        except ParseError as exc:
            out[n] = exc.message
            continue
        if row is not None:
            out[n] = {k: v for k, v in row.items() if not k.startswith("_")}
    return out


def _context(state: dict) -> LineContext:
    """A kernel line context on a copy of ``state`` (its tables copied too)."""
    return LineContext(path="x.log", source="kernel",
                       state={k: dict(v) if isinstance(v, dict) else v for k, v in state.items()})


def _bulk_equals_per_line(lines: list[str], state: dict, start: int = 0
                          ) -> tuple[pl.DataFrame, pl.DataFrame, LineContext, LineContext]:
    """Assert: the bulk rows of ``lines[start:]`` plus the per-line rows of what it left == the
    per-line parser on every one of those lines in order.  Returns the bulk rows and rest, and
    the bulk and reference contexts (for their state)."""
    ctx, ref_ctx = _context(state), _context(state)
    hits = pl.DataFrame({"i": list(range(start, len(lines))), "line": lines[start:]},
                        schema={"i": pl.UInt32, "line": pl.String})
    rows, rest = _bulk_route.kernel_rows(hits, ctx)
    got: dict[int, dict | str] = {}
    for row in rows.to_dicts():
        got[row.pop("_lineno")] = row
    for frame in ctx.state.get("bulk_late", []):  # rows kept for the end of the file: no time yet
        for row in frame.select("_lineno", "host", "gpu", "job_id", "source", "signal", "severity",
                                "message").to_dicts():
            lineno = row.pop("_lineno")
            got[lineno] = {"time": None, **row}
    got.update(_sequential(lines, ctx, [i + 1 for i in rest["i"].to_list()]))
    assert got == _sequential(lines, ref_ctx, list(range(start + 1, len(lines) + 1)))
    return rows, rest, ctx, ref_ctx


@settings(max_examples=300, deadline=None)
@given(_sxid_group(), st.sampled_from([None, 1, 150, 400]))
def test_bulk_sxid_reports_equal_per_line_reports(lines: list[str], opened_at: int | None) -> None:
    """Bulk rows plus the per-line rows of what it left == the per-line parser on every line in order,
    with a report of an earlier group open (or not) and the open-report table updated alike."""
    state = {"tz": UTC, "host": "stem"}
    if opened_at is not None:  # an earlier group opened a report of switch 1, code 12028, at line -opened_at
        lines = [_FILLER] * opened_at + lines
        state["sxid_open"] = {("nvidia-nvswitch1 (PCI", "sxid:12028"): 1}
    # the group: the lines after the fillers
    _, _, ctx, ref_ctx = _bulk_equals_per_line(lines, state, opened_at or 0)
    assert ctx.state.get("sxid_open", {}) == ref_ctx.state.get("sxid_open", {})


@settings(max_examples=200, deadline=None)
@given(_sxid_group(), st.lists(st.booleans(), min_size=_bulk_route._AER_LINES + 1, max_size=_bulk_route._AER_LINES + 1))
def test_bulk_sxid_reports_with_sxid_lines_in_the_tail(lines: list[str], tail_sxid: list[bool]) -> None:
    """SXid lines among the group's last lines (always left to the per-line parser) no longer send
    the group's other SXid lines there: bulk plus per-line == the per-line parser, in line order."""
    tail = [_SX.format(s=9, h=1, w=1, c="12028") + _SXID_TEXTS[2 if k % 2 else 0] if sx else _FILLER
            for k, sx in enumerate(tail_sxid)]
    lines = lines[: -len(tail)] + tail
    rows, rest, ctx, ref_ctx = _bulk_equals_per_line(lines, {"tz": UTC, "host": "stem"})
    assert ctx.state.get("sxid_open", {}) == ref_ctx.state.get("sxid_open", {})
    group = lines[: -len(tail)]
    if not any(line in _SXID_ODD for line in group):  # every SXid line of the group decided in bulk
        assert not {n for n, line in enumerate(group) if "SXid" in line} & set(rest["i"].to_list())


def test_bulk_takes_sxid_reports() -> None:
    lines = [_SX.format(s=1, h=1, w=3, c="12028") + t for t in _SXID_TEXTS[:5]] + [_FILLER] * 9
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"})
    rows, rest = _bulk_route.kernel_rows(hits, ctx)
    assert not any("SXid" in line for line in rest["line"].to_list())  # every SXid line decided in bulk
    sx = rows.filter(pl.col("signal").str.starts_with("sxid:"))
    assert sx["_lineno"].to_list() == [1, 2]  # two first lines; their detail lines are part of the reports
    assert sx["severity"].to_list() == ["warning", "critical"]
    assert ctx.state["sxid_open"] == {("nvidia-nvswitch3 (PCI", "sxid:12028"): 2}


# --- AER reports and noise lines: decided in bulk when every AER line of a group has a bulk shape

_AER_HEAD = "2024-06-03T14:02:1{s}Z n1 kernel: "
_AER_BODIES = [
    "pcieport 0000:00:02.0: AER: Corrected error received: 0000:18:00.0",
    "pcieport 0000:17:01.0: AER: Corrected error received: 0000:5d:00.0", "AER: Corrected error received: id=00e8",
    "pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0",
    "pcieport 0000:00:02.0: AER: Corrected error received:",
    "nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "nvidia 0000:5d:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
    "pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=x",
    "0000:99:00.0: PCIe Bus Error: severity=Corrected ", "a b c: PCIe Bus Error: severity=Corrected",
    "nvidia 0000:18:00.0: PCIe Bus Error: severity=Info, type=x",
    # noise with a literal: dropped in bulk, irrelevant on both routes
    "pcieport 0000:17:01.0: AER: enabled with IRQ 26", "EDAC MC0: Giving out device to module skx_edac controller",
    "mce: [Hardware Error]: TSC 0 ADDR 3f6b4a540 MISC 8c000040000800c0", "EDAC sbridge: Seeking for: PCI ID 8086:3ca0",
    "nvme nvme1: I/O 775 QID 2 timeout, aborting", "nvme nvme1: I/O 7 QID 9 timeout, reset controller ",
]
#: AER lines no bulk shape takes (the group's reports then go to the per-line parser)
_AER_ODD = ["Jun  3 14:02:11 n1 kernel: pcieport 0000:00:02.0: AER: Corrected error received: 0000:18:00.0",
            "2024-06-03T14:02:11Z n1 kernel: nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected caf\u00e9",
            "2024-06-03T14:02:11Z n1 kernel: [5.1] pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected",
            "2024-06-03T14:02:11Z n1 kernel: mlx5_core x: AER: Corrected error received: 0000:18:00.0",
            "2024-06-03T14:02:11Z n1 kernel: EDAC MC0: 1 CE PCIe Bus Error: severity=Corrected"]


@st.composite
def _aer_group(draw: st.DrawFn) -> list[str]:
    return _group(draw, _AER_ODD,
                  lambda d: _AER_HEAD.format(s=d(st.integers(0, 9))) + d(st.sampled_from(_AER_BODIES)))


@settings(max_examples=300, deadline=None)
@given(_aer_group(), st.sampled_from([None, 1, 5, 20]))
def test_bulk_aer_reports_equal_per_line_reports(lines: list[str], opened_at: int | None) -> None:
    """Bulk rows plus the per-line rows of what it left == the per-line parser on every line in
    order (noise lines in neither), with an AER line of an earlier group in ``aer_heads`` or
    not, and that table updated alike."""
    state: dict = {"tz": UTC, "host": "stem"}
    if opened_at is not None:  # an earlier group's first line of a report, ``opened_at`` lines before
        lines = [_FILLER] * opened_at + lines
        state["aer_heads"] = {1: ("0000:00:02.0", "0000:18:00.0")}
    rows, _, ctx, ref_ctx = _bulk_equals_per_line(lines, state, opened_at or 0)
    assert rows["_lineno"].to_list() == sorted(rows["_lineno"].to_list())
    window = len(lines) + 1 - _bulk_route._AER_LINES  # entries the next group can still look back to
    assert ({n: v for n, v in ctx.state.get("aer_heads", {}).items() if n >= window}
            == {n: v for n, v in ref_ctx.state.get("aer_heads", {}).items() if n >= window})


def test_bulk_takes_aer_reports_and_noise() -> None:
    """A realistic group (an AER report, start-up noise, MCE detail lines, an NVMe timeout) leaves
    only its tail to the per-line parser."""
    lines = [_AER_HEAD.format(s=1) + body for body in (_AER_BODIES[0], _AER_BODIES[5], _AER_BODIES[11],
                                                       _AER_BODIES[12], _AER_BODIES[13], _AER_BODIES[15])]
    lines += [_FILLER] * (_bulk_route._AER_LINES + 1)
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"})
    rows, rest = _bulk_route.kernel_rows(hits, ctx)
    assert rest["i"].to_list() == list(range(6, len(lines)))
    assert rows["_lineno"].to_list() == [1, 6]  # the report's severity line is part of it; noise is no row
    assert rows["signal"].to_list() == ["pcie:aer_corrected", "nvme:io_timeout"]
    assert rows["message"].to_list()[1] == "nvme1: I/O 775 QID 2 timeout, aborting"
    assert set(ctx.state["aer_heads"]) == {1, 2}


# --- every shape in one group, with the stamps varied: the one-pass classification of the bulk
# parser (each shape takes the free lines of its own trigger mask; the rest is left once, in line
# order) and the time parsed from the line's first word must agree with the per-line parser

_STAMPS = st.builds(
    lambda date, frac, off: f"{date}T14:02:11{frac}{off}",
    st.sampled_from(["2024-06-03", "2024-02-29", "2023-02-29", "2024-02-30", "1899-12-31", "2259-12-31",
                     "2260-01-01"]),
    st.sampled_from(["", ".5", ".123", ".123456", ".1234567"]),
    st.sampled_from(["Z", "+00:00", "+05:30", "-11:45", "+24:00", "+0530", "z", ""]))
_EDAC_BODIES = ["EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1)",
                "EDAC skx MC4: 262 CE x OVERFLOW ", "EDAC MC1: 2 UE", "EDAC MC1: 2 UE\tx", "EDAC sbridge MC12: 30 UE x ",
                "EDAC MC0: 1 CE caf\u00e9", "EDAC [x] MC0: 1 CE y", "EDAC MC0: 1 CEx", "EDAC MC0: 1 CE EDAC"]
_MIXED_BODIES = _EDAC_BODIES + [
    XID, "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, EDAC MC0: 1 CE", _AER_BODIES[0], _AER_BODIES[5],
    _AER_BODIES[11], "mce: [Hardware Error]: Machine check events logged", _AER_BODIES[15],
    "nvidia-nvswitch1: SXid (PCI:0000:c6:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
    "mlx5_core 0000:1a:00.0 ens1f0np0: Link down", "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",
    # matchers without a bulk shape of their own: an AMD machine-check status line (no noise) and
    # another driver's link-down wording, also on a line the EDAC shape would otherwise take
    "[Hardware Error]: Deferred error, no action required.", "mce: [Hardware Error]: System Fatal error.",
    "igb 0000:01:00.0 eno1: NIC Link is Down", "EDAC MC0: 2 CE memory read error eno1: NIC Link is Down"]


_GOOD_STAMPS = ["2024-06-03T14:02:11Z", "2024-06-03T14:02:11.5+05:30", "2024-06-03T14:02:11.123456-11:45"]


@st.composite
def _mixed_line(draw: st.DrawFn) -> str:
    """Mostly a stamp of the bulk shape (so that whole AER/SXid groups are decided in bulk), now and
    then any stamp or separator (no space: the stamp is not the first word)."""
    odd = draw(st.integers(0, 5)) == 0
    stamp = draw(_STAMPS if odd else st.sampled_from(_GOOD_STAMPS))
    sep = draw(st.sampled_from([" ", "  ", ""])) if odd else " "
    return f"{stamp}{sep}n{draw(st.integers(1, 3))} kernel: {draw(st.sampled_from(_MIXED_BODIES))}"


@settings(max_examples=300, deadline=None)
@given(st.lists(_mixed_line(), min_size=1, max_size=40))
def test_bulk_mixed_group_equals_per_line(lines: list[str]) -> None:
    """Bulk rows plus the per-line rows of what it left == the per-line parser on every line in order;
    the rest is in line order and holds no line that has a bulk row."""
    lines = lines + [_FILLER] * (_bulk_route._AER_LINES + 1)
    rows, rest, _, _ = _bulk_equals_per_line(lines, {"tz": UTC, "host": "stem"})
    left = rest["i"].to_list()
    assert left == sorted(left) and not set(left) & {n - 1 for n in rows["_lineno"].to_list()}
    assert rows["_lineno"].to_list() == sorted(rows["_lineno"].to_list())


#: characters an EDAC line may carry beyond printable ASCII (tab, DEL, NUL, no-break space, é, a
#: line separator) and printable ones, for the lead-plus-printable split of the EDAC shape
_EDAC_CHARS = st.sampled_from(["a", " ", "~", "0", ":", "\t", "\x7f", "\x00", "\xa0", "\u00e9", "\u2028", "\x1b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["host", "lead", "tail"]), st.text(_EDAC_CHARS, min_size=1, max_size=4)),
                min_size=1, max_size=12))
def test_bulk_edac_lines_with_any_characters_equal_per_line(cuts: list[tuple[str, str]]) -> None:
    """An EDAC line is taken in bulk only when it is printable ASCII as a whole: a character
    outside ``[ -~]`` in the host, between ``EDAC`` and ``MCn`` or in the tail sends it to the
    per-line parser, and either way the rows equal the per-line parser's."""
    lines = []
    for where, text in cuts:
        host = f"n{text}" if where == "host" else "n1"
        word = f"sb{text} " if where == "lead" else ""
        tail = text if where == "tail" else ""
        lines.append(f"2024-06-03T14:02:11Z {host} kernel: EDAC {word}MC0: 1 CE memory read error{tail}")
    _bulk_equals_per_line(lines + [_FILLER] * (_bulk_route._AER_LINES + 1), {"tz": UTC, "host": "stem"})


def test_edac_lead_is_the_shape_without_its_printable_tail() -> None:
    assert _bulk._EDAC_SHAPE == _bulk._EDAC_LEAD + f"{_bulk._P}*$"
    hits = _bulk.with_printable(pl.DataFrame({"line": ["a b", "a\tb", "caf\u00e9", "x\x7f", "~ !", ""]}))
    assert hits["_printable"].to_list() == [True, False, False, False, True, True]


def test_bulk_takes_an_edac_storm_whatever_its_stamps() -> None:
    """Every EDAC line of the common shape is taken in bulk with the time of its own stamp."""
    lines = [f"{s} n1 kernel: {_EDAC_BODIES[0]}" for s in _GOOD_STAMPS] + [_FILLER] * (_bulk_route._AER_LINES + 1)
    hits = pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})
    rows, rest = _bulk_route.kernel_rows(hits, LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"}))
    assert rows["_lineno"].to_list() == [1, 2, 3] and rest["i"].to_list() == list(range(3, len(lines)))
    assert [t.isoformat() for t in rows["time"].to_list()] == [
        "2024-06-03T14:02:11+00:00", "2024-06-03T08:32:11.500000+00:00", "2024-06-04T01:47:11.123456+00:00"]
    assert rows["signal"].unique().to_list() == ["edac:correctable"]

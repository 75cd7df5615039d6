"""The kernel reader's bulk route on files that mix every header shape and every corpus line.

RFC 3164 and raw printk lines are read in bulk, but their rows wait for the whole file: the
year of an RFC 3164 line (none printed, RFC 3164 §4.1.2; it rolls over in December) and the
boot time of a printk line (seconds since boot) are settled at the end, with the per-line
rows.  The property: the reader with the bulk route gives what the pure per-line reader
gives (rows, accounting, quarantine, notes) on random mixes of every line of the real-world
corpus (``tests/reference/real_world/kernel/``, verbatim) and of its messages under every
header shape :func:`reliab.io.formats._timestamps.parse_header` reads, with continuation
lines, boot anchors and year rollovers among them.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io import _fastscan
from reliab.io._lines import LineContext
from reliab.io.formats.kernel import LITERALS, _bulk_route, read_kernel
from tests.test_kernel_bulk_headers import CORPUS, corpus_messages

T0 = 1717423331.0  # 2024-06-03T14:02:11Z
ANCHOR = "[    1.000000] rtc_cmos 00:00: setting system clock to 2024-06-03T14:00:00 UTC (1717423200)"
XID79 = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus."


def _hits(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})


def _ctx() -> LineContext:
    return LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"})


def _read(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch, **options: object) -> tuple:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if fast else 1 << 60)
    res = read_kernel(str(path), **options)  # type: ignore[arg-type]
    signals = res.tables["signals"].astype(str).values.tolist()
    return (res.lines, res.parsed, res.irrelevant, res.malformed, signals,
            res.quarantine.astype(str).values.tolist(), res.notes)


def test_rfc3164_rows_are_read_in_bulk_and_wait_for_the_year() -> None:
    """Two RFC 3164 signal lines across New Year: read in bulk, each row kept for the end of the
    file with its month, day and time (no year yet), the lines given back as they were read."""
    lines = ["Dec 31 23:59:50 n1 kernel: EDAC MC0: 1 CE memory read error on DIMM_A1",
             f"Jan  1 00:00:05.250000 n1 kernel: {XID79}"]
    lines += ["Jan  1 00:10:00 n1 kernel: EDAC MC0: 1 CE filler"] * (_bulk_route._AER_LINES + 1)
    ctx = _ctx()
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rows.height == 0
    assert rest["line"].to_list() == lines[2:]  # (the held tail; the two kept back are in no frame)
    late = pl.concat(ctx.state["bulk_late"])
    assert late.select("_lineno", "host", "gpu", "signal", "severity", "message", "_partial", "_frac",
                       "_fracus", "_text").rows() == [
        (1, "n1", None, "edac:correctable", "warning", "MC0: 1 CE memory read error on DIMM_A1",
         1231235950, None, 0, lines[0]),
        (2, "n1", "0000:18:00", "xid:79", "critical", "GPU has fallen off the bus.", 101000005, 0.25, 250000,
         lines[1])]


def test_rfc3164_year_rolls_over_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows read in bulk get 2023 before New Year and 2024 after it (year=2023 names the first)."""
    lines = ["Dec 31 23:59:50 n1 kernel: EDAC MC0: 1 CE memory read error on DIMM_A1",
             f"Jan  1 00:00:05.250000 n1 kernel: {XID79}"]
    lines += ["Jan  1 00:10:00 n1 kernel: EDAC MC0: 1 CE filler"] * (_bulk_route._AER_LINES + 1)
    path = tmp_path / "node7.log"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    signals = read_kernel(str(path), year=2023).tables["signals"]
    assert signals["time"].tolist()[:3] == [pd_time("2023-12-31T23:59:50"), pd_time("2024-01-01T00:00:05.25"),
                                            pd_time("2024-01-01T00:10:00")]
    assert signals["host"].tolist() == ["n1"] * len(lines)


def pd_time(text: str) -> object:
    import pandas as pd

    return pd.Timestamp(text, tz="UTC")


def test_printk_rows_are_read_in_bulk_from_the_boot_time(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Raw printk signal lines are read in bulk and placed from the rtc line's boot time:
    1717423200 s (14:00:00 UTC) less 1 s of uptime, plus each line's seconds since boot; the
    Xid 79 is kept for the bus-drop rule with its printk clock.  Without the anchor line in the
    group the row waits for the end of the file."""
    lines = [ANCHOR, f"[  100.500000] {XID79}"]
    lines += ["[  200.000000] EDAC MC0: 1 CE filler"] * (_bulk_route._AER_LINES + 1)
    ctx = _ctx()
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rows.select("_lineno", "host", "signal", "time").rows() == [
        (2, "h", "xid:79", datetime(2024, 6, 3, 14, 1, 39, 500000, tzinfo=UTC))]
    assert ctx.state["xid79_bulk"][0].select("_lineno", "kind", "t").rows() == [(2, "m", 100.5)]
    ctx = _ctx()
    rows, rest = _bulk_route.kernel_rows(_hits(lines[1:]), ctx)
    assert rows.height == 0 and rest["line"].to_list() == lines[2:]
    late = pl.concat(ctx.state["bulk_late"])
    assert late.select("_lineno", "host", "gpu", "signal", "_mono", "_monous").rows() == [
        (1, "h", "0000:18:00", "xid:79", 100.5, 100_500_000)]
    path = tmp_path / "node7.log"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    signals = read_kernel(str(path)).tables["signals"]
    assert signals["time"].tolist()[:2] == [pd_time("2024-06-03T14:01:39.5"), pd_time("2024-06-03T14:03:19")]
    assert signals["host"].tolist() == ["node7"] * (len(lines) - 1)


def _line(style: str, t: float, host: str, message: str) -> str:
    """``message`` as a line of header ``style`` written at UTC epoch ``t`` by ``host``."""
    g = time.gmtime(t)
    ymd, hms = time.strftime("%Y-%m-%d", g), time.strftime("%H:%M:%S", g)
    micro = f"{int(t * 1e6) % 1000000:06d}"
    day = f"{time.strftime('%b', g)} {g.tm_mday:2d} {hms}"
    mono = f"{t - T0 + 12.5:12.6f}"
    return {
        "rfc3339": f"{ymd}T{hms}.{micro}+00:00 {host} kernel: {message}",
        "short-iso": f"{ymd}T{hms}+0000 {host} kernel: {message}",
        "ctime": time.strftime("[%a %b ", g) + f"{g.tm_mday:2d} {hms} {g.tm_year}] {message}",
        "rfc3164": f"{day} {host} kernel: {message}",
        "short-precise": f"{day}.{micro} {host} kernel: {message}",
        "rfc3164-nohost": f"{day} kernel: {message}",
        "printk": f"[{mono}] {message}",
        "dmesg-iso": f"{ymd}T{hms},{micro}+00:00 {message}",
        "rfc5424": f"<6>1 {ymd}T{hms}.{micro[:3]}Z {host} kernel - - - {message}",
        "rfc5424-pid": f"<14>1 {ymd}T{hms}.{micro}+00:00 {host} kernel 4242 - - {message}",
        "rfc5424-nohost": f"<6>1 {ymd}T{hms}Z - kernel - - - {message}",
        "kmsg": f"6,{int(t) % 9999},{int((t - T0 + 12.5) * 1e6)},-;{message}",
        "console-iso": f"[{ymd} {hms}.{micro}][{mono}] {message}",
        "logread": time.strftime("%a %b ", g) + f"{g.tm_mday:2d} {hms} {g.tm_year} kern.info kernel: {message}",
        "indented": f"  {message}",
    }[style]


STYLES = ("rfc3339", "short-iso", "ctime", "rfc3164", "short-precise", "rfc3164-nohost", "printk", "dmesg-iso",
          "rfc5424", "rfc5424-pid", "rfc5424-nohost", "kmsg", "console-iso", "logread", "indented")


@cache
def corpus_lines() -> tuple[str, ...]:
    """Every distinct non-blank line of the corpus, as captured (its own header shape)."""
    seen: dict[str, None] = {}
    for path in sorted(CORPUS.glob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                seen.setdefault(line, None)
    return tuple(seen)


@st.composite
def _mixed_log(draw: st.DrawFn) -> list[str]:
    """A log whose lines each take a random header shape (or are a corpus line as captured), with
    corpus messages, repeats (storms), forward steps and jumps of months (year rollovers)."""
    verbatim = corpus_lines()
    messages = draw(st.sampled_from([corpus_messages(), signal_messages()]))
    styles = draw(st.lists(st.sampled_from(STYLES), min_size=1, max_size=3))  # a file mixes a few shapes
    start = draw(st.sampled_from([T0, 1735689000.0 - 86400 * 2]))  # June, or two days before New Year
    picks = draw(st.lists(st.tuples(st.integers(0, len(messages) - 1), st.integers(1, 4),
                                    st.sampled_from(styles + ["verbatim", "anchor"]),
                                    st.sampled_from(["node1", "gpu-a7", "n3"]),
                                    st.sampled_from([0, 1, 30, 3600, 86400 * 40])),
                          min_size=1, max_size=30))
    t, lines = start, []
    for index, repeat, style, host, step in picks:
        t += step
        if style == "verbatim":
            line = verbatim[index % len(verbatim)]
        elif style == "anchor":
            line = ANCHOR
        else:
            line = _line(style, t, host, messages[index])
        lines += [line] * repeat
    return lines + [QUIET] * (_bulk_route._AER_LINES + 1)  # the tail of a group is always left to the per-line parser


#: a candidate line the per-line parser finds irrelevant without a look at state (driver start-up)
QUIET = "EDAC MC0: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0"


@cache
def signal_messages() -> tuple[str, ...]:
    """The corpus messages holding a literal of the reader's prefilter (its candidate lines)."""
    return tuple(m for m in corpus_messages() if any(lit.decode() in m for lit in LITERALS))


@settings(max_examples=int(os.environ.get("KBULK_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_mixed_log(), st.sampled_from([None, 2024]), st.sampled_from([None, "2024-06-03T14:00:00Z"]),
       st.sampled_from([None, None, "Europe/Berlin", timezone(timedelta(hours=5, minutes=30))]))
def test_bulk_route_equals_per_line_route_on_mixed_headers(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path_factory: pytest.TempPathFactory,
                                                            lines: list[str], year: int | None,
                                                            boot_time: str | None, tz: str | tzinfo | None) -> None:
    """The reader with the bulk route == the pure per-line reader on random mixes of every corpus
    line and every header shape, with and without ``year=`` and ``boot_time=``, in UTC, a zone
    with summer time and a fixed offset."""
    path = tmp_path_factory.mktemp("k") / "node7.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options = {"year": year, "boot_time": boot_time, "tz": tz}
    assert _read(path, True, monkeypatch, **options) == _read(path, False, monkeypatch, **options)


def test_mixed_generator_covers_every_header_shape() -> None:
    """Each header shape of the generator is read by the per-line parser as the style it names."""
    from reliab.io.formats._timestamps import parse_header

    expected = {"rfc3339": "rfc3339", "short-iso": "rfc3339", "ctime": "dmesg_ctime", "rfc3164": "rfc3164",
                "short-precise": "rfc3164", "rfc3164-nohost": "rfc3164", "printk": "dmesg_raw",
                "dmesg-iso": "dmesg_iso", "rfc5424": "rfc5424", "rfc5424-pid": "rfc5424", "rfc5424-nohost": "rfc5424",
                "kmsg": "kmsg", "console-iso": "console_iso",
                "logread": "logread", "indented": "none"}
    got = {s: parse_header(_line(s, T0, "n1", "EDAC MC0: 1 CE x")).style for s in STYLES}
    assert got == expected
    assert datetime.fromtimestamp(T0, UTC) == datetime(2024, 6, 3, 14, 2, 11, tzinfo=UTC)


def test_rows_whose_time_is_certain_are_settled_in_bulk() -> None:
    """With ``year=`` an RFC 3164 row's year is certain (no rollover before it), with ``boot_time=``
    a printk row's time: both come out of the bulk route with their time (UTC, the zone default)."""
    tail = ["EDAC MC0: Giving out device to module skx_edac"] * (_bulk_route._AER_LINES + 1)
    lines = ["Jun  3 14:02:11.250000 n1 kernel: EDAC MC0: 1 CE memory read error on DIMM_A1",
             "[  100.500000] EDAC MC1: 2 CE memory read error on DIMM_B1", *tail]
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"},
                      options={"year": 2023, "boot_time": "2024-06-03T14:00:00Z"})
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rows.select("_lineno", "host", "signal").rows() == [(1, "n1", "edac:correctable"),
                                                               (2, "h", "edac:correctable")]
    assert rows["time"].to_list() == [datetime(2023, 6, 3, 14, 2, 11, 250000, tzinfo=UTC),
                                      datetime(2024, 6, 3, 14, 1, 40, 500000, tzinfo=UTC)]
    assert "bulk_late" not in ctx.state and ctx.state["settled_partial"] == 1


def test_a_year_rollover_leaves_the_later_rows_to_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a line more than a day earlier than one before it (New Year), the bulk route no longer
    knows the year: from there the rows wait for the end, and each year is the per-line reader's."""
    tail = ["EDAC MC0: Giving out device to module skx_edac"] * (_bulk_route._AER_LINES + 1)
    before = [f"Dec 31 23:5{k}:00 n1 kernel: EDAC MC0: 1 CE before" for k in range(5)]
    after = [f"Jan  1 00:0{k}:00 n1 kernel: EDAC MC0: 1 CE after" for k in range(5)]
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"}, options={"year": 2023})
    first, _ = _bulk_route.kernel_rows(_hits(before + tail), ctx)
    second, rest = _bulk_route.kernel_rows(_hits(after + tail), ctx)
    assert first.height == 5 and second.height == 0 and ctx.state["partial_unsure"]
    path = tmp_path / "node7.log"
    path.write_text("\n".join(before + tail + after + tail) + "\n")
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    times = read_kernel(str(path), year=2023).tables["signals"]["time"].tolist()
    assert times == [pd_time(f"2023-12-31T23:5{k}:00") for k in range(5)] + [
        pd_time(f"2024-01-01T00:0{k}:00") for k in range(5)]


def test_rows_waiting_for_the_file_are_completed_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An RFC 3164 file without year= and without a dated line, and a printk file whose anchor comes
    last: no signal line goes to the per-line parser, and each row gets the year of the file's
    modification time (2024, set here; June is before the mtime's day) or the boot time of the
    anchor at the end (14:00:00 UTC less 1 s of uptime, plus the line's seconds)."""
    from reliab.io import formats

    tail = ["EDAC MC0: Giving out device to module skx_edac"] * (_bulk_route._AER_LINES + 1)
    syslog = tmp_path / "node7.log"
    syslog.write_text("\n".join([f"Jun  3 14:02:1{k}.5 n1 kernel: EDAC MC0: 1 CE memory read error" for k in range(5)]
                                + tail) + "\n")
    os.utime(syslog, (1733500000, 1733500000))  # 2024-12-06
    printk = tmp_path / "node8.log"
    printk.write_text("\n".join([f"[  10{k}.250000] EDAC MC0: 1 CE memory read error" for k in range(5)]
                                + tail + [ANCHOR]) + "\n")
    seen: list[str] = []
    parse = formats.kernel.parse_kernel_line
    monkeypatch.setattr(formats.kernel, "parse_kernel_line", lambda text, ctx: seen.append(text) or parse(text, ctx))
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    times = read_kernel(str(syslog)).tables["signals"]["time"].tolist()
    assert times == [pd_time(f"2024-06-03T14:02:1{k}.5") for k in range(5)]
    times = read_kernel(str(printk)).tables["signals"]["time"].tolist()
    assert times == [pd_time(f"2024-06-03T14:01:{39 + k}.25") for k in range(5)]
    assert not [t for t in seen if "CE memory" in t]


def test_rows_kept_for_the_end_stream_like_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``output=`` the rows completed at the end of the file join the per-line rows (the sink
    takes bulk rows in line order): the streamed tables equal the in-memory ones, row for row."""
    import reliab
    from reliab.io import _streamed
    from tests.test_streamed_output import assert_same

    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", 16)
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 97)
    monkeypatch.setattr(_streamed, "BATCH_ROWS", 40)
    logs = tmp_path / "logs"
    logs.mkdir()
    messages = signal_messages()
    for name, style in (("node1.log", "rfc3164"), ("node2.log", "printk"), ("node3.log", "rfc3339")):
        lines = [_line(style, T0 + 7 * k, "node1", messages[k % len(messages)]) for k in range(600)]
        (logs / name).write_text("\n".join(lines + [ANCHOR]) + "\n", encoding="utf-8")
    memory = reliab.ingest(logs)
    assert len(memory.signals) > 900
    assert_same(memory, reliab.ingest(logs, output=tmp_path / "out"))


def test_dmesg_iso_and_rfc5424_lines_are_read_in_bulk() -> None:
    """``dmesg --time-format iso`` (no host: the file's) and RFC 5424 kernel lines give their rows in
    bulk, with the instant of their stamp (the comma is the decimal sign) and the host they name;
    an RFC 5424 line naming no host (``-``) is left to the per-line parser."""
    tail = [QUIET] * (_bulk_route._AER_LINES + 1)
    lines = ["2024-06-03T14:02:11,250000+02:00 EDAC MC0: 1 CE memory read error on DIMM_A1",
             f"<6>1 2024-06-03T14:02:12.5Z gpu-a7 kernel - - - {XID79}",
             f"<14>1 2024-06-03T14:02:13+00:00 n3 kernel 4242 - - {XID79}",
             f"<6>1 2024-06-03T14:02:14Z - kernel - - - {XID79}", *tail]
    rows, rest = _bulk_route.kernel_rows(_hits(lines), _ctx())
    assert rows.select("_lineno", "host", "signal", "message").rows() == [
        (1, "h", "edac:correctable", "MC0: 1 CE memory read error on DIMM_A1"),
        (2, "gpu-a7", "xid:79", "GPU has fallen off the bus."), (3, "n3", "xid:79", "GPU has fallen off the bus.")]
    assert rows["time"].to_list() == [datetime(2024, 6, 3, 12, 2, 11, 250000, tzinfo=UTC),
                                      datetime(2024, 6, 3, 14, 2, 12, 500000, tzinfo=UTC),
                                      datetime(2024, 6, 3, 14, 2, 13, tzinfo=UTC)]
    assert rest["line"].to_list() == [lines[3]]  # (the quiet tail is no candidate)


def test_rfc3164_lines_without_a_host_are_read_in_bulk() -> None:
    """``Jun  3 14:02:11 kernel: …`` (a journal or syslog capture that prints no host): read in bulk
    with the file's host, as the per-line parser gives it, and kept for the year."""
    tail = [QUIET] * (_bulk_route._AER_LINES + 1)
    lines = ["Jun  3 14:02:11 kernel: EDAC MC0: 1 CE memory read error on DIMM_A1", *tail]
    ctx = _ctx()
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rows.height == 0 and rest.height == 0
    late = pl.concat(ctx.state["bulk_late"])
    assert late.select("_lineno", "host", "signal", "_partial").rows() == [(1, "h", "edac:correctable", 603140211)]

"""A hostile Prometheus: redirects, endless and slow answers, deep nesting — credentials never leak.

Fake servers on the standard library's ``http.server`` (no Prometheus binary needed): one on
127.0.0.1 whose behaviour is chosen by the path prefix given in the location, and one on
127.0.0.2 that records the headers of every request it gets and answers a valid matrix, so
that data from it would show if a redirect were followed.  Every run goes through the CLI
with ``user:password@`` in the URL; afterwards the password must not occur in stdout,
stderr or any file written.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import reliab
from reliab.cli import app
from reliab.errors import SourceError

PASSWORD = "Pa55-ZQXJ-secret"
START, END = "2024-06-03T00:00:00Z", "2024-06-03T00:05:00Z"
T0 = pd.Timestamp(START).timestamp()


def _matrix(host: str, xid: float | None = None) -> bytes:
    values = [[T0 + 60 * i, "40"] for i in range(6)]
    result = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", "Hostname": host, "gpu": "0"}, "values": values}]
    if xid is not None:
        result.append({"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": host, "gpu": "0"},
                       "values": [[T0, "0"], [T0 + 60, str(xid)]]})
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()


class _Handler(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]  # headers of every request (set per server)
    other: str  # base URL of the second server

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append(dict(self.headers))
        kind = self.path.split("/")[1]
        if kind == "redirect":
            self.send_response(302)
            self.send_header("Location", f"{self.other}/ok/api/v1/query_range?{self.path.split('?', 1)[1]}")
            self.end_headers()
        elif kind == "endless":
            self._head()
            chunk = b"[" * 65536
            try:
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        elif kind == "drip":
            self._head()
            try:
                for byte in b'{"status":"success","data":{"resultType":"matrix","result":[]}}':
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                return
        elif kind == "nested":
            self._send(b'{"status":"success","data":{"resultType":"matrix","result":'
                       + b"[" * 200_000 + b"]" * 200_000 + b"}}")
        elif kind == "escape":
            body = json.dumps({"status": "error", "errorType": "bad_data",
                               "error": "\x1b]52;c;cHduZWQ=\x07 bad \x9b2J query"}).encode()
            self.send_response(400)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif kind == "negxid":
            self._send(_matrix("n1", xid=-79))
        else:
            self._send(_matrix("n1"))

    def _head(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(host: str, seen: list, other: str = "") -> ThreadingHTTPServer:
    handler = type("H", (_Handler,), {"seen": seen, "other": other})
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def fakes() -> Iterator[dict]:
    second_seen: list[dict[str, str]] = []
    second = _serve("127.0.0.2", second_seen)
    first_seen: list[dict[str, str]] = []
    first = _serve("127.0.0.1", first_seen, f"http://127.0.0.2:{second.server_address[1]}")
    yield {"url": f"prometheus://admin:{PASSWORD}@127.0.0.1:{first.server_address[1]}",
           "port": first.server_address[1], "first": first_seen, "second": second_seen}
    first.shutdown()
    second.shutdown()


def _cli(tmp_path: Path, location: str, *extra: str) -> tuple[int, str]:
    """Run ``reliab ingest`` and return (exit code, everything it printed); asserts no leak anywhere."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["ingest", location, "--start", START, "--end", END, "--step", "60s",
                                      "--out", str(out), "--quiet", *extra])
    printed = result.stdout + result.stderr
    assert PASSWORD not in printed, printed
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert not leaked, leaked
    return result.exit_code, printed


def test_the_password_is_sent_to_its_server_and_kept_out_of_every_output(fakes, tmp_path):
    code, printed = _cli(tmp_path, fakes["url"] + "/ok")
    assert code == 0, printed
    assert fakes["first"][-1].get("Authorization", "").startswith("Basic ")
    acc = pd.read_parquet(tmp_path / "out" / "accounting.parquet")
    assert acc["path"].str.startswith("prometheus://127.0.0.1:").all()


def test_a_redirect_to_another_host_is_refused_without_sending_the_credentials(fakes, tmp_path):
    before = len(fakes["second"])
    code, printed = _cli(tmp_path, fakes["url"] + "/redirect")
    assert code == 1 and "redirect" in printed
    assert not any("Authorization" in h for h in fakes["second"][before:])
    assert len(fakes["second"]) == before  # nothing fetched from there, so nothing accepted
    assert not (tmp_path / "out").exists()


def test_a_deeply_nested_answer_is_a_clean_source_error(fakes, tmp_path):
    code, printed = _cli(tmp_path, fakes["url"] + "/nested")
    assert code == 1 and "nested too deeply" in printed, printed
    assert "source failed" not in printed and "RecursionError" not in printed
    with pytest.raises(SourceError, match="nested too deeply"):
        reliab.ingest(fakes["url"] + "/nested", start=START, end=END, step="60s")


def test_an_endless_answer_stops_at_the_size_limit(fakes, tmp_path):
    t = time.monotonic()
    code, printed = _cli(tmp_path, fakes["url"] + "/endless", "--max-bytes", "4000000")
    assert code == 1 and "4,000,000 bytes" in printed and "127.0.0.1" in printed
    assert time.monotonic() - t < 5


def test_a_slow_drip_stops_at_the_total_deadline(fakes, tmp_path):
    t = time.monotonic()
    code, printed = _cli(tmp_path, fakes["url"] + "/drip", "--timeout-s", "2")
    took = time.monotonic() - t
    assert code == 1 and "2 s" in printed, printed
    assert took < 4, took


@pytest.mark.parametrize("location", [
    f"prometheus://admin:{PASSWORD}@127.0.0.1:99999",
    f"prometheus://admin:{PASSWORD}@127.0.0.1:9090?bogus=1",
    f"prometheus+ftp://admin:{PASSWORD}@127.0.0.1:9090",
])
def test_errors_on_the_location_hide_the_password(location, tmp_path):
    code, printed = _cli(tmp_path, location)
    assert code == 1 and "admin:***@" in printed, printed


def test_report_errors_on_a_location_hide_the_password(tmp_path):
    result = CliRunner().invoke(app, ["report", f"prometheus://admin:{PASSWORD}@127.0.0.1:9/x", "--gpus", "8",
                                      "--out", str(tmp_path / "rep"), "--no-pdf", "--quiet"])
    printed = result.stdout + result.stderr
    assert result.exit_code == 1 and PASSWORD not in printed and "admin:***@" in printed, printed


def test_a_failing_source_row_hides_the_password(monkeypatch):
    from reliab.io import _driver

    class Boom:
        @staticmethod
        def read(url: str, **_: object) -> list:
            raise RuntimeError(f"broke reading {url}")

    monkeypatch.setattr(_driver, "get_source", lambda scheme: Boom)
    rows = _driver.read_url(f"prometheus://admin:{PASSWORD}@h:1?start=a", {}, strict=False)
    text = repr([(r.path, r.reason, r.quarantine) for r, _ in rows])
    assert "source failed" in text and PASSWORD not in text and "admin:***@h:1" in text


def test_a_negative_xid_is_quarantined(fakes):
    res = reliab.ingest(fakes["url"] + "/negxid", start=START, end=END, step="60s",
                        metrics=["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS"])
    assert not res.signals["signal"].str.startswith("xid:").any()
    assert res.accounting["malformed"].sum() == 1
    assert "-79" in res.quarantine["text"].iloc[0]


def test_a_server_message_cannot_drive_the_terminal(fakes, tmp_path):
    code, printed = _cli(tmp_path, fakes["url"] + "/escape")
    assert code == 1 and "\\x1b]52;c;cHduZWQ=\\x07 bad \\x9b2J query" in printed, printed
    assert not any(c in printed for c in "\x1b\x07\x9b")

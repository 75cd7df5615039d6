"""``journald://`` on a real journal file, written by ``systemd-journal-remote`` from export format.

The kernel lines are the gpud fixture ``tests/reference/gpud_nvidia_kernel_logs/
dmesg-decode-iso-xid13-xid43-oom.log`` (``dmesg --decode --time-format iso`` of a GPU server;
Apache-2.0, see its SOURCE.md): each becomes a journal entry with its time, ``_TRANSPORT=kernel``
and the message as printed.  Read through the journal, they must give the signals the kernel
reader gives for the text file itself.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import reliab
from reliab.errors import SourceError

FIXTURE = (Path(__file__).parent / "reference" / "gpud_nvidia_kernel_logs"
           / "dmesg-decode-iso-xid13-xid43-oom.log")
REMOTE = "/usr/lib/systemd/systemd-journal-remote"
_LINE = re.compile(r"^kern\s*:(\w+)\s*: (\S+) (.*)$")
_PRIORITY = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warn": 4, "notice": 5, "info": 6, "debug": 7}


def _entry(fields: list[tuple[str, str | bytes]]) -> bytes:
    out = b""
    for key, value in fields:
        if isinstance(value, bytes):  # binary field of the export format: length-prefixed
            out += key.encode() + b"\n" + struct.pack("<Q", len(value)) + value + b"\n"
        else:
            out += f"{key}={value}\n".encode()
    return out + b"\n"


def _export(lines: list[str]) -> bytes:
    """Journal export format (systemd "Journal Export Format") of the fixture's kernel lines."""
    out = b""
    for k, line in enumerate(lines):
        level, stamp, message = _LINE.match(line).groups()
        us = pd.Timestamp(stamp.replace(",", ".")).value // 1000
        out += _entry([("__REALTIME_TIMESTAMP", str(us)), ("__MONOTONIC_TIMESTAMP", str(k + 1)),
                       ("_BOOT_ID", "6c1f1a4e5d0b4f7e9a3c2b1d0e9f8a7b"), ("_HOSTNAME", "gpu-node-7"),
                       ("_TRANSPORT", "kernel"), ("SYSLOG_IDENTIFIER", "kernel"),
                       ("PRIORITY", str(_PRIORITY[level])), ("MESSAGE", message)])
    first = pd.Timestamp(_LINE.match(lines[0]).group(2).replace(",", ".")).value // 1000
    # not a kernel message: filtered out by _TRANSPORT=kernel
    out += _entry([("__REALTIME_TIMESTAMP", str(first)), ("__MONOTONIC_TIMESTAMP", "1"),
                   ("_BOOT_ID", "6c1f1a4e5d0b4f7e9a3c2b1d0e9f8a7b"), ("_HOSTNAME", "gpu-node-7"),
                   ("_TRANSPORT", "syslog"), ("SYSLOG_IDENTIFIER", "sshd"),
                   ("MESSAGE", "Accepted publickey for root")])
    # a kernel message that is not UTF-8: journalctl prints it as an array of bytes
    out += _entry([("__REALTIME_TIMESTAMP", str(first + 1)), ("__MONOTONIC_TIMESTAMP", "2"),
                   ("_BOOT_ID", "6c1f1a4e5d0b4f7e9a3c2b1d0e9f8a7b"), ("_HOSTNAME", "gpu-node-7"),
                   ("_TRANSPORT", "kernel"), ("MESSAGE", b"usb 1-1: \xff\xfe odd bytes")])
    return out


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    if shutil.which("journalctl") is None or not Path(REMOTE).exists():
        pytest.skip("journalctl or systemd-journal-remote not installed (Debian: apt-get install"
                    " systemd systemd-journal-remote)")
    folder = tmp_path_factory.mktemp("journal")
    lines = FIXTURE.read_text().splitlines()
    subprocess.run([REMOTE, f"--output={folder}/remote.journal", "-"], input=_export(lines),
                   capture_output=True, check=True, timeout=60)
    return folder


def test_journal_gives_the_signals_of_the_text(journal):
    res = reliab.ingest(f"journald://{journal}")
    text = reliab.ingest(FIXTURE, source="kernel")
    cols = ["time", "gpu", "signal", "message"]
    got = res.signals[cols].reset_index(drop=True)
    want = text.signals[cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    assert set(res.signals["host"]) == {"gpu-node-7"}
    assert {"xid:13", "xid:43"} <= set(got["signal"])
    acc = res.accounting.iloc[0]
    n = len(FIXTURE.read_text().splitlines())
    assert (acc["source"], acc["lines"], acc["malformed"]) == ("journald", n + 1, 0)  # + the binary one
    assert res.signals["origin"].str.startswith(f"journald://{journal}:").all()


def test_journal_file_and_window(journal):
    file = next(journal.glob("*.journal"))
    res = reliab.ingest(f"journald://{file}", start="2025-01-21T04:41:44", end="2025-01-21T04:41:45")
    assert len(res.signals) and (res.signals["time"] < pd.Timestamp("2025-01-21T04:41:45Z")).all()
    assert res.accounting["path"].iloc[0] == (f"journald://{file}?since=2025-01-21T04:41:44"
                                              "&until=2025-01-21T04:41:45")
    with pytest.raises(SourceError, match="no kernel messages"):
        reliab.ingest(f"journald://{file}", start="2001-01-01", end="2001-01-02")


def test_not_a_journal(tmp_path):
    from reliab.cli import app

    result = CliRunner().invoke(app, ["ingest", f"journald://{tmp_path}/missing", "--quiet"])
    assert result.exit_code == 1
    assert result.output.strip() == f"reliab: error: journald://{tmp_path}/missing: {tmp_path}/missing is neither a journal folder nor a journal file"

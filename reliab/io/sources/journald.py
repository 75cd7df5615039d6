"""``journald://``: kernel messages from a systemd journal, read with ``journalctl -o json``.

``journald://`` reads the local journal; ``journald:///path`` a journal folder
(``--directory``, e.g. ``/var/log/journal`` copied from a node, or ``systemd-journal-remote``
output) or one journal file (``--file``).  Only kernel messages are asked for
(``_TRANSPORT=kernel``; not ``-k``, which would also restrict to the current boot), over the
window ``--since``/``--until`` in UTC.  Each entry (journalctl(1), "json" output:
``__REALTIME_TIMESTAMP`` in microseconds, ``_HOSTNAME``, ``MESSAGE`` as a string or, when not
UTF-8, an array of bytes) is written as the ``journalctl -o short-iso-precise`` line it would
print and read by the ``kernel`` reader, so Xid, SXid, mlx5… signals are those of a text
capture.  One accounting line per entry; an entry without a time or message is malformed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pandas as pd

from reliab.errors import SourceError
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_source
from reliab.io.formats.kernel import read_kernel
from reliab.io.sources._command import argv, command_of, run
from reliab.io.sources._http import MAX_BYTES
from reliab.io.sources._relabel import relabel
from reliab.io.sources._window import Moment, utc

_INSTALL = "install systemd (journalctl) or pass journalctl_command="


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, int) for b in value):
        return bytes(b & 0xFF for b in value).decode("utf-8", errors="replace")
    return None


def entry_line(entry: Any) -> str | None:
    """The ``short-iso-precise`` line of one JSON entry, or ``None`` if it lacks time or message."""
    if not isinstance(entry, dict):
        return None
    message = _text(entry.get("MESSAGE"))
    stamp = str(entry.get("__REALTIME_TIMESTAMP", ""))
    if message is None or not stamp.isdigit() or len(stamp) > 18:
        return None
    when = pd.Timestamp(int(stamp), unit="us", tz="UTC")
    host = _text(entry.get("_HOSTNAME")) or "localhost"
    tag = _text(entry.get("SYSLOG_IDENTIFIER")) or "kernel"
    flat = " ".join(message.splitlines())
    return f"{when:%Y-%m-%dT%H:%M:%S.%f}+0000 {host.split()[0] if host.split() else 'localhost'} {tag}: {flat}"


def _location(location: str) -> tuple[list[str], str]:
    """journalctl arguments selecting the journal of ``location``, and its display name."""
    parts = urlsplit(location)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{location}: only the local journal or a path (journald:///path) can be read")
    path = unquote(parts.path)
    if not path or path == "/":
        return [], "journald://"
    p = Path(path)
    if p.is_dir():
        return [f"--directory={p}"], f"journald://{p}"
    if p.is_file():
        return [f"--file={p}"], f"journald://{p}"
    raise SourceError(f"{location}: {p} is neither a journal folder nor a journal file")


@register_source("journald")
def read_journald(
    location: str,
    *,
    start: Moment | None = None,
    end: Moment | None = None,
    journalctl_command: str | Sequence[str] = "journalctl",
    timeout_s: float = 600.0,
    max_bytes: int = MAX_BYTES,
    strict: bool = False,
) -> list[FileResult]:
    """systemd journal (``journald://[/path]``): kernel messages through the kernel reader.

    Parameters
    ----------
    location : str
        ``journald://`` (this machine's journal) or ``journald:///path`` (a folder of
        ``*.journal`` files or one file).
    start, end : str or datetime, optional
        The window (UTC when naive); default the whole journal.
    journalctl_command : str or list of str
        How to run journalctl, e.g. ``"ssh node7 journalctl"`` (the arguments added are
        then quoted for the remote shell).
    timeout_s : float
        Longest wait for journalctl (a total deadline: it is killed past it).
    max_bytes : int
        Most output read from journalctl (default 512 MiB); past it journalctl is killed
        and the read fails naming the limit.
    strict : bool
        Raise on the first malformed entry instead of quarantining it.

    Returns
    -------
    list of FileResult
        One, with path ``journald://…`` and the kernel reader's ``signals``.

    Raises
    ------
    SourceError
        journalctl is missing or fails, the path is no journal, or no kernel message is in
        the window.

    References
    ----------
    ``journalctl(1)`` (``--output=json``, ``--file``, ``--directory``, ``--since``, ``--until``,
    field matches); ``systemd.journal-fields(7)``.
    """
    select, display = _location(location)
    window = []
    if start is not None:
        window.append(f"--since={utc(start, 'start'):%Y-%m-%d %H:%M:%S} UTC")
    if end is not None:
        window.append(f"--until={utc(end, 'end'):%Y-%m-%d %H:%M:%S} UTC")
    args = argv(command_of(journalctl_command, "journalctl_command"), "--output=json", "--no-pager",
                "--quiet", *select, *window, "_TRANSPORT=kernel")
    raw = run(args, display, "journalctl", env={"TZ": "UTC"}, timeout_s=timeout_s, install_hint=_INSTALL,
              max_bytes=max_bytes)
    lines = raw.decode("utf-8", errors="replace").splitlines()
    converted, bad = [], []
    for n, line in enumerate(lines, 1):
        try:
            text = entry_line(json.loads(line))
        except ValueError:
            text = None
        if text is None:
            if strict:
                raise SourceError(f"{display}: entry {n} has no readable time or message")
            bad.append((n, line))
            text = ""  # a blank line: irrelevant to the kernel reader, moved to malformed below
        converted.append(text)
    if not len(converted) - len(bad):
        raise SourceError(f"{display}: no kernel messages" + (f" in {' '.join(window)}" if window else ""))
    folder = Path(tempfile.mkdtemp(prefix="reliab-journal-"))
    try:
        path = folder / "journal.log"
        path.write_text("\n".join(converted) + "\n", encoding="utf-8", errors="surrogateescape")
        result = read_kernel(str(path), strict=strict)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    url = display + ("?" + "&".join(w.lstrip("-").replace(" UTC", "").replace(" ", "T") for w in window)
                     if window else "")
    result = relabel(result, url)
    if bad:
        rows = [(url, n, "journald", "journal entry without __REALTIME_TIMESTAMP or MESSAGE", text[:2000])
                for n, text in bad]
        extra = quarantine_frame(rows)
        quarantine = extra if result.quarantine is None or not len(result.quarantine) else \
            pd.concat([result.quarantine, extra], ignore_index=True)
        result = dataclasses.replace(result, source="journald", irrelevant=result.irrelevant - len(bad),
                                     malformed=result.malformed + len(bad), quarantine=quarantine)
    return [dataclasses.replace(result, source="journald")]

"""The host a per-host capture names by its path: the file name, or its folder's.

Hand-overs lay captures out in two ways: one folder per source with one file per host
(``dmesg/node0421.log``, ``ipmi/node0421.sel``) or one folder per host with one file per
source (``node0421/dmesg.log``, ``node0421/sel.txt``, ``node0421/messages-20240601``).  In
the second, the file name is the name of the tool or log (``dmesg``, ``kern.log``,
``/var/log/messages``, ``ipmitool sel``), never a host: the host is the folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

#: names of captures that are a tool's or a log's, not a host's: ``dmesg`` (util-linux), the
#: rsyslog/syslog-ng files ``kern.log``, ``syslog``, ``messages``, ``kmsg`` (``/dev/kmsg``),
#: ``journal``/``journalctl`` output, a serial ``console`` log, ``ipmitool sel list``
#: (``sel``, ``ipmi``, ``ipmi-sel``, ``sel-elist``, ``bmc``); each with the dmesg option it was
#: printed with (``dmesg-T``, ``dmesg_iso``), a rotation number or date (``syslog.1``,
#: ``messages-20240601``), or a ``.log`` left in the middle (``kern.log.1``)
_GENERIC = re.compile(
    r"(?:dmesg|kern|kernel|syslog|messages|kmsg|journal|journalctl|console|sel|ipmi|ipmitool|bmc)"
    r"(?:[-_.](?:t|h|x|iso|raw|decode|ctime|reltime|k|kernel|log|old|all|full|sel|list|elist|[0-9]+))*")
#: folder names that hold logs but are not hosts either
_NOT_HOSTS = frozenset({"log", "logs", "var", ""})


def strip_suffixes(name: str, suffixes: Iterable[str]) -> str:
    """``name`` without its trailing ``suffixes`` (case-insensitive, repeatedly: ``.log.gz``)."""
    ends = tuple(suffixes)
    changed = True
    while changed:
        changed = False
        for suffix in ends:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def generic_capture_name(stem: str) -> bool:
    """Whether ``stem`` (a file name without compression/log suffixes) names a tool or log."""
    return _GENERIC.fullmatch(stem.lower()) is not None


def host_from_path(path: str, suffixes: Iterable[str]) -> str:
    """Host named by ``path``: its file name without ``suffixes``, or, when that name is a
    tool's or a log's (:func:`generic_capture_name`), the name of its folder.

    ``dmesg/node0421.log`` -> ``node0421``; ``node0421/dmesg.log`` and
    ``node0421/kern.log.1.gz`` -> ``node0421``; a bare ``dmesg.log`` (or one under a folder
    named ``logs``) keeps ``dmesg``, the only name the path gives.
    """
    p = Path(path)
    stem = strip_suffixes(p.name, suffixes)
    if generic_capture_name(stem):
        folder = p.parent.name
        if folder.lower() not in _NOT_HOSTS and not generic_capture_name(folder):
            return folder
    return stem


__all__ = ["host_from_path", "generic_capture_name", "strip_suffixes"]


def named_for(path: str, word: str) -> bool:
    """Whether the file or the folder holding it names ``word`` (case-insensitive).

    A folder higher up says nothing about the file: ``/work/sacct/train/run.log`` is a training
    log, whatever the checkout is called.
    """
    parts = path.replace("\\", "/").lower().rstrip("/").split("/")
    return any(word in part for part in parts[-2:])

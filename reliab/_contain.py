"""The containment rule: nothing outside the roots a user gives is read.

A hand-over folder is assembled by someone else; every byte of it is untrusted input,
symbolic links included.  A link is resolved (:func:`os.path.realpath`, every link on the
way followed) and must stay inside the root it was found under, else it is listed as an
``outside`` row and never opened.  Files of the kernel's pseudo-filesystems (``/proc``,
``/sys``, ``/dev``) are never opened, whether reached by a link, named on the command
line, or mounted inside a folder: they stat as regular files of size 0 and may hold
secrets (``/proc/self/environ``) or block forever (``/proc/kmsg``).
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

from reliab.errors import InputFileError

OUTSIDE = "outside"
#: mount points of the kernel's pseudo-filesystems (procfs, sysfs, devtmpfs)
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def real(path: str | os.PathLike[str]) -> str:
    """``path`` with every symbolic link resolved, absolute."""
    return os.path.realpath(os.fspath(path))


def inside(path: str, root: str) -> bool:
    """Whether the resolved ``path`` is ``root`` or lies under it (both already resolved)."""
    return path == root or path.startswith(os.path.join(root, ""))


@functools.cache
def _pseudo_devices() -> frozenset[int]:
    """Device numbers of ``/proc`` and ``/sys`` (a bind mount of either keeps its number)."""
    out = set()
    for root in PSEUDO_ROOTS[:2]:
        try:
            out.add(os.stat(root).st_dev)
        except OSError:
            pass
    return frozenset(out)


def pseudo_device(st_dev: int) -> bool:
    """Whether a file of device ``st_dev`` lies on ``/proc`` or ``/sys`` (a bind mount too)."""
    return st_dev in _pseudo_devices()


def pseudo_reason(path: str | os.PathLike[str], st_dev: int | None = None) -> str | None:
    """Why ``path`` is a pseudo-filesystem file that is never opened, else ``None``.

    ``st_dev`` is the device of ``path`` (links followed) when the caller has stat'ed it.
    """
    resolved = real(path)
    root = next((r for r in PSEUDO_ROOTS if inside(resolved, r)), None)
    if root is None and st_dev is not None and pseudo_device(st_dev):
        root = "/proc or /sys"
    if root is None:
        return None
    return f"a file of the kernel's pseudo-filesystem {root}: never read (not a log file)"


def outside_reason(path: str, root: str) -> str | None:
    """Why the link ``path`` found under ``root`` (resolved) is not followed, else ``None``."""
    target = real(path)
    if inside(target, root) and pseudo_reason(target) is None:
        return None
    return (f"symbolic link leading outside {root}: not read (only files inside the folders given"
            " are read; copy the file into the folder to read it)")


__all__ = ["OUTSIDE", "PSEUDO_ROOTS", "real", "inside", "pseudo_device", "pseudo_reason", "outside_reason"]


def check_regular(path: str | Path) -> None:
    """Raise :class:`InputFileError` unless ``path`` is a regular file (or a link to one).

    Opening a FIFO blocks until a writer appears and a character device may never end, so
    they are refused before any ``open``; so are the files of ``/proc`` and ``/sys``,
    which stat as regular files (:func:`pseudo_device`).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    mode = st.st_mode
    if stat.S_ISREG(mode) and pseudo_device(st.st_dev):
        raise InputFileError(f"{path}: {pseudo_reason(path, st.st_dev)}")
    if stat.S_ISDIR(mode):
        raise InputFileError(f"{path}: is a directory")
    if not stat.S_ISREG(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise InputFileError(f"{path}: {kind}, not a regular file; not read")

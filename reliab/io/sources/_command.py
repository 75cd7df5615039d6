"""Running a command-line client of a live source (``sacct``, ``sacctmgr``, ``journalctl``).

One place turns every way a client can fail (not installed, not executable, hanging, non-zero
exit, printing without end) into a one-line :class:`~reliab.errors.SourceError` naming the
location and the most telling line of what the client printed.

What a client prints is untrusted input: :func:`run` reads at most ``max_bytes`` of it and
stops the client at a total deadline.  A command given as ``"ssh login1 sacct"`` hands the
arguments reliab adds to the shell of the remote machine (ssh joins its arguments with blanks
and runs the line with the user's login shell, ``ssh(1)``), so :func:`argv` quotes each added
argument for a POSIX shell (``shlex.quote``) whenever the command runs ``ssh`` or ``rsh``:
a cluster, partition, user or path then reaches the remote client as one word, whatever it
holds.
"""

from __future__ import annotations

import os
import re
import selectors
import shlex
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from reliab.errors import SourceError
from reliab.io.sources._http import MAX_BYTES

#: words that mark the line of a client's output that says why it failed
_TELLING = re.compile(r"denied|refused|disabled|not found|unknown|invalid|unable|cannot|no such|"
                      r"timed out|unrecognized|authentication", re.I)
#: programs that run their arguments through a shell on another machine
_REMOTE_SHELLS = frozenset({"ssh", "rsh", "slogin"})
#: bytes of a client's stderr kept for its error message
_STDERR_KEPT = 64 * 1024


class _Late(Exception):
    pass


class _TooBig(Exception):
    pass


def command_of(command: str | Sequence[str], name: str) -> list[str]:
    """``'ssh login1 sacct'`` or ``['sacct']`` -> an argument list.

    Raises
    ------
    ValueError
        Empty command; the message names the option ``name``.
    """
    parts = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
    if not parts:
        raise ValueError(f"{name}= is empty")
    return parts


def argv(command: Sequence[str], *extra: str) -> list[str]:
    """``command`` followed by ``extra``, each quoted for a remote shell when one is involved.

    The user's own words of ``command`` are kept as written (they may be meant for the
    remote shell); the arguments reliab adds are quoted word by word when ``command``
    contains ``ssh``, ``rsh`` or ``slogin``, and passed unchanged otherwise (no shell sees
    them: :func:`run` starts the program directly).
    """
    remote = any(PurePath(word).name in _REMOTE_SHELLS for word in command)
    return [*command, *(shlex.quote(a) for a in extra)] if remote else [*command, *extra]


def telling_line(text: str) -> str:
    """The line of a client's output that best says why it failed (one line, trimmed)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    telling = [ln for ln in lines if _TELLING.search(ln)]
    return (telling[0] if telling else lines[-1])[:300]


def run(args: Sequence[str], location: str, name: str, *, env: Mapping[str, str] | None = None,
        timeout_s: float = 600.0, install_hint: str = "", max_bytes: int = MAX_BYTES) -> bytes:
    """Run ``args`` (the client ``name``, possibly behind ``ssh``/``sudo``) and return its stdout.

    ``timeout_s`` bounds the whole run and ``max_bytes`` what is read of its output; past
    either the client is killed.

    Raises
    ------
    SourceError
        The program is missing or not executable, runs longer than ``timeout_s``, prints more
        than ``max_bytes``, or exits with a non-zero status (the message quotes its most
        telling output line).
    """
    program = args[0]
    full_env = {**os.environ, **(env or {})}
    try:
        proc = subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                                stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SourceError(f"{location}: {program} is not installed (not found on PATH)"
                          + (f"; {install_hint}" if install_hint else "")) from None
    except PermissionError:
        raise SourceError(f"{location}: {program} cannot be executed: permission denied") from None
    try:
        out, err = _collect(proc, time.monotonic() + timeout_s, max_bytes)
    except _Late:
        raise SourceError(f"{location}: {name} did not finish within {timeout_s:g} s"
                          " (raise timeout_s= or shorten chunk=)") from None
    except _TooBig:
        raise SourceError(f"{location}: {name} printed more than {max_bytes:,} bytes"
                          " (raise max_bytes= or shorten the window or chunk=)") from None
    finally:
        _stop(proc)
    if proc.returncode != 0:
        said = (err + b"\n" + out[-_STDERR_KEPT:]).decode("utf-8", errors="replace")
        raise SourceError(f"{location}: {name} failed (exit {proc.returncode}): {telling_line(said)}")
    return out


def _collect(proc: subprocess.Popen, deadline: float, max_bytes: int) -> tuple[bytes, bytes]:
    """stdout (at most ``max_bytes``) and the start of stderr of ``proc``, read until both close."""
    out, err = bytearray(), bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)  # type: ignore[arg-type]
        sel.register(proc.stderr, selectors.EVENT_READ, err)  # type: ignore[arg-type]
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Late
            for key, _ in sel.select(left):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                elif key.data is out:
                    out += data
                    if len(out) > max_bytes:
                        raise _TooBig
                elif len(err) < _STDERR_KEPT:
                    err += data[: _STDERR_KEPT - len(err)]
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        raise _Late from None
    return bytes(out), bytes(err)


def _stop(proc: subprocess.Popen) -> None:
    """Kill ``proc`` if it still runs, and let go of its pipes (a child left holding them gets
    SIGPIPE when it next writes, rather than the run waiting for it)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()

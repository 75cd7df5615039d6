"""Running a command-line client of a live source (``sacct``, ``sacctmgr``, ``journalctl``).

One place turns every way a client can fail (not installed, not executable, hanging, non-zero
exit) into a one-line :class:`~reliab.errors.SourceError` naming the location and the most
telling line of what the client printed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence

from reliab.errors import SourceError

#: words that mark the line of a client's output that says why it failed
_TELLING = re.compile(r"denied|refused|disabled|not found|unknown|invalid|unable|cannot|no such|"
                      r"timed out|unrecognized|authentication", re.I)


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


def telling_line(text: str) -> str:
    """The line of a client's output that best says why it failed (one line, trimmed)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    telling = [ln for ln in lines if _TELLING.search(ln)]
    return (telling[0] if telling else lines[-1])[:300]


def run(args: Sequence[str], location: str, name: str, *, env: Mapping[str, str] | None = None,
        timeout_s: float = 600.0, install_hint: str = "") -> bytes:
    """Run ``args`` (the client ``name``, possibly behind ``ssh``/``sudo``) and return its stdout.

    Raises
    ------
    SourceError
        The program is missing or not executable, runs longer than ``timeout_s``, or exits
        with a non-zero status (the message quotes its most telling output line).
    """
    program = args[0]
    full_env = {**os.environ, **(env or {})}
    try:
        proc = subprocess.run(list(args), capture_output=True, env=full_env, timeout=timeout_s,
                              check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SourceError(f"{location}: {program} is not installed (not found on PATH)"
                          + (f"; {install_hint}" if install_hint else "")) from None
    except PermissionError:
        raise SourceError(f"{location}: {program} cannot be executed: permission denied") from None
    except subprocess.TimeoutExpired:
        raise SourceError(f"{location}: {name} did not finish within {timeout_s:g} s"
                          " (raise timeout_s= or shorten chunk=)") from None
    if proc.returncode != 0:
        said = (proc.stderr + b"\n" + proc.stdout).decode("utf-8", errors="replace")
        raise SourceError(f"{location}: {name} failed (exit {proc.returncode}): {telling_line(said)}")
    return proc.stdout

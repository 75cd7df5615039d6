"""Run the ``reliab`` command line in this process, as ``python -m reliab`` runs it.

A test about a command's options, output or exit code needs the command, not a new
interpreter: :func:`run_in_process` calls :func:`reliab.cli.main` with ``argv`` and returns
what a :func:`subprocess.run` with ``capture_output=True, text=True`` returns (``returncode``,
``stdout``, ``stderr``), without paying the ~1-3 s of a fresh interpreter importing pandas,
matplotlib and scikit-learn.  A few tests still spawn ``python -m reliab`` to cover the entry
point itself (tests/test_cli.py: version, one-line errors, ``--debug``, usage errors).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path


def run_in_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
                   ) -> subprocess.CompletedProcess[str]:
    """``reliab ARGS`` through :func:`reliab.cli.main`; ``env`` entries are set for the call only.

    The process-wide state a command may change is restored afterwards: the working folder,
    the environment, ``sys.argv`` and the CLI's ``--debug`` switch.
    """
    from reliab.cli import _app, main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_argv, saved_cwd, saved_state = dict(os.environ), sys.argv, os.getcwd(), dict(_app._STATE)
    code: int | str | None = 0
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["reliab", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        _app._STATE.clear()
        _app._STATE.update(saved_state)
    if isinstance(code, str):  # sys.exit("message"): the message goes to stderr, exit code 1
        err.write(code + "\n")
        code = 1
    return subprocess.CompletedProcess(["reliab", *args], code or 0, out.getvalue(), err.getvalue())

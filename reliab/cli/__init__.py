"""The ``reliab`` command line.

Every data or input problem ends with a one-line message on stderr and exit code 1 — no
traceback.  The CLI uses the public API only.  One module per command (or group of small
commands); each registers itself on :data:`reliab.cli._app.app` when imported here.
"""

from reliab.cli import catalog, demo, ingest, plan, predict, replay, report  # noqa: F401  (register the commands)
from reliab.cli._app import app, main

__all__ = ["app", "main"]

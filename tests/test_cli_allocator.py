"""Importing reliab sets polars' allocator options before polars is loaded; the user's own win.

polars (Linux wheels) allocates with a bundled jemalloc that reads ``_RJEM_MALLOC_CONF``
when the library first allocates; options are read left to right and the last one wins
(jemalloc manual, "TUNING" / ``opt.*``: https://jemalloc.net/jemalloc.3.html).  ``import
reliab`` (so the API and the ``reliab`` command alike) sets it when the user has not and
polars is not loaded yet; with polars already loaded it leaves everything as it is.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from reliab._allocator import ALLOCATOR_ENV

NAME, VALUE = ALLOCATOR_ENV

# runs the console-script entry (`reliab --version`), then reports what polars will read
_CHILD = """
import os, sys
sys.argv = ["reliab", "--version"]
from reliab.cli import main
try:
    main()
except SystemExit:
    pass
before = "polars" in sys.modules
import polars
print(before, os.environ.get({name!r}), sep="\\n")
"""


def _child(env: dict[str, str], code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=env, check=True)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != NAME}
    return {**env, **extra}


def test_cli_sets_the_allocator_before_polars() -> None:
    lines = _child(_env(), _CHILD.format(name=NAME)).stdout.splitlines()
    # the command line has polars not yet loaded when the setting is made, and polars keeps
    # it after its own defaults, so that it is the value jemalloc ends with
    assert lines[-3] == f"reliab {__import__('reliab').__version__}"
    assert lines[-2] == "False"
    assert lines[-1].endswith("," + VALUE)


def test_api_import_sets_it_only_before_polars() -> None:
    show = f"print(os.environ.get({NAME!r}))"
    api = _child(_env(), f"import os, reliab.io, polars; {show}").stdout.strip()
    assert api.endswith("," + VALUE)  # reliab first: polars starts with the setting last
    late = _child(_env(), f"import os, polars, reliab.io; {show}").stdout.strip()
    assert VALUE not in late  # polars first: its allocator already runs on its own options
    # and reliab says whether it made the setting
    told = _child(_env(), "import reliab._allocator as a, reliab; print(a.configure())").stdout.strip()
    assert told == "False"  # made once, at import; a second call finds the variable set


def test_users_own_allocator_setting_wins() -> None:
    lines = _child(_env(**{NAME: "narenas:2"}), _CHILD.format(name=NAME)).stdout.splitlines()
    assert lines[-1].endswith("narenas:2") and VALUE not in lines[-1]


@pytest.mark.skipif(sys.platform != "linux", reason="polars bundles jemalloc in its Linux wheels")
def test_polars_jemalloc_takes_the_setting() -> None:
    # stats_print makes jemalloc print its options at exit: the CLI's value is in force
    code = "import polars as pl; pl.DataFrame({'a': [1, 2]}).sum()"
    err = _child(_env(**{NAME: f"{VALUE},stats_print:true"}), code).stderr
    for option in VALUE.split(","):
        key, value = option.split(":")
        assert f"opt.{key}: {value} " in err

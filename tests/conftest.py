"""Shared fixtures: the bundled sample is ingested once per test session."""

from __future__ import annotations

import os

import pytest

# a published number that breaks an invariant its result declares fails the test that made it
# (reliab._checks.verify raises instead of hiding the result, as it does in a user's run)
os.environ.setdefault("RELIAB_STRICT_CHECKS", "1")


@pytest.fixture(scope="session")
def sample_ingest():
    """``reliab.ingest`` of the bundled Llama-3-scale sample (read-only: do not mutate).

    The sample is one training run, counted as Llama 3 counted (policy ``training-run``).
    """
    import reliab

    return reliab.ingest(reliab.sample_path(), policy="training-run")


@pytest.fixture(scope="session")
def dask_client():
    """One Dask ``LocalCluster`` per test session: 2 single-threaded worker processes, as
    ``reliab.io.distributed.dask_client`` starts them (no dashboard, no port 8787)."""
    pytest.importorskip("dask.distributed")
    from reliab.io.distributed import dask_client

    with dask_client(workers=2) as client:
        yield client


@pytest.fixture()
def draws(monkeypatch: pytest.MonkeyPatch):
    """How many times each matplotlib figure (by ``id``) is drawn while the test runs."""
    from collections import Counter

    from matplotlib.figure import Figure

    seen: Counter = Counter()
    original = Figure.draw

    def counting(self, renderer):
        seen[id(self)] += 1
        return original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting)
    return seen


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``reliab demo --out D -q`` run once per test session: the :class:`reliab.ReportRun` it made.

    The command runs through the command line in this process (tests/_cli.py), so the tests of
    ``reliab demo`` (tests/test_cli.py) and of the report it writes (tests/test_report_run.py)
    share one run; :func:`reliab.demo` is wrapped to keep what the command computed.
    """
    from _cli import run_in_process

    import reliab

    made = []
    demo = reliab.demo

    def recorded(*args, **kwargs):
        made.append(demo(*args, **kwargs))
        return made[-1]

    out = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reliab, "demo", recorded)
        proc = run_in_process("demo", "--out", str(out), "-q", env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert len(made) == 1 and made[0].files["report.html"] == out / "report.html"
    return made[0]


#: session-scoped fixtures as expensive: every test using one goes to one xdist worker (one
#: demo run; one Dask cluster, not one per worker)
ONE_WORKER_SESSION = {"demo_run", "dask_client"}

#: (test module, fixture) whose module- or session-scoped fixture is expensive (a report run, a
#: quarter pair, live servers, a generated folder): every test using it goes to one xdist worker
#: (``--dist loadgroup`` in pyproject.toml's addopts), so the fixture is built once per run, not
#: once per worker
ONE_WORKER = {
    ("test_analyses", "quarters"),
    ("test_live_prometheus", "prom"),
    ("test_live_journald", "journal"),
    ("test_report", "ingest"),
    ("test_hostile_folder", "folder"),
    ("test_environment_study", "env"),
    ("test_datasets", "sim"),
}

#: (test module, fixture) whose tests go with another group: test_distributed's generated folder
#: is read with the session's Dask cluster, so its one worker is the cluster's
WITH_GROUP = {("test_distributed", "generated"): "dask_client"}

#: test modules whose tests of one ``family`` share a per-process cache (tests/_real_world.py
#: ``score_family``): one xdist worker per family
ONE_WORKER_PER_FAMILY = {"test_real_world"}


def _group(item: pytest.Item) -> str | None:
    """The ``xdist_group`` of ``item``: the expensive shared fixture or cache it uses, if any."""
    stem = item.path.stem
    names = getattr(item, "fixturenames", ())
    for name in names:
        if name in ONE_WORKER_SESSION:
            return name
        if (stem, name) in WITH_GROUP:
            return WITH_GROUP[stem, name]
        if (stem, name) in ONE_WORKER:
            return f"{stem}.{name}"
    callspec = getattr(item, "callspec", None)
    if stem in ONE_WORKER_PER_FAMILY and callspec is not None and "family" in callspec.params:
        return f"{stem}.{callspec.params['family']}"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests of an expensive shared fixture ``xdist_group`` and give every grouped test
    the ``@group`` node id suffix that ``--dist loadgroup`` schedules by.

    pytest-xdist (3.8) writes that suffix to ``item._nodeid``, which pytest 9 no longer reads (a
    node's id is ``item._id``): without the suffix set here every group was spread over the
    workers, and each worker built the group's expensive fixture again.
    """
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if not getattr(config.option, "loadgroup", False):  # (set on xdist's workers only)
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        if groups and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(groups)}")


def pytest_terminal_summary(terminalreporter):
    """List the artifacts the live-source tests kept (``RELIAB_TEST_ARTIFACTS``, set by CI)."""
    import os
    from pathlib import Path

    folder = os.environ.get("RELIAB_TEST_ARTIFACTS")
    files = sorted(p for p in Path(folder).rglob("*") if p.is_file()) if folder and Path(folder).is_dir() else []
    if files:
        terminalreporter.write_sep("-", f"test artifacts kept in {folder}")
        for p in files:
            terminalreporter.write_line(f"{p} ({p.stat().st_size:,} bytes)")

"""The hand-over manifest (reliab.toml): per-glob source and options, skips, run keys, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

from reliab.io import ingest
from reliab.io._manifest import ManifestError, glob_regex, load_manifest
from reliab.io._options import reader_options

XID = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
SACCT = ("1001|NODE_FAIL|2024-06-03T10:00:00|2024-06-03T14:03:00|node[0421-0422]\n"
         "1002|COMPLETED|2024-06-03T10:00:00|2024-06-03T11:00:00|node0007\n")


def _handover(root: Path) -> Path:
    """Logs that need per-source options: raw dmesg (boot time), RFC 3164 syslog (year, zone),
    headerless sacct (field list) and a file only a forced source reads."""
    (root / "dmesg").mkdir(parents=True)
    (root / "dmesg" / "node0421.txt").write_text(f"[  120.000000] {XID}\n")
    (root / "syslog").mkdir()
    (root / "syslog" / "messages").write_text(f"Jun  3 07:02:30 node0421 kernel: {XID}\n")
    (root / "slurm").mkdir()
    (root / "slurm" / "jobs.txt").write_text(SACCT)
    (root / "truth").mkdir()
    (root / "truth" / "labels.csv").write_text("job,cause\n1001,gpu\n")
    return root


MANIFEST = """\
# hand-over of a small cluster
skip = ["truth/"]
before = "15min"

[[files]]
glob = "dmesg/*.txt"
source = "kernel"
boot_time = 2024-06-03T14:00:00Z

[[files]]
glob = "syslog/messages"
year = 2024
tz = "America/Los_Angeles"

[[files]]
glob = "slurm/jobs.txt"
source = "sacct"
fields = ["JobID", "State", "Start", "End", "NodeList"]
"""


def test_manifest_round_trip_equals_the_same_options_on_the_api(tmp_path: Path) -> None:
    """Reference: a manifest gives the same tables as passing each file's options by hand."""
    root = _handover(tmp_path / "h")
    (root / "reliab.toml").write_text(MANIFEST)
    res = ingest(root)
    by_name = {Path(p).name: c.source for p, c in res.sources.items()}
    assert by_name["node0421.txt"] == "kernel" and by_name["jobs.txt"] == "sacct"
    assert by_name["labels.csv"] == "skipped" and by_name["reliab.toml"] == "manifest"
    assert "set by reliab.toml:" in res.sources[str(root / "slurm" / "jobs.txt")].reason
    parts = [ingest(root / "dmesg", source="kernel", boot_time="2024-06-03T14:00:00Z", manifest=False),
             ingest(root / "syslog", year=2024, tz="America/Los_Angeles", manifest=False),
             ingest(root / "slurm", source="sacct", fields="JobID,State,Start,End,NodeList", manifest=False)]
    signals = pd.concat([p.signals for p in parts]).sort_values(["time", "origin"]).reset_index(drop=True)
    got = res.signals.sort_values(["time", "origin"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, signals, check_dtype=False)
    times = sorted(res.signals.loc[res.signals["signal"] == "xid:79", "time"])
    assert times == [pd.Timestamp("2024-06-03 14:02:00", tz="UTC"), pd.Timestamp("2024-06-03 14:02:30", tz="UTC")]
    assert len(res.jobs) == 2 and res.interruptions["job_id"].tolist() == ["1001"]
    assert any("reliab.toml" in n for n in res.notes)


def test_api_and_cli_values_override_the_manifest(tmp_path: Path) -> None:
    root = _handover(tmp_path / "h")
    (root / "reliab.toml").write_text(MANIFEST)
    res = ingest(root / "syslog" / "messages", manifest=root / "reliab.toml", tz="UTC")
    assert res.signals["time"].tolist() == [pd.Timestamp("2024-06-03 07:02:30", tz="UTC")]
    out = run_in_process("ingest", str(root), "-q", "--files", "--why", env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert "set by reliab.toml" in out.stdout and "skipped by reliab.toml" in out.stdout


def test_manifest_found_in_a_sub_folder_governs_its_subtree(tmp_path: Path) -> None:
    root = _handover(tmp_path / "outer" / "h")
    (root / "reliab.toml").write_text(MANIFEST)
    res = ingest(tmp_path / "outer")
    assert {Path(p).name: c.source for p, c in res.sources.items()}["labels.csv"] == "skipped"
    assert len(res.jobs) == 2


@pytest.mark.parametrize(("text", "line", "needle"), [
    ('skip = ["truth/"]\n\n[[files]]\nglob = "dmesg/*"\nyaer = 2024\n', 5, "'yaer' is not an option of any reader"
     " (did you mean 'year'?)"),
    ('[[files]]\nglob = "x"\nyear = "2024"\n', 3, "'year' must be an integer"),
    ('[[files]]\nglob = "x"\nsource = "kernal"\n', 3, "names no reader: 'kernal' (did you mean 'kernel'?)"),
    ('[[files]]\nglob = "x"\nsource = "kernel"\nfields = "JobID,State"\n', 4,
     "'fields' is not an option of source 'kernel'"),
    ('[[files]]\nsource = "kernel"\n', 1, "has no 'glob' key"),
    ('tz = "UTC"\nbogus_key = 1\n', 2, "'bogus_key' is not an option of any reader"),
    ('skip = "truth/\n', None, "not valid TOML"),
])
def test_manifest_errors_name_file_line_and_key(tmp_path: Path, text: str, line: int | None, needle: str) -> None:
    path = tmp_path / "reliab.toml"
    path.write_text(text)
    with pytest.raises(ManifestError) as info:
        load_manifest(path, run_keys=("rules", "before", "after"))
    message = str(info.value)
    assert needle in message and "\n" not in message
    assert message.startswith(f"{path}:{line}:" if line else f"{path}:")
    (tmp_path / "a.log").write_text("x\n")
    out = run_in_process("ingest", str(tmp_path), "-q")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1 and "reliab.toml" in out.stderr


def test_every_reader_option_is_a_manifest_key_and_a_cli_flag() -> None:
    """Regression: options come from the readers' signatures (nothing to keep in sync)."""
    from reliab.cli.ingest import _SPECS

    options = reader_options()
    for name in ("year", "tz", "boot_time", "host", "job_id", "fields", "start", "time", "columns",
                 "gpus_per_node", "time_format", "interval_s", "delimiter"):
        assert name in options and name in _SPECS, name
    assert set(options["tz"].sources) >= {"kernel", "nccl", "sel", "sacct", "tickets"}
    assert options["year"].kind == "int" and options["columns"].kind == "mapping"
    assert options["fields"].kind == "list" and options["boot_time"].kind == "str"


def test_a_new_reader_option_reaches_manifest_and_cli_without_edits(tmp_path: Path) -> None:
    from reliab.io import _registry
    from reliab.io._registry import FileResult, register_parser

    @register_parser("test_widget", sniff=lambda path, lines: 1.0 if path.endswith(".widget") else 0.0)
    def read_widget(path: str, *, widget_scale: float = 1.0, strict: bool = False) -> FileResult:
        """Widget logs (test only).

        Parameters
        ----------
        widget_scale : float
            How much to scale widgets by.
        """
        n = sum(1 for _ in open(path))
        return FileResult(path=path, source="test_widget", lines=n, parsed=0, irrelevant=n, malformed=0,
                          notes=(f"scale {widget_scale}",))

    try:
        spec = reader_options()["widget_scale"]
        assert (spec.kind, spec.sources, spec.doc) == ("float", ("test_widget",), "How much to scale widgets by")
        (tmp_path / "a.widget").write_text("w\n")
        (tmp_path / "reliab.toml").write_text('[[files]]\nglob = "*.widget"\nwidget_scale = 2.5\n')
        res = ingest(tmp_path)
        assert "scale 2.5" in res.sources[str(tmp_path / "a.widget")].reason
        from reliab.cli._readeropts import reading_parameters

        params, _ = reading_parameters(())
        assert "widget_scale" in [p.name for p in params]
    finally:
        _registry._PARSERS.pop("test_widget")


@pytest.mark.parametrize(("pattern", "yes", "no"), [
    ("truth/", ["truth/a.csv", "truth/x/y.csv", "a/truth/b.csv"], ["truthy/a", "truth.csv"]),
    ("/truth/", ["truth/a.csv"], ["a/truth/b.csv"]),
    ("*.png", ["a.png", "x/y/a.png"], ["a.png.log"]),
    ("syslog/*", ["syslog/messages"], ["syslog/a/messages", "x/syslog/messages"]),
    ("**/node[0-9]*.sel", ["ipmi/node1.sel", "node7.sel"], ["ipmi/nodeA.sel"]),
    ("dmesg/**/*.log", ["dmesg/a.log", "dmesg/x/y/a.log"], ["a.log"]),
    ("notes-?.txt", ["notes-1.txt"], ["notes-12.txt"]),
])
def test_glob_rules(pattern: str, yes: list[str], no: list[str]) -> None:
    rx = glob_regex(pattern)
    assert all(rx.fullmatch(p) for p in yes), [p for p in yes if not rx.fullmatch(p)]
    assert not any(rx.fullmatch(p) for p in no), [p for p in no if rx.fullmatch(p)]

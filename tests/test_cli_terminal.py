"""What the CLI prints from its input cannot drive the terminal, and errors keep their reasons.

File names, log text and server messages are untrusted: an ``ESC ] 52`` sequence (OSC 52,
"set the clipboard", xterm control sequences) or a C1 ``CSI`` (U+009B) in them is printed as
visible ``\\x1b``/``\\x9b`` escapes, never as the control character itself.
"""

from __future__ import annotations

import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from reliab.cli import app
from reliab.cli._app import main, one_line
from reliab.cli._render import printable
from reliab.errors import SchemaError

OSC52 = "\x1b]52;c;cHduZWQ=\x07"
CONTROLS = ("\x1b", "\x07", "\x9b", "\x08", "\r")
KMSG = "2024-06-01T00:00:00.000000+0000 n1 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"


def _clean(text: str) -> None:
    assert not any(c in text for c in CONTROLS), repr(text)


def test_printable_shows_controls_as_escapes_and_keeps_newline_and_tab():
    assert printable(f"a{OSC52}b\tc\nd\x9b2J\x7f") == "a\\x1b]52;c;cHduZWQ=\\x07b\tc\nd\\x9b2J\\x7f"
    assert printable("prometheus://ops:pw@h:9090 down") == "prometheus://ops:***@h:9090 down"


def test_file_names_with_escape_sequences_are_printed_visibly(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / f"kern{OSC52}.log").write_text(KMSG)
    (folder / "poem\x9b2J\x08.txt").write_text("Shall I compare thee to a summer's day?\n")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--files", "--why", "--quiet"])
    assert result.exit_code == 0, result.output
    _clean(result.stdout + result.stderr)
    assert "kern\\x1b]52;c;cHduZWQ=\\x07.log" in result.stdout and "poem\\x9b2J\\x08.txt" in result.stdout


def test_error_lines_are_printable_and_keep_every_reason():
    problems = pd.DataFrame([("severity", "in {'info', 'warning'}", 1, "bogus"), ("host", "not null", 2, None)],
                            columns=["column", "check", "n_failing", "example"])
    line = one_line(SchemaError("signals", problems))
    assert "\n" not in line
    assert "failed 2 check(s): column 'severity': in {'info', 'warning'} failed for 1 row(s) (e.g. 'bogus')" in line
    assert "column 'host': not null failed for 2 row(s)" in line
    _clean(one_line(ValueError(f"no such host {OSC52}")))


def test_usage_errors_are_printable(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["reliab", "ingest", f"--no-such{OSC52}"])
    with pytest.raises(SystemExit):
        main()
    err = capsys.readouterr().err
    assert "--no-such\\x1b]52" in err
    _clean(err)

"""Command sources (``sacct``, ``journalctl``, possibly behind ``ssh``) as untrusted input.

A stand-in ``ssh`` on ``PATH`` does what ssh does with its arguments: joins them with
blanks and hands the line to a shell (here ``sh -c``, run locally in a "remote" folder), so
a word that is not quoted is run as shell code there.  Stand-in ``sacct`` and ``journalctl``
scripts print a fixed answer and record the arguments they got.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

import reliab
from reliab.errors import SourceError
from reliab.io.sources._command import run

SACCT = r"""#!/bin/sh
printf '%s\n' "$@" > "$REMOTE/sacct.args"
case "$1" in
  --version) echo "slurm 22.05.8";;
  --helpformat) echo "JobID JobIDRaw JobName User Partition State ExitCode Start End NNodes NodeList";;
  *) echo "JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Start|End|NNodes|NodeList"
     echo "7|7|train|alice|gpu|COMPLETED|0:0|2024-06-01T01:00:00|2024-06-01T02:00:00|1|n1";;
esac
"""
JOURNALCTL = r"""#!/bin/sh
printf '%s\n' "$@" > "$REMOTE/journalctl.args"
echo '{"__REALTIME_TIMESTAMP":"1717200000000000","_HOSTNAME":"n1","MESSAGE":"NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."}'
"""
SSH = """#!/bin/sh
shift
cd "$REMOTE" && exec sh -c "$*"
"""


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def remote(tmp_path, monkeypatch) -> Path:
    """A folder standing for the login node, with ssh, sacct and journalctl first on PATH."""
    bin_dir, home = tmp_path / "bin", tmp_path / "remote"
    bin_dir.mkdir()
    home.mkdir()
    for name, text in (("ssh", SSH), ("sacct", SACCT), ("sacctmgr", "#!/bin/sh\n"), ("journalctl", JOURNALCTL)):
        _script(bin_dir, name, text)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("REMOTE", str(home))
    return home


def test_the_stand_in_ssh_reads_through_the_remote_shell(remote):
    res = reliab.ingest("slurm://", start="2024-06-01", end="2024-06-02", sacct_command="ssh login1 sacct")
    assert res.jobs["job_id"].tolist() == ["7"]


@pytest.mark.parametrize(("location", "options"), [
    ("slurm://x;id>pwned;", {}),
    ("slurm://?user=a;id>pwned", {}),
    ("slurm://", {"user": "a;id>pwned"}),
    ("slurm://", {"partition": "gpu;id>pwned"}),
    ("slurm://", {"partition": ["gpu", "$(id>pwned)"]}),
])
def test_names_that_are_not_slurm_names_are_refused(remote, location, options):
    with pytest.raises(ValueError, match="not a Slurm name"):
        reliab.ingest(location, start="2024-06-01", end="2024-06-02", sacct_command="ssh login1 sacct",
                      **options)
    assert not (remote / "pwned").exists()


def test_arguments_reach_the_remote_command_word_by_word(remote, tmp_path):
    folder = tmp_path / "j;touch pwned;x"  # a journal folder with shell code in its name
    folder.mkdir()
    res = reliab.ingest(f"journald://{folder}", start="2024-05-31", end="2024-06-02",
                        journalctl_command="ssh node7 journalctl")
    assert not (remote / "pwned").exists()
    args = (remote / "journalctl.args").read_text().splitlines()
    assert f"--directory={folder}" in args
    assert "--since=2024-05-31 00:00:00 UTC" in args  # one word, blanks and all
    assert res.signals["signal"].tolist() == ["xid:79"]
    reliab.ingest("slurm://gpu-a", start="2024-06-01", end="2024-06-02", sacct_command="ssh login1 sacct",
                  user="alice@corp")
    sent = (remote / "sacct.args").read_text().splitlines()
    assert "--clusters=gpu-a" in sent and "--user=alice@corp" in sent


def test_endless_output_stops_at_the_size_limit(tmp_path):
    endless = _script(tmp_path, "endless", "#!/bin/sh\nexec yes 0123456789abcdef\n")
    t = time.monotonic()
    with pytest.raises(SourceError, match=r"journald://x: journalctl printed more than 1,000,000 bytes"):
        run([str(endless)], "journald://x", "journalctl", timeout_s=30, max_bytes=1_000_000)
    assert time.monotonic() - t < 3


def test_the_deadline_holds_when_a_child_keeps_the_output_open(tmp_path):
    slow = _script(tmp_path, "slow", "#!/bin/sh\nsleep 20 &\necho partial\nsleep 20\n")
    t = time.monotonic()
    with pytest.raises(SourceError, match=r"sacct did not finish within 1 s"):
        run([str(slow)], "slurm://", "sacct", timeout_s=1)
    assert time.monotonic() - t < 3


def test_the_size_limit_is_an_option_of_each_command_source(remote):
    with pytest.raises(SourceError, match="more than 100 bytes"):
        reliab.ingest("slurm://", start="2024-06-01", end="2024-06-02", max_bytes=100)
    big = json.dumps({"__REALTIME_TIMESTAMP": "1717200000000000", "MESSAGE": "x" * 200})
    _script(Path(os.environ["PATH"].split(os.pathsep)[0]), "journalctl", f"#!/bin/sh\necho '{big}'\n")
    with pytest.raises(SourceError, match="more than 100 bytes"):
        reliab.ingest("journald://", max_bytes=100)

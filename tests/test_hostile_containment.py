"""Nothing outside the hand-over reaches a report: the probe of issue 21, item 1, recreated.

A hand-over folder is untrusted input.  Its manifest forces a reader on ``notes/*``, and
``notes/`` holds symbolic links to a fake credentials file outside the folder and to
``/proc/self/environ`` (this process's environment holds a fake secret).  Before the fix
every line of both targets was copied into ``quarantine.parquet`` and into the
"Quarantined lines" table of the HTML report.  Now neither secret appears in any file
``reliab ingest --out`` or ``reliab report --out`` writes, and both links are ``outside``
rows of the accounting, never opened.  The manifest's ``rules =`` key is contained the
same way: outside the manifest's folder, a device or a FIFO is an error naming the
manifest file and key, without the target's content, and without blocking.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.io._manifest import ManifestError, load_manifest

FILE_SECRET = "FAKE-CREDENTIAL-8d1f3c"
ENV_SECRET = "FAKE-ENV-SECRET-51a9e0"
SACCT_HEAD = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|"
              "NodeList|Restarts|AllocTRES\n")
CLI_TIMEOUT_S = 120


def _handover(tmp_path: Path) -> Path:
    """The probe's folder: a manifest forcing ``sacct`` on ``notes/*`` (whose lines it
    quarantines) and two links leading out of the folder."""
    secret = tmp_path / "elsewhere" / "credentials"
    secret.parent.mkdir()
    secret.write_text(f"[default]\naws_secret_access_key = {FILE_SECRET}\n")
    root = tmp_path / "handover"
    (root / "notes").mkdir(parents=True)
    (root / "reliab.toml").write_text('[[files]]\nglob = "notes/*"\nsource = "sacct"\n')
    (root / "notes" / "x.txt").symlink_to(secret)
    (root / "notes" / "env.txt").symlink_to("/proc/self/environ")
    (root / "notes" / "own.txt").write_text(SACCT_HEAD + "not a job line\n")
    return root


def _env() -> dict[str, str]:
    return {**os.environ, "RELIAB_PROBE_SECRET": ENV_SECRET, "PYTHONPATH": str(Path(reliab.__file__).parents[1])}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reliab", *args], capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S, env=_env(), check=False)


def _leaks(folder: Path) -> list[str]:
    """Files under ``folder`` holding either secret: raw bytes, and the text of every Parquet
    table (a compressed column would hide it from a byte search)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if FILE_SECRET.encode() in data or ENV_SECRET.encode() in data:
            found.append(str(path))
        elif path.suffix == ".parquet":
            text = pd.read_parquet(path).astype(str).to_csv()
            if FILE_SECRET in text or ENV_SECRET in text:
                found.append(str(path))
    return found


def test_links_out_of_the_handover_reach_no_output_and_are_outside_rows(tmp_path: Path) -> None:
    root = _handover(tmp_path)
    ingested = _cli("ingest", str(root), "--out", str(tmp_path / "tables"))
    assert ingested.returncode == 0, ingested.stderr
    reported = _cli("report", str(root), "--out", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    for out in (tmp_path / "tables", tmp_path / "report"):
        assert any(out.iterdir())
        assert _leaks(out) == []
    for text in (ingested.stdout, ingested.stderr, reported.stdout, reported.stderr):
        assert FILE_SECRET not in text and ENV_SECRET not in text
    acc = pd.read_parquet(tmp_path / "tables" / "accounting.parquet").set_index("path")
    for name in ("x.txt", "env.txt"):
        row = acc.loc[str(root / "notes" / name)]
        assert row["source"] == "outside" and row["lines"] == 0, row.to_dict()
    assert acc.loc[str(root / "notes" / "own.txt"), "source"] == "sacct"  # the folder's own file is read


def test_links_that_stay_inside_are_read_once(tmp_path: Path) -> None:
    root = tmp_path / "h"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "a.log").write_text("2024-06-01T01:20:46+00:00 node1 kernel: NVRM: Xid (PCI:0000:3a:00): 79,"
                                         " pid=1, name=x, GPU has fallen off the bus.\n")
    (root / "latest").symlink_to(root / "logs")
    res = reliab.ingest(root)
    assert len(res.signals) == 1
    assert "outside" not in set(res.accounting["source"])


def test_link_to_proc_kmsg_does_not_hang(tmp_path: Path) -> None:
    root = tmp_path / "h"
    root.mkdir()
    (root / "kmsg.log").symlink_to("/proc/kmsg")
    (root / "sysfs.log").symlink_to("/sys/kernel/notes")
    done = _cli("ingest", str(root), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    acc = pd.read_parquet(tmp_path / "out" / "accounting.parquet").set_index("path")
    assert set(acc.loc[[str(root / "kmsg.log"), str(root / "sysfs.log")], "source"]) == {"outside"}


def test_a_proc_file_given_by_name_is_not_opened() -> None:
    res = reliab.ingest(["/proc/self/environ"])
    assert list(res.accounting["source"]) == ["special"]
    assert "/proc" in res.accounting["reason"].iloc[0]


@pytest.mark.parametrize("target", ["../elsewhere/credentials", "/etc/passwd", "link-out.csv"])
def test_manifest_rules_outside_its_folder_is_an_error_without_the_content(tmp_path: Path, target: str) -> None:
    root = _handover(tmp_path)
    (root / "link-out.csv").symlink_to(tmp_path / "elsewhere" / "credentials")
    manifest = root / "reliab.toml"
    manifest.write_text(f'policy = "any"\nrules = "{target}"\n')
    with pytest.raises(ManifestError) as err:
        load_manifest(manifest, run_keys=("rules", "policy"))
    message = str(err.value)
    assert message.startswith(f"{manifest}:2: key 'rules'"), message
    assert "outside" in message and FILE_SECRET not in message and "root:" not in message


def _bounded_load(manifest: Path) -> subprocess.CompletedProcess[str]:
    code = ("import sys\nfrom reliab.io._manifest import load_manifest, ManifestError\n"
            "try:\n    load_manifest(sys.argv[1], run_keys=('rules',))\nexcept ManifestError as e:\n"
            "    print(e)\n    sys.exit(3)\n")
    return subprocess.run([sys.executable, "-c", code, str(manifest)], capture_output=True, text=True,
                          timeout=30, env=_env(), check=False)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "dev-zero"])
def test_manifest_rules_on_a_device_or_fifo_fails_at_once(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "h"
    root.mkdir()
    if kind == "fifo":
        os.mkfifo(root / "rules.csv")
        target = "rules.csv"
    elif kind == "dev-zero-link":
        (root / "rules.csv").symlink_to("/dev/zero")
        target = "rules.csv"
    else:
        target = "/dev/zero"
    (root / "reliab.toml").write_text(f'rules = "{target}"\n')
    done = _bounded_load(root / "reliab.toml")  # raises TimeoutExpired if it blocks or reads forever
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stdout.startswith(f"{root / 'reliab.toml'}:1: key 'rules'"), done.stdout


def test_manifest_rules_inside_its_folder_still_works(tmp_path: Path) -> None:
    root = tmp_path / "h"
    (root / "conf").mkdir(parents=True)
    (root / "conf" / "rules.csv").write_text("id,signal,message,category,component,planned,priority,root_cause,"
                                              "confidence,note\n")
    (root / "reliab.toml").write_text('rules = "conf/rules.csv"\n')
    manifest = load_manifest(root / "reliab.toml", run_keys=("rules",))
    assert Path(manifest.run["rules"]).resolve() == (root / "conf" / "rules.csv").resolve()


def test_a_rules_file_given_as_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "rules.csv"
    os.mkfifo(fifo)
    code = ("import sys\nfrom reliab.taxonomy import load_rules\nfrom reliab.errors import InputFileError\n"
            "try:\n    load_rules(sys.argv[1])\nexcept InputFileError as e:\n    print(e)\n    sys.exit(3)\n")
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=30,
                          env=_env(), check=False)
    assert done.returncode == 3 and "FIFO" in done.stdout, (done.stdout, done.stderr)


def test_quarantined_text_in_the_report_is_cut_and_marked_untrusted() -> None:
    from reliab.report.quality import quality_section

    long_line = "x" * 5000
    quarantine = pd.DataFrame({"path": ["/h/a.log"], "lineno": [3], "source": ["sacct"], "reason": ["bad"],
                               "text": [long_line]})
    accounting = pd.DataFrame({"path": ["/h/a.log"], "source": ["sacct"], "lines": [3], "parsed": [0],
                               "irrelevant": [2], "malformed": [1], "reason": [""]})
    ingest = type("I", (), {"quarantine": quarantine, "accounting": accounting,
                            "interruptions": pd.DataFrame(), "notes": ()})()
    section = quality_section(ingest)
    table = next(b for b in section.blocks if getattr(b, "title", "") == "Quarantined lines")
    assert all(len(t) <= 200 for t in table.data["Text"])
    assert "untrusted" in table.caption.lower()


def test_a_manifest_that_links_out_of_the_folder_is_not_applied(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(f'skip = ["*.log"]\n# {FILE_SECRET}\n')
    root = tmp_path / "h"
    root.mkdir()
    (root / "a.log").write_text("2024-06-01T01:20:46+00:00 node1 kernel: NVRM: Xid (PCI:0000:3a:00): 79,"
                                " pid=1, name=x, GPU has fallen off the bus.\n")
    (root / "reliab.toml").symlink_to(elsewhere)
    res = reliab.ingest(root)
    acc = res.accounting.set_index("path")
    assert acc.loc[str(root / "reliab.toml"), "source"] == "outside"
    assert acc.loc[str(root / "a.log"), "source"] == "kernel" and len(res.signals) == 1


def test_a_huge_manifest_is_refused_before_it_is_read(tmp_path: Path) -> None:
    manifest = tmp_path / "reliab.toml"
    with open(manifest, "wb") as fh:  # sparse: 8 GiB of nothing
        fh.truncate(8 << 30)
    with pytest.raises(ManifestError, match="larger than"):
        load_manifest(manifest)

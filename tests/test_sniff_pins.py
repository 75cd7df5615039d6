"""The source sniffed for every file of the real-world corpus and of the bundled sample, pinned.

``tests/reference/sniff_pins.tsv`` records what :func:`reliab.io._readfile.choose_source`
answers, unforced (no manifest, no ``source=``), for each file under
``tests/reference/real_world/`` and ``data/llama3-54d/``: the source, and for a sniffed file
its confidence and the reason listing every other parser that scored above zero.  Work that
makes sniffing cheaper (pre-checks, skipping parsers that cannot match) must leave every row
as it is.  When a file is added to either folder, or the set of parsers changes on purpose,
rewrite the pins with ``python tests/test_sniff_pins.py`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

from reliab.io._readfile import choose_source

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PINS = TESTS / "reference" / "sniff_pins.tsv"
FOLDERS = (TESTS / "reference" / "real_world", ROOT / "data" / "llama3-54d")
HEADER = "path\tsource\tconfidence\treason"


def _files() -> list[Path]:
    return [p for folder in FOLDERS for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts]


def _row(path: Path) -> str:
    """One pin: relative path, source, and for a sniffed file the rounded score and the reason."""
    choice = choose_source(path)
    rel = path.relative_to(ROOT).as_posix()
    if not choice.reason.startswith("sniffed:"):  # empty / binary / unrecognized: the source only
        return f"{rel}\t{choice.source}\t\t"
    return f"{rel}\t{choice.source}\t{choice.confidence:.6f}\t{choice.reason}"


def _pins() -> dict[str, str]:
    lines = PINS.read_text(encoding="utf-8").splitlines()
    assert lines[0] == HEADER
    return {line.split("\t", 1)[0]: line for line in lines[1:]}


def test_every_file_is_pinned() -> None:
    pinned = _pins()
    files = {p.relative_to(ROOT).as_posix() for p in _files()}
    missing = sorted(files - set(pinned))
    gone = sorted(set(pinned) - files)
    assert not missing and not gone, (
        f"pins out of date (not pinned: {missing[:5]}, pinned but gone: {gone[:5]});"
        " rewrite them with `python tests/test_sniff_pins.py` and review the diff")


def test_sniffed_sources_are_unchanged() -> None:
    pinned = _pins()
    changed = [(pinned[rel], row) for p in _files()
               if (rel := p.relative_to(ROOT).as_posix()) in pinned and (row := _row(p)) != pinned[rel]]
    assert not changed, f"{len(changed)} files sniffed differently, e.g. (pinned, now): {changed[:3]}"


def test_pins_cover_every_family() -> None:
    sources = {line.split("\t")[1] for line in _pins().values()}
    assert {"kernel", "nccl", "sel", "sacct", "tickets", "telemetry_csv", "dcgm_prometheus",
            "nvidia_smi_q", "nvidia_smi_csv", "nvidia_smi_dmon", "unrecognized"} <= sources


def _write() -> None:
    PINS.write_text("\n".join([HEADER, *(_row(p) for p in _files())]) + "\n", encoding="utf-8")


if __name__ == "__main__":  # rewrite the pins from the current sniffers
    _write()

"""Sniffing reads a file's start once and skips work by exact pre-checks: the same lines
and the same scores as reading and checking line by line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import InputFileError
from reliab.io._files import head_lines, read_start
from reliab.io.formats import _nccl_sniff

REAL = Path(__file__).parent / "reference" / "real_world"


def _pool() -> list[str]:
    """Lines of the real-world corpus (PyTorch, kernel, SEL, sacct) and of the bundled sample."""
    lines: list[str] = []
    for path in sorted(REAL.rglob("*.log")) + sorted(REAL.rglob("*.txt")):
        lines += path.read_text(errors="replace").splitlines()[:40]
    sample = reliab.sample_path()
    for sub in ("train", "dmesg", "ipmi", "syslog"):
        for path in sorted((sample / sub).iterdir())[:3]:
            lines += path.read_text(errors="replace").splitlines()[:20]
    return [line for line in lines if line.strip()]


POOL = _pool()
_WORDS = st.sampled_from(["loss", "LOSS 0.5", "Step: 3", "lr=1e-4", "iteration 5/ 10 |", "E0626 06:24:44.1 x.cpp:1]",
                          "[E x.cpp:7]", "2024-06-03 14:00:00", "\x1b[31m", "İteration", "ſtep 3 loss 2",
                          "ProcessGroupNCCL", "Traceback (most recent call last)", "[rank1]:", "0: "])
_LINE = st.one_of(st.sampled_from(POOL), st.text(max_size=60),
                  st.lists(_WORDS, min_size=1, max_size=4).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=20))
def test_nccl_hints_never_change_the_score(lines: list[str]) -> None:
    hints = _nccl_sniff.Hints.of("\n".join(lines))
    assert _nccl_sniff.score_lines(lines, hints) == _nccl_sniff.score_lines(lines)


def test_pool_holds_every_kind_of_line() -> None:
    scores = {_nccl_sniff.score_lines([line]) for line in POOL}
    assert {0.0, 0.4, 0.6, 0.8} <= scores  # plain, dated, failure marker, glog


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=3000) | st.lists(st.sampled_from(POOL), max_size=40).map(
    lambda ls: "\n".join(ls).encode()), n=st.integers(1, 25), gz=st.booleans())
def test_read_start_gives_head_lines(tmp_path_factory: pytest.TempPathFactory, body: bytes, n: int,
                                     gz: bool) -> None:
    path = tmp_path_factory.mktemp("head") / ("f.gz" if gz else "f.log")
    path.write_bytes(gzip.compress(body) if gz else body)
    try:
        want = head_lines(path, n, max_bytes=2048)
    except InputFileError:  # e.g. nothing but the magic bytes of xz: not one byte decompresses
        with pytest.raises(InputFileError):
            read_start(path, n, max_bytes=2048)
        return
    head = read_start(path, n, max_bytes=2048)
    assert list(head) == want
    assert head.raw == path.read_bytes()[:2048]
    assert head.data == body[:2048]


_SEPARATORS = st.sampled_from(["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "é", "€",
                               "ab", " ", ""])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_SEPARATORS, max_size=60), cut=st.integers(0, 3), n=st.integers(1, 25))
def test_read_start_decodes_only_its_lines(tmp_path_factory: pytest.TempPathFactory, pieces: list[str], cut: int,
                                            n: int) -> None:
    """Only the bytes up to the n-th newline are decoded: the same lines as decoding them all,
    whatever other line separators and multi-byte characters (or a cut one) the head holds."""
    body = "".join(pieces).encode()
    body = body[:len(body) - cut] if cut else body  # may end inside a UTF-8 sequence
    path = tmp_path_factory.mktemp("seps") / "f.log"
    path.write_bytes(body)
    assert list(read_start(path, n)) == body.decode("utf-8", errors="replace").splitlines()[:n]

"""Training-log mixes nobody tuned the NCCL reader to, for :mod:`benchmarks.bench_nccl_storm`.

The lines are the verbatim lines of the real-world training-log corpus
(``tests/reference/real_world/pytorch/*.log``: issue threads of PyTorch, NCCL, vLLM, DeepSpeed,
Megatron, Ray jobs ...), drawn at random, so every shape the corpus holds (``[rankN]:`` and
``[defaultN]:`` prefixes, glog records with and without a date, ``NCCL INFO``/``WARN`` lines,
Ray ``(pid=…)`` and pdsh ``host:`` prefixes, tracebacks, wrapped records, dated Python logging)
appears, in the order chance gives, not the order of one job.

* *corpus*: the shape families in the proportions of a hung job's output with
  ``NCCL_DEBUG=INFO``: NCCL's own ``INFO`` chatter most of the volume (60 %: the init and
  channel lines every rank prints, NCCL ``src/debug.cc``), glog records of the C++ core 20 %
  (ProcessGroupNCCL's watchdog lines repeat per rank and per collective), NCCL ``WARN`` 5 %,
  every other corpus line 15 % (tracebacks, launcher lines, Python logging);
* *worst*: only the corpus lines that are not quiet NCCL chatter (no ``NCCL INFO`` line
  without a failure word), drawn uniformly: every line needs the reader's rules.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "reference" / "real_world" / "pytorch"
#: the reader's failure triggers (``reliab.io.formats._nccl_quiet._WORDS`` without the checkpoint words)
_TRIGGER = re.compile(r"atchdog|rror|NCCL WARN|Timeout at NCCL work")
_GLOG = re.compile(r"(?:^|[\]:\s])\[?[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}")
MIXES = ("corpus", "worst")
#: (family, share of the corpus mix's lines)
SHARES = (("info", 0.60), ("glog", 0.20), ("warn", 0.05), ("other", 0.15))


def family(line: str) -> str:
    """``info`` (NCCL ``INFO`` without a failure word), ``glog``, ``warn`` (NCCL ``WARN``) or ``other``."""
    if "NCCL WARN" in line:
        return "warn"
    if "NCCL INFO" in line and _TRIGGER.search(line) is None:
        return "info"
    if _GLOG.search(line):
        return "glog"
    return "other"


def corpus_lines(root: Path = CORPUS) -> dict[str, list[str]]:
    """The corpus's non-blank lines by :func:`family` (verbatim, without the line end)."""
    out: dict[str, list[str]] = {name: [] for name, _ in SHARES}
    for path in sorted(root.glob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                out[family(line)].append(line)
    return out


def write_mix(path: Path, n: int, seed: int, mix: str) -> dict[str, int]:
    """Write ``n`` lines of ``mix`` (:data:`MIXES`) to ``path`` (deterministic for a seed), after
    one dated line of the job's own logging; returns the lines written per family."""
    if mix not in MIXES:
        raise ValueError(f"mix must be one of {MIXES}, got {mix!r}")
    lines = corpus_lines()
    rng = random.Random(seed)
    if mix == "corpus":
        names = [name for name, _ in SHARES]
        picks = rng.choices(names, weights=[w for _, w in SHARES], k=n)
    else:
        pool = [name for name, _ in SHARES if name != "info"]
        picks = rng.choices(pool, weights=[len(lines[name]) for name in pool], k=n)
    counts = {name: 0 for name, _ in SHARES}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("2024-12-03 12:00:00,000 INFO [trainer] step 1 | loss 2.0 |\n")
        for name in picks:
            counts[name] += 1
            fh.write(rng.choice(lines[name]) + "\n")
    return counts

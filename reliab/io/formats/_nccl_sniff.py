"""Whether a file is a training job's log, from its name and first lines (:func:`sniff_nccl`).

A Slurm output file name (``slurm-%j.out``, sbatch(1) ``--output``) decides at once; otherwise
the head's lines are scored by what only a training job writes: glog prefixes of the PyTorch
C++ core, a container runtime's stamp before such a record, PyTorch/NCCL/CUDA failure markers,
torchrun's per-rank prefixes, dated or traceback lines and a training loop's progress lines
(:func:`score_lines`).  :class:`Hints` rules out, for the whole head at once, what no line
can hold.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from reliab.io.formats._nccl_messages import runtime_stamped, split_line

_TRAINING = re.compile(r"\b(?:loss|lm loss|train_loss|grad_norm|grad norm|learning_rate|learning rate|lr|"
                       r"iteration|iter|step|global_step|epoch|tokens/s|tflops|throughput|samples/s|"
                       r"step_time)\b'?\s*[:=|]?\s*[-+]?[0-9.]", re.I)


#: Slurm's default output file name of a job (``--output``: ``slurm-%j.out``, arrays ``slurm-%A_%a.out``)
_SLURM_OUTPUT = re.compile(r"slurm-[0-9]+(?:_[0-9]+)?(?:-\S+)?\.(?:out|err|log)(?:\.\w+)?")


def sniff_nccl(path: str, first_lines: list[str] | tuple[str, ...]) -> float:
    """Confidence that ``path`` is a training-job log (file name, glog, failure or loss lines).

    A clean job log (step and loss lines only) is recognised too, with a low score.
    """
    if _SLURM_OUTPUT.fullmatch(os.path.basename(path)):
        return 0.9
    return score_lines(first_lines, Hints.of("\n".join(first_lines)))


@dataclass(frozen=True)
class Hints:
    """What the lines of a file's head may hold, from literal and regex checks of all of
    them at once: each is a necessary condition of what :func:`score_lines` looks for in
    one line, so a ``False`` skips that work on every line (a ``True`` decides nothing)."""

    glog: bool
    iso: bool
    marker: bool
    training: bool
    #: a record behind a container runtime's stamp is possible: :func:`runtime_stamped` needs a
    #: glog prefix, a marker, a rank prefix (``[rank3]:``, ``rank=3``) or an NCCL debug line
    runtime: bool = True

    @classmethod
    def of(cls, text: str) -> Hints:
        odd = "\x1b" in text  # (colour codes are removed before a line is taken apart)
        glog = odd or any(hint.search(text) is not None for hint in _GLOG_HINTS)
        marker = any(marker in text for marker in _MARKERS)
        return cls(glog=glog, iso=odd or _ISO_HINT.search(text) is not None, marker=marker,
                   training=_training_hint(text),
                   runtime=glog or marker or "NCCL " in text or "rank" in text)


#: every match of ``_TRAINING`` (case-insensitive) holds one of these, lower-cased
_TRAINING_WORDS = ("loss", "grad", "learning", "lr", "iter", "step", "epoch", "tokens/s", "tflops",
                   "throughput", "samples/s")
#: every match of ``_MEGATRON`` holds one of these
_MEGATRON_WORDS = ("iteration", "consumed samples", "dataset ", "datetime: ")


def _training_hint(text: str) -> bool:
    """Whether ``text`` may hold a training-loop progress line (the regexes run only on
    text holding one of their words; non-ASCII text, where case folding goes beyond
    ``str.lower``, always runs them)."""
    if text.isascii():
        low = text.lower()
        if not any(w in low for w in _TRAINING_WORDS) and not any(w in text for w in _MEGATRON_WORDS):
            return False
    return _TRAINING.search(text) is not None or _MEGATRON.search(text) is not None


#: every hint true: the line-by-line checks alone decide
_ALL = Hints(True, True, True, True)
#: a glog prefix, timed or not, contains a match of one of these (``_GLOG``, ``_GLOG_NO_TIME``);
#: two searches, since a pattern that starts with a character class is scanned for at C
#: speed and an alternation of two is not (a third of the time on a 3 kB head)
_GLOG_HINTS = (re.compile(r"[IWEF][0-9]{3,4} [0-9]{2}:[0-9]{2}:[0-9]{2}"), re.compile(r"\[[IWEF] "))
#: every match of ``ISO`` contains this
_ISO_HINT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T_][0-9]{2}:[0-9]{2}:[0-9]{2}")


#: the per-rank prefixes only PyTorch writes: torchrun's ``[default0]:`` (its default role name and
#: the local rank, ``torch/distributed/elastic/multiprocessing``) and c10's ``[rank0]:``
_TORCH_PREFIX = re.compile(r"\[(?:default|rank)[0-9]+\]:")


def score_lines(lines: list[str] | tuple[str, ...], hints: Hints = _ALL) -> float:
    """The content score of :func:`sniff_nccl`: a container runtime's stamp before a training
    record 0.9 (:func:`~reliab.io.formats._nccl_messages.runtime_stamped`), glog 0.8, failure markers 0.6, PyTorch's
    per-rank prefixes 0.5, dated or traceback lines 0.4, a training loop's progress lines at
    least 0.35."""
    score, training = 0.0, 0
    for line in lines:
        # (an RFC 3339 line may be a runtime-stamped record at any score: runtime_stamped)
        part = (split_line(line) if hints.glog or (hints.iso and (score < 0.4 or (hints.runtime and line[10:11] == "T")))
                else None)
        if part is not None and ((part.glog is not None and not part.month_day) or part.glog_untimed):
            return 0.8
        if hints.runtime and part is not None and part.iso is not None and runtime_stamped(line, part, _MARKERS):
            return 0.9  # above a kernel/syslog sniff of the same RFC 3339 stamps (0.8, 0.85)
        if hints.marker and any(marker in line for marker in _MARKERS):
            score = max(score, 0.6)
        elif line.startswith(("[default", "[rank")) and _TORCH_PREFIX.match(line):
            score = max(score, 0.5)
        elif (part is not None and part.iso is not None) or "Traceback (most recent call last)" in line:
            score = max(score, 0.4)
        if hints.training and not training and (len(_TRAINING.findall(line)) >= 2 or _MEGATRON.search(line)):
            training += 1
    return max(score, 0.35) if training else score


#: texts only the PyTorch/NCCL/CUDA stack prints
_MARKERS = ("ProcessGroupNCCL", "NCCL WARN", "NCCL INFO", "NCCL error", "NCCL Error", "CUDA error: ",
            "cuda runtime error", "THCudaCheck", "what():  ", "terminate called after throwing",
            "torch.distributed", "DistBackendError", "Watchdog caught collective", "c10::Error")
#: a progress line of a training loop (HF Trainer dicts, tqdm bars, Megatron iterations)
_MEGATRON = re.compile(r"\biteration\s+[0-9]+/\s*[0-9]+ \||consumed samples|elapsed time per iteration|"
                       r"\bdataset [0-9]+, input: |datetime: [0-9]{4}-[0-9]{2}-[0-9]{2}")

"""Checkpoint saves and resumes in training-job logs -> few ``signals`` rows (``train:*``).

Recognised lines (one row per checkpoint save or load, never one per step), with the
framework source that prints them:

* ``train:checkpoint_saved`` — a completed (or, where noted, started) checkpoint save:

  - Megatron-LM ``megatron/training/checkpointing.py``:
    ``  successfully saved checkpoint from iteration     845 to /ckpt [ t 1/1, p 1/1 ]``
    (older releases: ``... at iteration ...``);
  - torchtitan ``torchtitan/components/checkpoint.py``: ``Finished saving the checkpoint
    (or staging if async is enabled)in 5.53 seconds.`` and the older ``Finished saving the
    checkpoint in 0.60 seconds.`` (the duration is the time training waited);
  - Hugging Face ``transformers`` ``Trainer``: ``Saving model checkpoint to out/checkpoint-500``
    (printed when the synchronous save *starts*; the step is read from the path);
  - PyTorch Lightning ``ModelCheckpoint(verbose=True)``: ``Epoch 0, global step 100:
    'val_loss' reached 0.50000 (best 0.50000), saving model to '...ckpt' as top 1`` (start);
  - reliab's sample: ``[checkpoint] saved step 350278 to /ckpt/step_00350278 in 60.0s``.

* ``train:checkpoint_loaded`` — training state restored, the end of a restart:

  - Megatron-LM: `` successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] at iteration 845``;
  - torchtitan: ``Finished loading the checkpoint in 54.49 seconds.``;
  - Hugging Face ``Trainer``: ``  Continuing training from global step 500``;
  - PyTorch Lightning: ``Restored all states from the checkpoint at /ckpt/last.ckpt``
    (``... checkpoint file at ...`` in older releases);
  - reliab's sample: ``[trainer] model and optimizer state loaded for step 350000``.

The message is ``key=value`` text the job models read back: ``step=<n>`` (when printed),
``write_s=<seconds>`` (torchtitan and the sample print the duration), ``via=<framework>``
and ``time=previous-line`` when the line carries no time of its own and takes the last
timestamp seen in the file (Megatron prints checkpoint lines without one; its iteration lines
``[2024-08-01 09:44:55] iteration 100/...`` carry it).  With no timestamp at all before it,
the line is malformed (quarantined with the reason).
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from typing import Any

import pandas as pd

from reliab.errors import ParseError
from reliab.io._localtime import localize

SAVED, LOADED = "train:checkpoint_saved", "train:checkpoint_loaded"

#: (signal, framework, pattern with optional groups ``step`` and ``secs``)
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (SAVED, "megatron", re.compile(r"successfully saved checkpoint (?:from|at) iteration\s+(?P<step>\d+)")),
    (SAVED, "torchtitan", re.compile(r"Finished saving the checkpoint(?: \(or staging if async is "
                                     r"enabled\))? ?in (?P<secs>\d+(?:\.\d+)?) seconds")),
    (SAVED, "transformers", re.compile(r"Saving model checkpoint to \S*?checkpoint-(?P<step>\d+)")),
    (SAVED, "lightning", re.compile(r"global step (?P<step>\d+):.*\bsaving model to ")),
    (SAVED, "sample", re.compile(r"\[checkpoint\] saved step (?P<step>\d+) to \S+ in "
                                 r"(?P<secs>\d+(?:\.\d+)?)s")),
    (LOADED, "megatron", re.compile(r"successfully loaded checkpoint from .*?at iteration\s+(?P<step>\d+)")),
    (LOADED, "torchtitan", re.compile(r"Finished loading the checkpoint in (?P<secs>\d+(?:\.\d+)?) seconds")),
    (LOADED, "transformers", re.compile(r"Continuing training from global step (?P<step>\d+)")),
    (LOADED, "lightning", re.compile(r"Restored all states from the checkpoint (?:file )?at \S")),
    (LOADED, "sample", re.compile(r"model and optimizer state loaded for step (?P<step>\d+)")),
)
#: cheap literal test before any regex: every pattern contains one of these
_LITERALS = ("heckpoint", "global step", "state loaded")
_ANY_LITERAL = re.compile("|".join(re.escape(lit) for lit in _LITERALS))
#: a timestamp at the start of a line, possibly after bracketed tags: "[titan] 2025-...",
#: " [2024-08-01 09:44:55] iteration", "[INFO|trainer.py:2000] 2024-..."
#: and Megatron's "[after training is done] datetime: 2025-10-06 03:27:07"
_OWN_TIME = re.compile(r"^\s*(?:\[[^\]\d][^\]]*\]:?\s*)*(?:datetime:\s*)?\[?(\d{4})-(\d\d)-(\d\d)[ T]"
                       r"(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")


def _own_time(text: str, tz: tzinfo) -> pd.Timestamp | None:
    m = _OWN_TIME.match(text)
    if m is None:
        return None
    try:
        y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
        ts = pd.Timestamp(datetime(y, mo, d, hh, mm, ss))
    except ValueError:
        return None
    frac = m.group(7)
    if frac:
        ts += pd.Timedelta(nanoseconds=int(frac.ljust(9, "0")[:9]))
    try:
        return localize(ts, tz)  # naive: the one DST rule
    except ParseError:  # skipped by a DST change
        return None


def progress_row(text: str, when: pd.Timestamp | None, state: dict[str, Any]) -> dict[str, Any] | None:
    """A ``train:*`` signal row for a checkpoint save/load line, else ``None`` (irrelevant).

    Parameters
    ----------
    text : str
        The line (after any launcher prefix such as ``[rank0]:``).
    when : pandas.Timestamp or None
        The line's time when the calling reader already parsed it.
    state : dict
        The reader's per-file state (``tz``, ``job_id``); the last timestamp seen is kept
        in it under ``"progress_time"``.

    Raises
    ------
    ParseError
        A checkpoint line with no timestamp of its own and none before it in the file.
    """
    if when is None and text[:1] in " \t[":
        when = _own_time(text, state["tz"])
    if when is not None:
        state["progress_time"] = when
    if _ANY_LITERAL.search(text) is None:
        return None
    for signal, via, pattern in _PATTERNS:
        m = pattern.search(text)
        if m is not None:
            return _row(signal, via, m, when, state)
    return None


def _row(signal: str, via: str, m: re.Match[str], when: pd.Timestamp | None,
         state: dict[str, Any]) -> dict[str, Any]:
    parts = []
    groups = m.groupdict()
    if groups.get("step"):
        parts.append(f"step={int(groups['step'])}")
    if groups.get("secs"):
        parts.append(f"write_s={float(groups['secs']):g}" if signal == SAVED
                     else f"load_s={float(groups['secs']):g}")
    parts.append(f"via={via}")
    if when is None:
        when = state.get("progress_time") or state.get("iso")
        if when is None:
            raise ParseError(f"{signal} line without a timestamp and no timestamped line before it")
        parts.append("time=previous-line")
    return {"time": when, "host": None, "gpu": None, "job_id": state.get("job_id"),
            "source": "nccl", "signal": signal, "severity": "info", "message": " ".join(parts)}


__all__ = ["progress_row", "SAVED", "LOADED"]

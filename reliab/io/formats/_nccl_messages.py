"""Training-log lines: launcher prefixes, glog prefixes and the failure messages they carry.

A line of a distributed training job's output is, from the outside in:

1. launcher prefixes, any number of them: a log viewer's line number (``[80746] ``) or the
   service column of ``docker compose logs`` (``vllm-1  | ``) or a collector's run and stream
   (``bench.node [stderr] ``), a log collector's own stamp
   (``[2025-05-10 00:18:21] ``, which then only dates the record), pdsh
   as used by the DeepSpeed launcher (``192.168.13.81: ``, names the host), Slurm ``srun
   --label`` (``0: ``), Open MPI ``mpirun --tag-output`` (``[1,0]<stderr>:``), Ray
   (``(RayTrainWorker pid=123, ip=10.0.0.1) ``, names the host; colour codes removed, also
   when a pager wrote their escape byte as ``ESC`` or in caret notation as ``^[``, as
   ``cat -v`` and vim show it) and vLLM's worker processes, named like
   Ray's (``(VllmWorker rank=6 pid=409) ``, ``(Worker_TP0 pid=43609) ``,
   ``vllm/executor/multiproc_worker_utils.py`` and ``vllm/v1/executor/multiproc_executor.py``),
   torchrun ``--tee`` (``[default0]:``) and PyTorch's own rank prefix (``[rank1]:``);
2. a timestamp: a glog prefix of the PyTorch C++ core (``c10/util/Logging.cpp``:
   ``[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616]`` with an unpadded month,
   ``E1218 20:27:21.426415 12345 ProcessGroupNCCL.cpp:629]`` from glog proper, or
   ``[E ProcessGroupNCCL.cpp:737]`` without any time in PyTorch 1.x-2.3), a month-day stamp
   of Python ``logging`` like glog's (vLLM's ``ERROR 10-23 09:29:40 [file.py:671]`` from
   ``vllm/logger.py``, ``_FORMAT = "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d]"``
   with ``_DATE_FORMAT = "%m-%d %H:%M:%S"``, older releases without the ``[``; a trainer's
   ``06/26 18:54:31 [ERROR] …`` or detectron2's ``[06/26 18:54:31 d2.engine]:`` from
   ``datefmt="%m/%d %H:%M:%S"``, ``detectron2/utils/logger.py``), or an ISO date of
   the job's own logging (``2024-06-03 14:00:00,123 INFO``, ``[2024-06-26 06:24:44,903]``);
3. the message, which for NCCL's own lines starts with ``<host>:<pid>:<tid> [<device>]``
   (NCCL ``src/debug.cc``), naming the host and the CUDA device.

:func:`split_line` peels 1 and 2; :func:`classify` reads 3 (texts from
``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, ``c10/cuda/CUDAException.h``, the THC
``THCudaCheck`` of PyTorch 1.x, NCCL ``src/include/checks.h`` and ``net_ib.cc``, vLLM's
``RuntimeError(f"NCCL error: {error_str}")`` of ``pynccl_wrapper.py``, ``NCCL_CHECK``), and
the last line of a Python traceback of a program error (:func:`python_exception`,
``python:exception``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: colour codes as a pager or a web copy renders them: the escape byte written as ``ESC`` or ``^[``
_ANSI_TEXT = re.compile(r"(?:ESC|\^\[)\[[0-9;]*m")
_LAUNCHER = re.compile(
    r"\s*(?:"
    r"\[(?:rank(?P<rank>[0-9]+)|[A-Za-z_]+[0-9]+)\]:"  # [rank3]: (PyTorch), [default0]: (torchrun)
    r"|[0-9]+:(?= )"  # srun --label
    r"|\[[0-9]+,[0-9]+\]<std(?:out|err)>:"  # mpirun --tag-output
    # Ray worker (ip: an address or a pod name); vLLM's workers: (VllmWorker rank=6 pid=409), (Worker_TP0 pid=1)
    r"|\((?:[A-Za-z_][A-Za-z0-9_]* )?(?:rank=(?P<vrank>[0-9]+) )?pid=[0-9]+(?:, ip=(?P<ray>[^\s,()]+))?\)"
    r")\s?")
#: prefixes only at the very start of a line: a viewer's line number, a pdsh host, the service
#: column of ``docker compose logs`` (``llm-inference-2-1  | ``)
_LINE_NUMBER = re.compile(r"\[[0-9]+\] ")
_COMPOSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\s+\| ")
#: a collector naming the run and the stream (milabench: ``dinov2-giant-nodes.cn-d004 [stderr] ``)
_STREAM_TAG = re.compile(r"[^\s\[\]]+ \[std(?:err|out)\] ")
_PDSH = re.compile(r"(?P<host>[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[a-z][a-z0-9-]*[0-9][a-z0-9.-]*): ")
_GLOG = re.compile(
    r"\[?(?P<level>[IWEF])(?P<md>[0-9]{3,4}) (?P<hh>[0-9]{2}):(?P<mm>[0-9]{2}):(?P<ss>[0-9]{2})"
    r"(?:\.(?P<frac>[0-9]{1,9}))?(?: +[0-9]+)? (?P<where>[^\s\]]+:[0-9]+)\] ?(?P<msg>.*)", re.S)
#: Python logging's month-day stamps (see the module docstring): vLLM's level-first
#: ``ERROR 10-23 09:29:40 [file.py:671] `` and the ``%m/%d %H:%M:%S`` of trainer loggers
_VLLM_STAMP = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<mo>[0-9]{2})-(?P<d>[0-9]{2}) (?P<hh>[0-9]{2}):(?P<mm>[0-9]{2})"
    r":(?P<ss>[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))? \[?[^\s\]]+:[0-9]+\] ?(?P<msg>.*)", re.S)
_SLASH_STAMP = re.compile(
    r"\[?(?P<mo>[0-9]{2})/(?P<d>[0-9]{2}) (?P<hh>[0-9]{2}):(?P<mm>[0-9]{2}):(?P<ss>[0-9]{2})"
    r"(?:[.,](?P<frac>[0-9]{1,9}))?(?:\] ?| )(?P<msg>.*)", re.S)
_GLOG_NO_TIME = re.compile(r"\[(?P<level>[IWEF]) (?P<where>[^\s\]]+:[0-9]+)\] ?(?P<msg>.*)", re.S)
#: an ISO date of the job's own logging, at the start or within the first words of a line
ISO = re.compile(r"(?:^|(?<=[\[\s(]))([0-9]{4})-([0-9]{2})-([0-9]{2})[ T_]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                 r"(?:[.,]([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?(?=[\]\s,)]|$)")
_ISO_WITHIN = 48
#: an ASCII digit: no ISO date (``[0-9]{4}-…``) where there is none
_DIGIT = re.compile(r"[0-9]")
#: what follows a log collector's own stamp (``[2025-05-10 00:18:21] (WorkerDict pid=…) …``):
#: a launcher prefix or a glog stamp, so the bracketed date is the collector's, not the record's
_AFTER_COLLECTOR = re.compile(r"\] (?=\(|\[|[IWEF][0-9]{3,4} )")
_NCCL_WHO = re.compile(r"(?P<host>[^\s:]+):[0-9]+:[0-9]+ \[(?P<dev>[0-9]+)\] ")

_WORK = re.compile(r"WorkNCCL\((.*?)\) ran for ([0-9]+) milliseconds")
_SEQNUM = re.compile(r"SeqNum=([0-9]+)")
_SEQ = re.compile(r"failure detected by watchdog at work sequence id: ([0-9]+)"
                  r"|detected by watchdog at work: ([0-9]+)|Timeout at NCCL work: ([0-9]+)")
_RANK = re.compile(r"\bRank ([0-9]+)\]")
_CUDA = re.compile(r"CUDA error: ([^\n]*)")
_CUDA_RUNTIME = re.compile(r"cuda runtime error \(([0-9]+)\) : (.*?)(?: at \S+:[0-9]+)?\s*$")
_THC = re.compile(r"THCudaCheck FAIL .*?error=([0-9]+) : (.*?)\s*$")
_NCCL_CUDA = re.compile(r"NCCL WARN Cuda failure (?:[0-9]+ )?'([^']*)'")
_NCCL_ERROR = re.compile(r"NCCL error in: \S+?(?::[0-9]+)?, ([^\n]*)|NCCL Error [0-9]+: ([^\n]*)"
                         r"|RuntimeError: NCCL error: ([A-Za-z][^\n]*)")  # (vLLM pynccl_wrapper.py)
_NET_IB = re.compile(r"NCCL WARN NET/IB\s*: Got completion from peer (\S+) with (?:status=|error )([0-9]+)")


@dataclass(frozen=True, slots=True)
class Split:
    """A training-log line taken apart (see the module docstring)."""

    rank: str | None
    body: str
    host: str | None = None
    glog: tuple[int, int, int, int, int, int] | None = None  # month, day, h, m, s, ns
    glog_untimed: bool = False
    iso: re.Match[str] | None = None
    prefixed: bool = False
    dated: re.Match[str] | None = None  # a collector's stamp before the prefixes (the record's date)
    month_day: bool = False  # ``glog`` holds a Python logging month-day stamp, not a glog prefix


def fraction_ns(digits: str | None) -> int:
    """Nanoseconds of a fraction of a second written with up to nine digits."""
    return 0 if not digits else int(digits.ljust(9, "0")[:9])


def _month_day(md: str) -> tuple[int, int]:
    """``626`` -> (6, 26), ``1226`` -> (12, 26): c10 prints the month without padding."""
    return int(md[:-2]), int(md[-2:])


def _collector(text: str, pos: int) -> re.Match[str] | None:
    """A log collector's ``[YYYY-MM-DD HH:MM:SS] `` at ``pos``, followed by a launcher prefix or glog."""
    if text[pos:pos + 1] != "[":
        return None
    m = ISO.match(text, pos + 1)
    if m is None or _AFTER_COLLECTOR.match(text, m.end()) is None:
        return None
    return m


def _prefixes(text: str) -> tuple[int, str | None, str | None, re.Match[str] | None]:
    """End of the launcher prefixes of ``text``, the rank and the host they name, and a
    collector's stamp before them (:func:`_collector`)."""
    rank = host = None
    pos = 0
    m = _LINE_NUMBER.match(text) or _COMPOSE.match(text) or _STREAM_TAG.match(text)
    if m is not None:
        pos = m.end()
    dated = _collector(text, pos)
    if dated is not None:
        pos = dated.end() + 2  # "] "
    m = _PDSH.match(text, pos)
    if m is not None:
        pos, host = m.end(), m.group("host")
    while True:
        m = _LAUNCHER.match(text, pos)
        if m is None or m.end() == pos:
            return pos, rank, host, dated
        rank = m.group("rank") or m.group("vrank") or rank
        host = m.group("ray") or host
        pos = m.end()


def split_line(text: str) -> Split:
    """Peel launcher prefixes and the timestamp prefix off one training-log line."""
    if text[:1].isdigit() and "\x1b" not in text:
        # no launcher or glog prefix starts with four digits and "-": the dated line of the
        # job's own logging, taken apart as _split_all would
        iso = ISO.match(text, 0, _ISO_WITHIN)
        if iso is not None:
            return Split(None, text[iso.end():], None, iso=iso)
    return _split_all(text)


def _split_all(text: str) -> Split:
    """:func:`split_line` for any line: colour codes, launcher prefixes, then the stamp."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "ESC[" in text or "^[[" in text:
        text = _ANSI_TEXT.sub("", text)
    pos, rank, host, dated = _prefixes(text)
    prefixed = pos > 0
    body = text[pos:]
    first = body[:1]
    if first in ("[", "I", "W", "E", "F"):
        g = _GLOG.match(body)
        if g is not None:
            mon, day = _month_day(g.group("md"))
            stamp = (mon, day, int(g.group("hh")), int(g.group("mm")), int(g.group("ss")),
                     fraction_ns(g.group("frac")))
            return Split(rank, g.group("msg"), host, glog=stamp, prefixed=prefixed, dated=dated)
        g = _GLOG_NO_TIME.match(body)
        if g is not None:
            return Split(rank, g.group("msg"), host, glog_untimed=True, prefixed=prefixed, dated=dated)
    if first in _MONTH_DAY_FIRST:
        md = month_day_stamp(body)
        if md is not None:
            return Split(rank, md[1], host, glog=md[0], prefixed=prefixed, dated=dated, month_day=True)
    iso = ISO.search(body, 0, _ISO_WITHIN) if _DIGIT.search(body, 0, _ISO_WITHIN) is not None else None
    if iso is not None:
        return Split(rank, body[iso.end():], host, iso=iso, prefixed=prefixed)
    # no stamp of the record's own: the collector's is its time
    return Split(rank, body, host, iso=dated, prefixed=prefixed)


#: first characters of the month-day stamps of :func:`month_day_stamp`
_MONTH_DAY_FIRST = frozenset("DIWEC[01")


def month_day_stamp(body: str) -> tuple[tuple[int, int, int, int, int, int], str] | None:
    """A Python logging month-day stamp at the start of ``body`` and the message after it.

    Parameters
    ----------
    body : str
        A line with its launcher prefixes removed.

    Returns
    -------
    tuple or None
        ``((month, day, h, m, s, ns), message)`` as :func:`split_line` keeps a glog stamp,
        ``None`` when ``body`` starts with no such stamp or with no calendar month-day
        (``26/06 …`` is a day-first date, not read).

    Notes
    -----
    vLLM's ``%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d]`` with ``%m-%d %H:%M:%S``
    (``vllm/logger.py``) and ``%m/%d %H:%M:%S`` loggers (``detectron2/utils/logger.py``).
    """
    m = (_VLLM_STAMP.match(body) if body[:1] in "DIWEC" else None) or _SLASH_STAMP.match(body)
    if m is None:
        return None
    mon, day, hh, mm = int(m.group("mo")), int(m.group("d")), int(m.group("hh")), int(m.group("mm"))
    if not (1 <= mon <= 12 and 1 <= day <= 31 and hh <= 23 and mm <= 59):
        return None
    return (mon, day, hh, mm, int(m.group("ss")), fraction_ns(m.group("frac"))), m.group("msg")


#: what follows a container runtime's stamp: one blank (``docker logs --timestamps``) or the
#: CRI log-file stream and tag (``stdout F ``; Kubernetes ``pkg/kubelet/kuberuntime/logs/logs.go``)
_RUNTIME_TAIL = re.compile(r" (?:std(?:out|err) [FP] )?")


def runtime_stamped(line: str, part: Split, markers: tuple[str, ...] = ()) -> bool:
    """Whether ``line`` is a training-log record behind a container runtime's own stamp.

    Parameters
    ----------
    line : str
        One line of a file's head.
    part : Split
        ``split_line(line)``.
    markers : tuple of str
        Texts only the PyTorch/NCCL/CUDA stack prints: a CRI line (``stdout F``) holding one is
        a training record too, whatever starts it (a job's own dated logging, a traceback).

    Returns
    -------
    bool
        ``True`` when the line starts with an RFC 3339 stamp with its zone
        (``2023-12-28T13:17:07.318704498Z``, as ``docker logs --timestamps`` and the CRI log
        files under ``/var/log/pods`` write it) and what follows it is a record only a training
        job prints: a PyTorch glog prefix (timed or not), a torchrun/PyTorch rank prefix, or
        NCCL's ``<host>:<pid>:<tid> [<dev>]``.  A syslog line with the same stamp names its
        host and tag next, never one of these, nor the CRI stream and tag.
    """
    iso = part.iso
    if iso is None or iso.start() != 0 or not iso.group(8) or line[10:11] != "T":
        return False
    tail = _RUNTIME_TAIL.match(line, iso.end())
    if tail is None:
        return False
    rest = line[tail.end():]
    if tail.end() - iso.end() > 1 and any(marker in rest for marker in markers):
        return True
    inner = split_line(rest)
    if (inner.glog is not None and not inner.month_day) or inner.glog_untimed or inner.rank is not None:
        return True
    host, _ = nccl_who(rest)
    return host is not None and rest.startswith(host + ":") and "NCCL " in rest


def nccl_who(msg: str) -> tuple[str | None, str | None]:
    """Host and CUDA device of an NCCL debug line (``host:pid:tid [dev] …``)."""
    m = _NCCL_WHO.search(msg, 0, 200)
    return (None, None) if m is None else (m.group("host"), m.group("dev"))


@dataclass(frozen=True, slots=True)
class Found:
    """A failure message: its key, severity, text, and what makes repeats of it the same event.

    ``repeat`` marks the texts that restate a failure reported before them (the ``what():``
    of the C++ exception); ``always_once`` the failures that count once per rank and
    collective whatever restates them (watchdog timeouts and detections).
    """

    signal: str
    severity: str
    text: str
    core: str | None
    repeat: bool = False
    always_once: bool = False


def _cuda(text: str, repeat: bool) -> Found:
    low = text.lower()
    if "illegal memory access" in low:
        key, severity = "cuda:illegal_memory_access", "error"
    elif "uncorrectable ecc" in low:
        key, severity = "cuda:uncorrectable_ecc", "critical"
    else:
        key, severity = "cuda:error", "error"
    return Found(key, severity, f"CUDA error: {text}", low.rstrip(". "), repeat)


def _watchdog(msg: str, repeat: bool) -> Found | None:
    if "Watchdog caught collective operation timeout" in msg:
        m = _WORK.search(msg)
        text = (f"Watchdog caught collective operation timeout: WorkNCCL({m.group(1)}) ran for"
                f" {m.group(2)} milliseconds" if m else msg.strip()[:500])
        seq = _SEQNUM.search(msg)
        return Found("nccl:watchdog_timeout", "error", text, seq.group(1) if seq else None, repeat, True)
    m = _SEQ.search(msg)
    if m is not None:
        seq = m.group(1) or m.group(2) or m.group(3)
        return Found("nccl:failure_detected", "error",
                     f"failure detected by watchdog at work sequence id: {seq}", seq, repeat, True)
    return None


def classify(msg: str) -> Found | None:
    """The failure a training-log message reports, or ``None``."""
    repeat = "what():" in msg
    if "atchdog" in msg or "Timeout at NCCL work" in msg:
        found = _watchdog(msg, repeat)
        if found is not None:
            return found
    if "CUDA error: " in msg:  # also a RuntimeError's last traceback line: CUDA evidence, not python:exception
        return _cuda(_CUDA.search(msg).group(1).strip(), repeat)  # type: ignore[union-attr]
    for pattern in (_CUDA_RUNTIME, _THC):
        m = pattern.search(msg) if ("cuda runtime error" in msg or "THCudaCheck" in msg) else None
        if m is not None:
            return _cuda(m.group(2).strip(), repeat)
    if "NCCL WARN" in msg:
        m = _NCCL_CUDA.search(msg)
        if m is not None:
            text = m.group(1).strip()
            return Found("nccl:cuda_failure", "error", f"NCCL Cuda failure '{text}'", text.lower(), repeat)
        m = _NET_IB.search(msg)
        if m is not None:
            return Found("nccl:net_error", "error",
                         f"NET/IB: completion from peer {m.group(1)} with status {m.group(2)}", None, repeat)
    if "NCCL error in: " in msg or "NCCL Error " in msg or "NCCL error: " in msg:
        m = _NCCL_ERROR.search(msg)
        if m is not None:
            text = (m.group(1) or m.group(2) or m.group(3)).strip()
            return Found("nccl:error", "error", f"NCCL error: {text[:500]}", text.split(",")[0].lower(), repeat)
    return python_exception(msg) if "rror: " in msg or msg.endswith("rror") else None


def rank_in(msg: str) -> str | None:
    """The rank a message names (``[Rank 3]``, ``[PG ID 0 PG GUID 0 Rank 3]``)."""
    m = _RANK.search(msg)
    return None if m is None else m.group(1)


#: the last line of a Python traceback: ``ValueError: …``, ``torch.OutOfMemoryError: …``
_PY_EXCEPTION = re.compile(r"(?P<type>(?:[A-Za-z_][A-Za-z0-9_]*\.)*(?P<name>[A-Za-z_][A-Za-z0-9_]*Error))"
                           r"(?::[ ]?(?P<text>.*))?$", re.S)
#: exception types that end a job because of the program: Python's programming errors and the
#: framework's out-of-memory error (``torch.OutOfMemoryError``, ``torch.cuda.OutOfMemoryError``)
PROGRAM_ERRORS = frozenset({
    "ValueError", "KeyError", "IndexError", "TypeError", "AttributeError", "NameError",
    "UnboundLocalError", "AssertionError", "ZeroDivisionError", "NotImplementedError",
    "RecursionError", "ImportError", "ModuleNotFoundError", "RuntimeError", "OutOfMemoryError"})
#: a RuntimeError naming the GPU stack or the collectives is CUDA/NCCL evidence, read (or not)
#: by the patterns above, never a program error
_STACK_WORDS = re.compile(r"CUDA error|CUDA driver|CUDA kernel|NCCL|nccl|CUDNN_STATUS|cuDNN error|CUBLAS_STATUS|c10d|"
                          r"ProcessGroup|DistBackend|Gloo|gloo|[Ww]atchdog|NVML|uncorrectable ECC|Xid")


def python_exception(msg: str) -> Found | None:
    """``python:exception`` for the last line of a traceback of a program error, else ``None``.

    Parameters
    ----------
    msg : str
        A message without its launcher and time prefixes (:func:`split_line`).

    Returns
    -------
    Found or None
        The exception (type and text) when ``msg`` starts with a type of
        :data:`PROGRAM_ERRORS` followed by ``:`` (or nothing): the form Python's
        ``traceback.format_exception_only`` gives the last line.  A ``RuntimeError`` about
        CUDA, NCCL or the process group is not one (the GPU stack's own evidence), except the
        framework's out-of-memory error; wrappers such as torchrun's ``ChildFailedError``
        and ``DistBackendError`` are not program errors and give ``None``.  Repeats of the same
        type by the same rank within the repeat window are one failure (a DataLoader worker's
        ``ValueError`` is printed again inside ``Caught ValueError in DataLoader worker``).

    References
    ----------
    Python Language Reference, ``traceback`` module (``format_exception_only``); PyTorch
    ``torch/utils/data/_utils/worker.py`` (``ExceptionWrapper``) and ``torch.OutOfMemoryError``.
    """
    m = _PY_EXCEPTION.match(msg)
    if m is None or m.group("name") not in PROGRAM_ERRORS:
        return None
    kind, text = m.group("type"), (m.group("text") or "").strip()
    if m.group("name") == "RuntimeError" and _STACK_WORDS.search(text) and "out of memory" not in text:
        return None
    line = f"{kind}: {text[:480]}" if text else kind
    return Found("python:exception", "error", line, m.group("name"), True)

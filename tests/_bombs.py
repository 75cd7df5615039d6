"""Decompression bombs and pathological files, written as streams (never held in memory).

Shared by ``tests/test_hostile_bombs.py`` (scaled to run in CI) and
``benchmarks/bench_hostile_memory.py`` (at full size).  Each writer takes the
target path and a size; :func:`run_child` ingests a file in a fresh interpreter and returns
its peak RSS (``VmHWM`` of ``/proc/self/status``, else ``ru_maxrss``) with the accounting.

gzip bombs are built the way ``gzip -9`` would never bother to: each distinct block is
deflated once, closed with a full flush (so it refers to nothing before it, RFC 1951
§3.2.3 and zlib's ``Z_FULL_FLUSH``) and repeated; the member trailer holds the CRC-32 of
the whole data and its size modulo 2**32 (RFC 1952 §2.3.1).  Writing a 4 GiB stream this
way costs a CRC pass, not a compression pass.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path

import zstandard

BLOCK = 1 << 24
XID = (b"2024-06-01T01:20:46.707376+00:00 node1807 kernel: NVRM: Xid (PCI:0000:3a:00): 79, pid=2000002, "
       b"name=pt_main_thread, GPU has fallen off the bus.\n")
BAD_XID = b"2024-06-01T01:20:46.707376+00:00 node1807 kernel: NVRM: Xid (PCI:0000:3a:00): no code here, really\n"


def gzip_stream(path: Path, parts: Iterable[tuple[bytes, int]]) -> int:
    """Write ``b"".join(data * count for data, count in parts)`` as one gzip member; its length."""
    crc, total = 0, 0
    with open(path, "wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
        for data, count in parts:
            if not count or not data:
                continue
            comp = zlib.compressobj(9, zlib.DEFLATED, -15)
            block = comp.compress(data) + comp.flush(zlib.Z_FULL_FLUSH)
            for _ in range(count):
                fh.write(block)
                crc = zlib.crc32(data, crc)
            total += len(data) * count
        last = zlib.compressobj(9, zlib.DEFLATED, -15)
        fh.write(last.compress(b"") + last.flush())
        fh.write(struct.pack("<II", crc, total & 0xFFFFFFFF))
    return total


def repeated(unit: bytes, size: int) -> list[tuple[bytes, int]]:
    """``parts`` for :func:`gzip_stream`: ``unit`` repeated to about ``size`` bytes."""
    per = max(1, BLOCK // len(unit))
    block = unit * per
    full, rest = divmod(size // len(unit), per)
    return [(block, full), (unit * rest, 1)]


def zstd_stream(path: Path, parts: Iterable[tuple[bytes, int]]) -> None:
    """Zstandard version of :func:`gzip_stream` (compressed while streaming, in 16 MiB pieces)."""
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=3).stream_writer(fh) as out:
        for data, count in parts:
            for _ in range(count):
                out.write(data)


def zstd_newlines(path: Path, size: int) -> None:
    """A valid Xid line, then ``size`` bytes of newlines (before the fix: 320 KB -> 8.3 GB)."""
    zstd_stream(path, [(XID, 1), *repeated(b"\n", size), (XID, 1)])


def zstd_zeros(path: Path, size: int) -> None:
    """A valid Xid line, one line of ``size`` zero bytes, another Xid line."""
    zstd_stream(path, [(XID, 1), *repeated(b"\0", size), (b"\n" + XID, 1)])


LANL_HEAD = (b"System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,"
             b"fru type,mem,cputype,memtype,num intercon,purpose,Prob Started,Prob Fixed,Down Time,Facilities,"
             b"Hardware,Human Error,Network,Undetermined,Software,Same Event\n")
LANL = (b"2,cluster,49,6152,80,0,0,5-Apr,5-Jun,current,part,80,1,1,0,graphics.fe,6/21/2005 10:54,6/21/2005 11:00,"
        b"6,,Graphics Accel Hdwr,,,,,No\n")


def lanl_blank_lines(path: Path, size: int) -> None:
    """A LANL header, ``size`` blank lines, one record (before the fix: 98 KB of them took 14 GB)."""
    gzip_stream(path, [(LANL_HEAD, 1), *repeated(b"\n", size), (LANL, 1)])


def telemetry_long_field(path: Path, size: int) -> None:
    """A telemetry CSV header, a row whose field runs ``size`` bytes without a newline, a row."""
    gzip_stream(path, [(b"time,host,temp_c\n2024-06-01T00:00:00Z,node0001,", 1), *repeated(b"1", size),
                       (b"\n2024-06-01T00:01:00Z,node0001,40\n", 1)])


def sacct_json_unclosed(path: Path, size: int) -> None:
    """``sacct --json`` whose second job's name is a string of ``size`` bytes never closed."""
    head = json.dumps({"job_id": 1, "state": {"current": ["NODE_FAIL"]},
                       "time": {"start": 1717200000, "end": 1717203600}})
    gzip_stream(path, [(f'{{"meta": {{"plugin": {{"name": "slurm"}}}},\n"jobs": [\n{head},\n'
                        '{"job_id": 2, "name": "'.encode(), 1), *repeated(b"a", size)])


TICKET_HEAD = b"ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,resolution\n"
TICKET = (b"INC-000001,2024-06-01T01:35:44Z,node0059,4312001,2024-06-01T00:08:44Z,incident,"
          b"GPU5 replaced on node0059,GPU replaced (RMA): faulty GPU,GPU swapped\n")


def tickets_unclosed(path: Path, size: int) -> None:
    """A ticket, one whose title opens a quote and runs ``size`` bytes without a newline, a ticket."""
    gzip_stream(path, [(TICKET_HEAD + TICKET + TICKET.replace(b",GPU5", b',"GPU5')[:-1], 1),
                       *repeated(b"a", size), (b"\n" + TICKET.replace(b"INC-000001", b"INC-000003"), 1)])


def tickets_unclosed_lines(path: Path, size: int) -> None:
    """An unclosed quote followed by ``size`` bytes of free-text lines, then a ticket."""
    gzip_stream(path, [(TICKET_HEAD + TICKET.replace(b",GPU5", b',"GPU5'), 1),
                       *repeated(b"free text of a root cause, going on and on\n", size),
                       (TICKET.replace(b"INC-000001", b"INC-000003"), 1)])


def malformed_xid_lines(path: Path, size: int) -> None:
    """``size`` bytes of Xid lines without a code (before the fix: 1 GB of them cost 8.8 GB)."""
    gzip_stream(path, [(XID, 1), *repeated(BAD_XID, size), (XID, 1)])


def sparse_after_line(path: Path, size: int) -> None:
    """A valid Xid line, then a hole of ``size`` bytes (before the fix: 5 GB used 10 GB)."""
    with open(path, "wb") as fh:
        fh.write(XID)
        fh.truncate(len(XID) + size)


def fr_nones(path: Path, count: int) -> None:
    """A flight-recorder dump whose entry list holds ``count`` Nones."""
    path.write_bytes(pickle.dumps({"version": "2.4", "entries": [None] * count}, protocol=4))


def fr_exponential(path: Path, levels: int) -> None:
    """A dump whose entries hold a self-referencing list and one whose repr has 2**levels leaves."""
    cyclic: list = []
    cyclic.append(cyclic)
    nested: list = []
    for _ in range(levels):
        nested = [nested, nested]
    entries = [cyclic, nested, {"record_id": nested, "state": "started", "time_created_ns": 1}]
    path.write_bytes(pickle.dumps({"version": "2.4", "entries": entries}, protocol=4))


_PEAK = """
def peak_mb():
    # VmHWM is the peak of this process's own memory map: ru_maxrss also keeps the peak of
    # the process that forked it (Linux carries it across exec), e.g. a large test worker
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

_CHILD = _PEAK + """
import json, resource, sys, time
import reliab
path, source = sys.argv[1], sys.argv[2] or None
started = time.perf_counter()
res = reliab.ingest(path, source=source)
acc = res.accounting.iloc[0]
print(json.dumps({"rss_mb": peak_mb(),
                  "seconds": time.perf_counter() - started,
                  "lines": int(acc["lines"]), "parsed": int(acc["parsed"]), "irrelevant": int(acc["irrelevant"]),
                  "malformed": int(acc["malformed"]), "quarantine": len(res.quarantine),
                  "reasons": res.quarantine["reason"].str.slice(0, 120).tolist()[:3],
                  "signals": len(res.signals), "jobs": len(res.jobs), "telemetry": len(res.telemetry)}))
"""

_BASELINE = _PEAK + """
import json, resource
import reliab, polars, pyarrow  # what an ingest imports before reading a byte
print(json.dumps({"rss_mb": peak_mb()}))
"""


#: the child also reports whether the polars route by path read the whole file
_SPY = """
from reliab.io import _fastscan
_done = []
_batches = _fastscan._path_batches
def _spy(*args, **kwargs):
    yield from _batches(*args, **kwargs)
    _done.append(True)
_fastscan._path_batches = _spy
import atexit
atexit.register(lambda: print(json.dumps({"polars_route": bool(_done)})))
"""


def newline_gzip(path: Path, lines: int, tail: bytes) -> int:
    """``lines`` empty lines, 4,096 lines of noise and ``tail``, gzip; the total line count.

    The noise (hex of a fixed pseudo-random sequence, no prefilter literal) only makes the
    file large enough on disk for the polars route (``_fastscan.FAST_MIN_BYTES``).
    """
    import random

    rng = random.Random(8)
    noise = b"".join(b"noise %032x\n" % rng.getrandbits(128) for _ in range(4096))
    gzip_stream(path, [*repeated(b"\n", lines), (noise, 1), (tail, 1)])
    return lines + 4096 + tail.count(b"\n")


def run_child(path: Path, source: str | None = None, timeout: float = 900, spy: bool = False) -> dict:
    """Ingest ``path`` in a fresh interpreter: its peak RSS (MiB), time and accounting."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    code = ("import json\n" + _SPY + _CHILD) if spy else _CHILD
    out = subprocess.run([sys.executable, "-c", code, str(path), source or ""], capture_output=True,
                         text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        raise AssertionError(f"ingest of {path} failed:\n{out.stderr[-3000:]}")
    result: dict = {}
    for line in out.stdout.strip().splitlines()[-2:]:
        result.update(json.loads(line))
    return result


def baseline_rss() -> float:
    """Peak RSS (MiB) of a fresh interpreter after importing reliab, polars and pyarrow."""
    out = subprocess.run([sys.executable, "-c", _BASELINE], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["rss_mb"]


def ingest_here(path: Path, source: str | None = None) -> dict:
    """:func:`run_child`'s accounting, ingested in this process (no RSS: for small bombs)."""
    import reliab

    res = reliab.ingest(path, source=source)
    acc = res.accounting.iloc[0]
    return {"lines": int(acc["lines"]), "parsed": int(acc["parsed"]), "irrelevant": int(acc["irrelevant"]),
            "malformed": int(acc["malformed"]), "quarantine": len(res.quarantine),
            "reasons": res.quarantine["reason"].str.slice(0, 120).tolist()[:3],
            "signals": len(res.signals), "jobs": len(res.jobs), "telemetry": len(res.telemetry)}

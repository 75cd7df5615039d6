"""Hostile flight-recorder dumps written as raw pickle opcodes (protocol 2 and 4).

Each needs no global lookup, so a restricted unpickler accepts it; each attacks the C
unpickler's hashing or memo (opcode meanings: :mod:`pickletools`).  Run as a script to
write them into a folder: ``python tests/_hostile_pickles.py OUT_DIR``.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

ENTRY = {"record_id": 1, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1,
         "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",
         "time_created_ns": 1_717_400_000_000_000_000, "duration_ms": 1.5, "timeout_ms": 600000,
         "state": "started", "retired": False, "is_p2p": False}


def _ops(obj: object) -> bytes:
    """Opcodes that push ``obj`` (protocol 2, without PROTO and STOP)."""
    return pickle.dumps(obj, protocol=2)[2:-1]


def _with_key(key_ops: bytes) -> bytes:
    """A dump dict whose first key is pushed by ``key_ops`` (value None), then a valid dump."""
    return b"\x80\x02}" + key_ops + b"Ns" + _ops("entries") + b"]" + _ops(ENTRY) + b"as."


def deep_tuple_key(depth: int = 2_000_000) -> bytes:
    """Key ``((((None,),),),)`` nested ``depth`` deep: TUPLE1 is one byte per level."""
    return _with_key(b"N" + b"\x85" * depth)


def dag_tuple_key(levels: int = 64) -> bytes:
    """Key ``t_k = (t_{k-1}, t_{k-1})``: a few bytes, but hashing visits 2**levels leaves."""
    return _with_key(b")" + b"2\x86" * levels)


def deep_frozenset(depth: int = 2_000_000) -> bytes:
    """A frozenset (protocol 4) holding a tuple nested ``depth`` deep as a dump value."""
    return (b"\x80\x04}" + _ops("pg_config") + b"(N" + b"\x85" * depth + b"\x91s" + _ops("entries") + b"]"
            + _ops(ENTRY) + b"as.")


def memo_fanout(copies: int = 1_000_000) -> bytes:
    """One valid entry memoised once, then referenced ``copies`` times from 'entries'."""
    return (b"\x80\x02}" + _ops("entries") + b"]" + _ops(ENTRY) + b"q\x00a(" + b"h\x00" * copies + b"es.")


CASES = {"deep_tuple_key": deep_tuple_key, "dag_tuple_key": dag_tuple_key,
         "deep_frozenset": deep_frozenset, "memo_fanout": memo_fanout}


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, make in CASES.items():
        (out / f"nccl_trace_{name}_rank_0").write_bytes(make())

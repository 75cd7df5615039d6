"""Flight-recorder dumps that attack the unpickler itself (hashing, memo), each loaded in
a subprocess: a clean per-file error row, no crash (exit 139), no hang, bounded memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _hostile_pickles import CASES, ENTRY, _ops

_LOAD = """
import json, sys
def peak_mib():  # VmHWM: ru_maxrss also keeps the peak of the process that forked this one
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
from reliab.io.formats.flight_recorder import read_flight_recorder
res = read_flight_recorder(sys.argv[1])
reason = res.quarantine["reason"].iloc[0] if len(res.quarantine) else ""
print(json.dumps({"parsed": res.parsed, "malformed": res.malformed, "reason": reason,
                  "maxrss_mib": peak_mib()}))
"""
_BASELINE_MIB = 400  # interpreter + pandas + reliab import is ~150 MiB


def _load(path: Path, timeout: float = 60) -> dict:
    try:
        proc = subprocess.run([sys.executable, "-c", _LOAD, str(path)], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path.name} did not finish in {timeout} s")
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-500:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_dump_is_a_clean_error_row(tmp_path: Path, case: str) -> None:
    """Regression: deep tuple key -> SIGSEGV; 64-level DAG key -> hang; memo fan-out -> 1.1 GB."""
    path = tmp_path / f"nccl_trace_{case}_rank_0"
    path.write_bytes(CASES[case]())
    out = _load(path, timeout=30)
    assert (out["parsed"], out["malformed"]) == (0, 1)
    assert out["reason"].startswith("not a loadable flight-recorder pickle")
    assert out["maxrss_mib"] < _BASELINE_MIB


def test_str_and_int_keys_and_shared_strings_still_load(tmp_path: Path) -> None:
    """What real dumps hold: str keys, int keys, and (torch's pickler) memoised strings
    referenced again by BINGET -- 2,000 entries sharing their key strings."""
    entries = [dict(ENTRY, record_id=i) for i in range(2000)]
    keys = list(ENTRY)
    for e in entries:  # the same key objects in every entry: pickle writes BINGET for them
        for k in keys:
            e[k] = e.pop(k)
    data = {"version": "2.4", "pg_config": {0: {"name": "default_pg"}}, "entries": entries}
    path = tmp_path / "nccl_trace_rank_1"
    import pickle
    path.write_bytes(pickle.dumps(data, protocol=2))
    out = _load(path)
    assert (out["parsed"], out["malformed"]) == (2000, 0)


def test_scan_refuses_a_tuple_key_in_a_dict_opcode() -> None:
    from reliab.errors import ParseError
    from reliab.io.formats.flight_recorder import load_dump
    data = b"\x80\x02(" + _ops("entries") + b"]" + _ops((1, 2)) + b"Nd."
    with pytest.raises(ParseError, match="key"):
        load_dump(data)

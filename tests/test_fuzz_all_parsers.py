"""Every registered parser, fed arbitrary bytes through the driver: no crash, nothing lost.

The contract: whatever a file holds, ``ingest(path, source=name)`` returns a result whose
per-file accounting satisfies lines == parsed + irrelevant + malformed, or fails the whole
file with a reliab error naming it — never another exception.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ReliabError
from reliab.io import available_sources

SOURCES = list(available_sources()["name"])

#: a few real-looking lines so that fuzzing reaches past the first checks of each parser
SEEDS = [
    b"2024-06-03T14:02:11.123456+00:00 node0001 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n",
    b"JobID|State|Start|End\n1|FAILED|2024-06-01T00:00:00|2024-06-01T01:00:00\n",
    b"   1 | 06/03/2024 | 14:01:55 | Power Supply #0xfb | Power Supply AC lost | Asserted\n",
    b"time,host,gpu,temp_c\n2024-06-01T00:00:00Z,n1,0,40\n",
    b"ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,resolution\n",
    b"[rank0]:[E0603 14:02:11.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout\n",
    b"DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",Hostname=\"h\"} 31 1717400000000\n",
    b"\x80\x04\x95",
    b"PAR1",
    b"\x1f\x8b\x08\x00",
]


@pytest.mark.slow
@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=st.sampled_from(SEEDS), body=st.binary(max_size=300), tail=st.sampled_from([b"", b"\n", b"\x00"]))
def test_driver_survives_any_bytes(source: str, head: bytes, body: bytes, tail: bytes) -> None:
    """Fuzz: arbitrary bytes after a plausible first line, for every parser, through ingest()."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.log"
        path.write_bytes(head + body + tail)
        try:
            res = reliab.ingest(path, source=source)
        except ReliabError as exc:
            assert "input.log" in str(exc) or str(exc)
            return
        acc = res.accounting
        assert len(acc) == 1
        assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
        assert int(acc["malformed"].iloc[0]) == int((res.quarantine["path"] == str(path)).sum()) or \
            int(acc["malformed"].iloc[0]) >= len(res.quarantine)


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=st.sampled_from(SEEDS), body=st.binary(max_size=300), tail=st.sampled_from([b"", b"\n", b"\x00"]))
def test_driver_survives_some_bytes(source: str, head: bytes, body: bytes, tail: bytes) -> None:
    """The fuzz's default-tier sibling: the same contract on 4 examples per parser (the slow tier runs 40)."""
    test_driver_survives_any_bytes.hypothesis.inner_test(source, head, body, tail)

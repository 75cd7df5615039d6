"""Python exceptions ending a training job are software failures, under both policies.

The traceback is the real one of ``tests/reference/real_world/pytorch/
llamafactory-7222-rank-valueerror-traceback.log`` (hiyouga/LlamaFactory#7222); the other
message shapes are the last line Python's ``traceback`` module prints for each exception
type, with PyTorch's own texts where PyTorch raises it.  Expectations by hand.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.io.formats._nccl_messages import classify
from reliab.schema import conform
from reliab.taxonomy import job_outcomes

LOG = Path(__file__).parent / "reference" / "real_world" / "pytorch" / "llamafactory-7222-rank-valueerror-traceback.log"


@pytest.mark.parametrize(("msg", "key", "kind"), [
    ("ValueError: Caught ValueError in DataLoader worker process 0.", "python:exception", "ValueError"),
    ("KeyError: 'input_ids'", "python:exception", "KeyError"),
    ("AssertionError", "python:exception", "AssertionError"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "python:exception",
     "OutOfMemoryError"),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", "python:exception",
     "OutOfMemoryError"),
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", "python:exception", "RuntimeError"),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "python:exception", "RuntimeError"),
    # the GPU stack's own evidence stays what it was
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda:illegal_memory_access", None),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
     "unhandled system error, NCCL version 2.20.5", "nccl:error", None),
    ("RuntimeError: NCCL communicator was aborted on rank 3.", None, None),
    # a launcher's wrapper and a traceback frame are no exception of the program
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", None, None),
    ("    raise ValueError(", None, None),
])
def test_last_traceback_line(msg: str, key: str | None, kind: str | None) -> None:
    found = classify(msg)
    assert (found.signal if found else None) == key
    if kind is not None:
        assert found is not None and found.core == kind and kind in found.text


END = pd.Timestamp("2025-03-09T06:12:57Z")


def _sig(key: str, offset: str, host: str | None, message: str) -> dict:
    return {"time": END + pd.Timedelta(offset), "host": host, "gpu": None, "job_id": "4242" if host is None else None,
            "source": key.split(":")[0], "signal": key, "severity": "error", "message": message,
            "origin": f"log:{abs(hash(key)) % 1000}"}


def _attribute(signals: list[dict], policy: str) -> pd.DataFrame:
    job = {"job_id": "4242", "name": "sft", "user": "u", "partition": "p", "state": "FAILED",
           "state_raw": "FAILED", "submit": None, "start": END - pd.Timedelta("20s"), "end": END,
           "nnodes": 1, "ngpus": 2, "nodelist": "gpu01", "origin": "sacct:2"}
    s = conform(pd.DataFrame(signals), "signals")
    out = job_outcomes(s, conform(pd.DataFrame([job]), "jobs"), policy=policy)
    # fleet: a FAILED job without infrastructure evidence is a user failure, counted apart
    return out.user_failures if policy == "fleet" and out.interruptions.empty else out.interruptions


@pytest.mark.parametrize("policy", ["fleet", "training-run"])
def test_exception_alone_is_a_software_bug(policy: str) -> None:
    out = _attribute([_sig("python:exception", "-2s", None, "rank 1: ValueError: bad shape")], policy)
    assert len(out) == 1 and out.iloc[0]["category"] == "Software Bug"


@pytest.mark.parametrize("policy", ["fleet", "training-run"])
def test_hardware_evidence_in_the_window_wins(policy: str) -> None:
    out = _attribute([_sig("python:exception", "-2s", None, "rank 1: RuntimeError: shape"),
                      _sig("xid:79", "-5s", "gpu01", "GPU has fallen off the bus")], policy)
    assert len(out) == 1 and (out.iloc[0]["category"], out.iloc[0]["root_signal"]) == ("Faulty GPU", "xid:79")


SACCT = ("JobID|JobName|State|ExitCode|Start|End|NodeList\n"
         "4242|sft|FAILED|1:0|2025-03-09T06:12:37|2025-03-09T06:12:57|gpu01\n")


def _handover(root: Path) -> Path:
    (root / "sacct.txt").write_text(SACCT)
    out = root / "slurm-4242.out"
    shutil.copy(LOG, out)
    stamp = pd.Timestamp("2025-03-09T07:00:00Z").timestamp()  # the log's year: its mtime
    os.utime(out, (stamp, stamp))
    return root


def test_failed_job_with_a_traceback_is_a_user_software_failure_under_fleet(tmp_path: Path) -> None:
    res = reliab.ingest(_handover(tmp_path), policy="fleet")
    assert res.interruptions.empty
    assert res.user_failures["job_id"].tolist() == ["4242"]
    assert res.user_failures["category"].tolist() == ["Software Bug"]


def test_failed_job_with_a_traceback_is_a_software_interruption_of_the_run(tmp_path: Path) -> None:
    res = reliab.ingest(_handover(tmp_path), policy="training-run", job_name="sft")
    assert res.interruptions["job_id"].tolist() == ["4242"]
    row = res.interruptions.iloc[0]
    assert row["category"] == "Software Bug"
    assert "ValueError" in str(row.get("evidence", "")) + str(row.get("root_message", "")) or \
        "ValueError" in " ".join(res.signals["message"].astype(str))

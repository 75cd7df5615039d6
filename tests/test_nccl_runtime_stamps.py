"""Training logs behind a container runtime's own RFC 3339 stamp are sniffed as training logs.

``docker logs --timestamps`` and the CRI log files of Kubernetes (``/var/log/pods``,
``<RFC3339Nano> <stream> <F|P> <line>``) put the runtime's stamp before every line of a
job's output; the kernel sniffer reads the same stamp as RFC 3339 syslog.  What follows the
stamp decides: a PyTorch glog prefix, a rank prefix or NCCL's ``host:pid:tid [dev]``, never a
syslog host and tag.  TGI text: huggingface/text-generation-inference#1383 (corpus
``tgi-1383-…``); CRI text: sgl-project/sglang#8336; syslog: the kernel corpus.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reliab.io._readfile import choose_source
from reliab.io.formats._nccl_messages import runtime_stamped, split_line
from reliab.io.formats._nccl_sniff import score_lines
from reliab.io.formats.nccl import read_nccl

TGI = [
    "2023-12-28T13:17:07.318695558Z You are using a model of type llama to instantiate a model of type . This is"
    " not supported for all configurations of models and can yield errors.",
    "2023-12-28T13:17:07.318704498Z [E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=60000) ran for 69662 milliseconds before timing out.",
    "2023-12-28T13:17:07.318723495Z [E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out."
    " Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete"
    " data.",
]
SYSLOG = "2025-01-02T15:20:12+0800 jmsph-pro-a800-77-123 kernel: docker0: port 1(vetha17b2cc) entered disabled state"
CRI_OWN_DATE = ("2025-07-25T07:53:08.21748708+08:00 stdout F [2025-07-25 07:53:08 TP2] Scheduler hit an exception:"
                " Traceback (most recent call last):")


def _stamped(line: str) -> bool:
    return runtime_stamped(line, split_line(line))


def test_runtime_stamp_before_training_records() -> None:
    assert not _stamped(TGI[0]) and _stamped(TGI[1])
    assert _stamped("2024-12-04T07:19:46.483Z algo-1:18564:18638 [2] NCCL INFO P2P Chunksize set to 131072")
    assert _stamped("2025-07-25T07:53:08.21748708+08:00 stderr F [rank3]:[E725 07:53:08.217 ProcessGroupNCCL.cpp:629]"
                    " [Rank 3] Watchdog caught collective operation timeout")


def test_syslog_and_other_stamps_are_not_runtime_records() -> None:
    assert not _stamped(SYSLOG)
    assert not _stamped("2024-06-26T06:24:44.903881+00:00 node-1 python[1234]: node-1:1234:5678 [0] NCCL INFO Init")
    assert not _stamped("2024-06-03 14:00:00,123 [E ProcessGroupNCCL.cpp:828] no T, no zone: the job's own logging")
    assert not _stamped(CRI_OWN_DATE)  # the process's own dated logging: not decided by this rule


def test_cri_line_with_a_failure_marker(tmp_path: Path) -> None:
    # the CRI stream and tag, then the job's own output: its exception line (real-shaped: the
    # stamp of sglang#8336's excerpt, the exception text PyTorch prints)
    error = "2025-07-25T07:53:08.217512345+08:00 stdout F RuntimeError: CUDA error: an illegal memory access was encountered"
    assert runtime_stamped(error, split_line(error), ("CUDA error: ",))
    assert not runtime_stamped(SYSLOG + " CUDA error: x", split_line(SYSLOG + " CUDA error: x"), ("CUDA error: ",))
    path = tmp_path / "sglang-0_scheduler.log"
    path.write_text(CRI_OWN_DATE + "\n" + error + "\n")
    assert choose_source(path).source == "nccl"
    sig = read_nccl(str(path)).tables["signals"]
    assert sig["signal"].tolist() == ["cuda:illegal_memory_access"]
    assert sig["time"].tolist() == [pd.Timestamp("2025-07-24 23:53:08.217512345", tz="UTC")]


def test_tgi_file_is_sniffed_and_read_as_a_training_log(tmp_path: Path) -> None:
    path = tmp_path / "tgi-shard.log"
    path.write_text("\n".join(TGI) + "\n")
    assert score_lines(TGI) == 0.9
    assert choose_source(path).source == "nccl"
    sig = read_nccl(str(path)).tables["signals"]
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout"]
    assert sig["time"].tolist() == [pd.Timestamp("2023-12-28 13:17:07.318704498", tz="UTC")]


def test_kernel_syslog_keeps_its_reader(tmp_path: Path) -> None:
    path = tmp_path / "syslog"
    path.write_text(SYSLOG + "\n" + SYSLOG + "\n")
    assert choose_source(path).source == "kernel"

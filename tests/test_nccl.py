"""Training-log parser: ProcessGroupNCCL watchdog lines, CUDA errors, glog years, fuzzing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io.formats._timestamps import resolve_tz
from reliab.io.formats.nccl import job_from_path, parse_nccl_line, read_nccl, sniff_nccl

# glog lines of a real 2-rank capture (PyTorch 2.x, DeepSpeed job; message built in
# torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp), around job log lines and a traceback
LOG = """\
2024-12-18 20:00:00,123 INFO step 100 loss 2.31
[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.
[rank1]:[E1218 20:27:21.484903450 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 547, last completed work: -1
[rank1]:[E1218 20:27:21.484941868 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled.
[rank0]:[E1218 20:27:21.486305774 ProcessGroupNCCL.cpp:1895] [PG ID 1 PG GUID 1 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(...) ran for 600081 milliseconds before timing out.
terminate called after throwing an instance of 'c10::DistBackendError'
Traceback (most recent call last):
  File "train.py", line 10, in <module>
    loss.backward()
RuntimeError: CUDA error: an illegal memory access was encountered
[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered
[rank2]: RuntimeError: CUDA error: out of memory
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def test_watchdog_and_cuda_signals(tmp_path: Path) -> None:
    res = read_nccl(_write(tmp_path, "slurm-4242.out", LOG))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (12, 5, 7, 0)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout", "nccl:failure_detected",
                                      "cuda:illegal_memory_access", "cuda:uncorrectable_ecc", "cuda:error"]
    assert sig["time"].tolist() == [_ts("2024-12-18 20:27:21.426415540"), _ts("2024-12-18 20:27:21.484903450"),
                                    *[_ts("2024-12-18 20:27:21.486305774")] * 3]
    assert sig["message"].iloc[0] == (
        "rank 0: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST,"
        " NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds")
    assert sig["message"].iloc[1] == "rank 1: failure detected by watchdog at work sequence id: 1"
    assert sig["message"].iloc[3] == "rank 3: CUDA error: uncorrectable ECC error encountered"
    assert set(sig["job_id"]) == {"4242"}
    assert sig["host"].isna().all() and sig["gpu"].isna().all()
    assert sig["severity"].tolist() == ["error", "error", "error", "critical", "error"]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["2", "3", "10", "11", "12"]


def test_plain_glog_form_and_job_option(tmp_path: Path) -> None:
    text = ("2024-06-03 14:00:00,000 INFO start\n"
            "E0603 14:02:11.426415 12345 ProcessGroupNCCL.cpp:629] [Rank 7] Watchdog caught collective"
            " operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,"
            " Timeout(ms)=600000) ran for 600500 milliseconds before timing out.\n")
    res = read_nccl(_write(tmp_path, "train.log", text), job_id="77")
    row = res.tables["signals"].iloc[0]
    assert row["time"] == _ts("2024-06-03 14:02:11.426415")
    assert row["job_id"] == "77" and row["message"].startswith("rank 7: ")


def test_glog_year_sources(tmp_path: Path) -> None:
    glog = "[rank0]:[E0101 00:00:05.000000000 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1) ran for 5 milliseconds\n"
    # rollover: ISO Dec 31 then glog Jan 1 -> next year
    res = read_nccl(_write(tmp_path, "slurm-1.out", "2023-12-31 23:59:59,000 INFO x\n" + glog))
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-01-01 00:00:05")
    # the file's first ISO line when none precedes
    res = read_nccl(_write(tmp_path, "slurm-2.out", glog + "2024-01-01 00:01:00,000 INFO x\n"))
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-01-01 00:00:05")
    # year= option; else the file's modification time, said in the notes
    path = _write(tmp_path, "slurm-3.out", glog)
    assert read_nccl(path, year=2025).tables["signals"]["time"].iloc[0] == _ts("2025-01-01 00:00:05")
    stamp = _ts("2025-03-02 10:00:00").timestamp()
    os.utime(path, (stamp, stamp))
    res = read_nccl(path)
    assert (res.parsed, res.malformed) == (1, 0)
    assert res.tables["signals"]["time"].iloc[0] == _ts("2025-01-01 00:00:05")
    assert "inferred from the file's modification time" in res.notes[0] and "lines 1" in res.notes[0]
    stamp = _ts("2025-12-31 23:00:00").timestamp()  # a glog date later in the calendar: last year
    path = _write(tmp_path, "slurm-4.out", glog.replace("E0101", "E1231"))
    os.utime(path, (_ts("2026-01-02").timestamp(),) * 2)
    assert read_nccl(path).tables["signals"]["time"].iloc[0] == _ts("2025-12-31 00:00:05")


def test_untimed_lines_take_the_nearest_time_else_the_mtime(tmp_path: Path) -> None:
    """Before any dated line: the first time after it; with none at all: the file's mtime."""
    text = ("RuntimeError: CUDA error: misaligned address\n"
            "2024-06-03 14:00:00,000 INFO x\n")
    res = read_nccl(_write(tmp_path, "slurm-5.out", text))
    assert res.tables["signals"]["time"].tolist() == [_ts("2024-06-03 14:00:00")] and not res.notes
    path = _write(tmp_path, "slurm-6.out", "RuntimeError: CUDA error: misaligned address\n")
    os.utime(path, (_ts("2024-07-01 08:00:00").timestamp(),) * 2)
    res = read_nccl(path)
    assert (res.parsed, res.malformed) == (1, 0)
    assert res.tables["signals"]["time"].tolist() == [_ts("2024-07-01 08:00:00")]
    assert "inferred from the file's modification time" in res.notes[0]


def test_time_zone_option(tmp_path: Path) -> None:
    text = "2024-06-03 16:00:00,000 INFO x\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    res = read_nccl(_write(tmp_path, "slurm-7.out", text), tz="Europe/Berlin")
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-06-03 14:00:00")


def test_job_and_sniff() -> None:
    assert job_from_path("train/slurm-123456.out") == "123456"
    assert job_from_path("x.log") is None
    assert sniff_nccl("slurm-1.out", []) == 0.9
    assert sniff_nccl("a.txt", ["[rank0]:[E1218 20:27:21.4 ProcessGroupNCCL.cpp:629] x"]) == 0.8
    assert sniff_nccl("a.txt", ["hello"]) == 0.0


LOGISH = st.sampled_from([
    "[rank0]:", "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] ", "Watchdog caught collective operation timeout: ",
    "WorkNCCL(SeqNum=1, Timeout(ms)=6) ran for 5 milliseconds", "failure detected by watchdog at work sequence id: ",
    "CUDA error: ", "2024-12-18 20:00:00,123 ", "\n", "RuntimeError: ", "[Rank 3]", "E0230 ", "9999-99-99 99:99:99 ",
    "[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] ", "[E ProcessGroupNCCL.cpp:737] ", "  what():  ",
    "(RayTrainWorker pid=1, ip=10.0.0.1) ", "0: ", "[1,0]<stderr>:", "192.168.1.2: ", "[80746] ",
    "Timeout at NCCL work: 5", "h:1:2 [0] NCCL WARN Cuda failure 1 'x'", "NCCL error in: a.cpp:1, bad",
    "cuda runtime error (39) : y", "THCudaCheck FAIL file=a line=1 error=6 : z", "E9999 ", "[E1399 99:99:99.1 a:1] ",
])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOGISH, st.text(max_size=10)), max_size=12).map("".join))
def test_fuzz_parse_line_text(text: str) -> None:
    ctx = LineContext(path="f", source="nccl", state={"tz": resolve_tz(None), "job_id": None})
    for line in text.split("\n"):
        try:
            parse_nccl_line(line, ctx)
        except ParseError:
            pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOGISH.map(str.encode), st.binary(max_size=16)), max_size=20).map(b"".join),
       st.sampled_from([None, 2024]))
def test_fuzz_read_nccl_bytes(data: bytes, year: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "slurm-9.out")
        with open(path, "wb") as fh:
            fh.write(data)
        res = read_nccl(path, year=year)
    assert res.lines == res.parsed + res.irrelevant + res.malformed
    assert len(res.quarantine) == res.malformed


# --- shapes of real hand-overs (real-shaped: each names the thread whose lines it follows;
#     the verbatim excerpts are scored in tests/test_real_world.py)

def _signals(tmp_path: Path, name: str, text: str, **options) -> tuple:
    res = read_nccl(_write(tmp_path, name, text), **options)
    assert res.lines == res.parsed + res.irrelevant + res.malformed
    sig = res.tables["signals"]
    return res, sig, [int(o.rsplit(":", 1)[1]) for o in sig["origin"]]


def test_unpadded_glog_month_and_year_from_a_dated_line(tmp_path: Path) -> None:
    """Real-shaped (XPixelGroup/BasicSR#737, c10 Logging.cpp prints the month unpadded):
    'E626' is June 26, 'E1206' December 6; the year comes from a dated line of the file."""
    text = (" [2025-06-26 06:20:00] iteration 48/50 | lm loss: 8.3E-02 |\n"
            "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective"
            " operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,"
            " Timeout(ms)=600000) ran for 600020 milliseconds before timing out\n"
            "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective"
            " operation timeout: WorkNCCL(SeqNum=7753) ran for 600061 milliseconds b\n")
    res, sig, lines = _signals(tmp_path, "train.log", text)
    assert sig["time"].tolist() == [_ts("2025-06-26 06:24:44.903881913"), _ts("2025-12-06 18:44:12.715298746")]
    assert lines == [2, 3] and not res.notes


@pytest.mark.parametrize(("prefix", "rank", "host"), [
    ("[rank3]:", "3", None),  # PyTorch
    ("[default3]:", None, None),  # torchrun --tee
    ("3: [rank3]:", "3", None),  # srun --label
    ("[1,3]<stderr>:", None, None),  # mpirun --tag-output
    ("(RayTrainWorker pid=1234, ip=10.164.227.153) [rank3]:", "3", "10.164.227.153"),  # Ray
    ("\x1b[36m(RayWorkerWrapper pid=4009)\x1b[0m [rank3]:", "3", None),  # Ray, coloured
    ("192.168.13.81: [rank3]:", "3", "192.168.13.81"),  # pdsh (DeepSpeed launcher)
    ("[80746] [rank3]:", "3", None),  # a log viewer's line number
    ("(WorkerDict pid=1230, ip=train-4-worker-0) [rank3]:", "3", "train-4-worker-0"),  # Ray, pod name
    ("vllm-2-1  | ESC[36m(RayWorkerWrapper pid=14390)ESC[0m [rank3]:", "3", None),  # compose, ESC as text
    ("dinov2-giant-nodes.cn-d004 [stderr] [rank3]:", "3", None),  # milabench's collector
])
def test_launcher_prefixes(tmp_path: Path, prefix: str, rank: str | None, host: str | None) -> None:
    line = (f"{prefix}[E1225 12:58:32.712922209 ProcessGroupNCCL.cpp:616] Watchdog caught collective operation"
            " timeout: WorkNCCL(SeqNum=17284, OpType=_ALLGATHER_BASE) ran for 600052 milliseconds\n")
    _, sig, _ = _signals(tmp_path, "slurm-9.out", "2024-12-25 12:00:00,000 INFO start\n" + line)
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout"]
    assert sig["time"].iloc[0] == _ts("2024-12-25 12:58:32.712922209")
    assert (sig["host"].iloc[0] == host) if host else pd.isna(sig["host"].iloc[0])
    assert sig["message"].iloc[0].startswith(f"rank {rank}: " if rank else "Watchdog caught")


def test_a_collectors_stamp_dates_the_glog_time_it_precedes(tmp_path: Path) -> None:
    """Real-shaped (volcengine/verl#1309: Ray output kept by a collector that stamps every line):
    '[2025-05-10 00:18:21] (WorkerDict pid=…, ip=<pod>) [rank15]:[E510 00:18:19.328151517 …]' is
    the glog record of 00:18:19.328151517 on the collector's date, not an event at 00:18:21; a
    job's own '[date] [INFO] …' line keeps its stamp as its time."""
    text = ("[2025-05-10 00:18:21] (WorkerDict pid=1230, ip=train-1-worker-0) [rank15]:[E510 00:18:19.328151517"
            " ProcessGroupNCCL.cpp:2168] [PG ID 4 PG GUID 20(mesh_tp) Rank 1]  failure detected by watchdog at"
            " work sequence id: 3 PG status: last enqueued work: 3, last completed work: 2\n"
            "[2025-05-10 00:19:02] [INFO] step 4\n"
            "[2025-05-10 00:19:05] (WorkerDict pid=1230, ip=train-1-worker-0) CUDA error: an illegal memory"
            " access was encountered\n")
    _, sig, lines = _signals(tmp_path, "ray-job.log", text)
    assert sig["signal"].tolist() == ["nccl:failure_detected", "cuda:illegal_memory_access"] and lines == [1, 3]
    assert sig["time"].tolist() == [_ts("2025-05-10 00:18:19.328151517"), _ts("2025-05-10 00:19:05")]
    assert sig["host"].tolist() == ["train-1-worker-0"] * 2


def test_a_wrapped_record_that_already_gave_a_row_is_read_whole(tmp_path: Path) -> None:
    """Real-shaped (vllm-project/vllm#5537: the terminal cut 'an illegal me' / 'mory access was
    encountered'): one row at the record's first line, classified on the whole text; a later
    what() restating it is a repeat of that row, not a second event."""
    prefix = "vllm-2-1  | ESC[36m(RayWorkerWrapper pid=14390)ESC[0m "
    text = (f"{prefix}[rank1]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 1] Process group watchdog thread"
            " terminated with exception: CUDA error: an illegal me\n"
            "mory access was encountered\n"
            f"{prefix}CUDA kernel errors might be asynchronously reported at some other API call.\n"
            f"{prefix}[rank1]:  what():  [PG 2 Rank 1] Process group watchdog thread terminated with exception:"
            " CUDA error: an illegal memory access was encountered\n")
    path = _write(tmp_path, "compose.log", text)
    os.utime(path, (_ts("2024-06-12 00:00:00").timestamp(),) * 2)
    sig = read_nccl(path).tables["signals"]
    assert sig["signal"].tolist() == ["cuda:illegal_memory_access"]
    assert sig["message"].iloc[0] == "rank 1: CUDA error: an illegal memory access was encountered"
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["1"]


def test_a_wrapped_record_whose_space_was_lost_at_the_cut(tmp_path: Path) -> None:
    """Real-shaped (mila-iqia/milabench#269): '… detected' / 'by watchdog at work: 2070' reads as
    the detection once the space the copy dropped at the cut is put back."""
    text = ("bench.cn-d004 [stderr] [rank12]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg)"
            " Rank 12] Exception (either an error or timeout) detected\n"
            "by watchdog at work: 2070, last enqueued NCCL work: 2070, last completed NCCL work: 2069.\n")
    _, sig, lines = _signals(tmp_path, "slurm-5.out", "2024-09-09 09:00:00,000 INFO start\n" + text)
    assert sig["signal"].tolist() == ["nccl:failure_detected"] and lines == [2]
    assert sig["time"].tolist() == [_ts("2024-09-09 09:55:29.313379098")]


@pytest.mark.parametrize("line", [
    "[default3]:python: src/psm2_nccl_net.c:756: mq_progress_loop: Assertion `r->used' failed.",
    "[default0]:ep 55 train, step 1347, ce 0.324, grad_norm:p2 3.388, num_seqs 27",
    "[rank0]: Traceback follows",
])
def test_torch_rank_prefixes_make_a_training_log(line: str) -> None:
    """torchrun's '[defaultN]:' and c10's '[rankN]:' prefixes are PyTorch's alone (pytorch/pytorch#75087,
    rwth-i6/i6_core#658): a file of such lines is a training log even with no failure in it."""
    assert sniff_nccl("job.log", [line] * 4) >= 0.5


def test_old_undated_glog_and_detection_wordings(tmp_path: Path) -> None:
    """Real-shaped (OFA-Sys/OFA#271 '[E ProcessGroupNCCL.cpp:737]'; vllm-project/vllm#6042
    'Timeout at NCCL work'; PyTorch 2.4+ 'Exception (either an error or timeout) detected by
    watchdog at work'): untimed lines take the last stamp, then the first after, then the mtime."""
    text = ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout:"
            " WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds\n"
            "[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 1] Timeout at NCCL work: 158046, last enqueued NCCL"
            " work: 158046, last completed NCCL work: 158045.\n"
            "[rank1]:[E206 16:45:19.244433255 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1]"
            " Exception (either an error or timeout) detected by watchdog at work: 5919, last enqueued N\n"
            "[rank1]:[E206 16:45:19.244459862 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1]"
            " Timeout at NCCL work: 5919, last enqueued NCCL work: 5921, last completed NCCL work: 5918.\n")
    path = _write(tmp_path, "slurm-10.out", text)
    os.utime(path, (_ts("2025-03-01 00:00:00").timestamp(),) * 2)
    res = read_nccl(path)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout", "nccl:failure_detected", "nccl:failure_detected"]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["1", "2", "3"]  # line 4 restates line 3
    assert sig["time"].tolist()[:2] == [_ts("2025-02-06 16:45:19.244433255")] * 2  # the first time after
    assert "inferred from the file's modification time" in res.notes[0]


def test_each_failure_counts_once_per_rank(tmp_path: Path) -> None:
    """Real-shaped (picotron#6, sglang#1693, horovod#1838, kohya-ss/sd-scripts#1434): the
    watchdog's exit message and the what() restate a timeout; a what() restates a CUDA error;
    a Python traceback and the watchdog thread stating the same CUDA error are two events."""
    text = ("[E ProcessGroupNCCL.cpp:915] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog"
            " caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 120822 milli\n"
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective"
            " operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 120822 milliseconds\n"
            "[1,1]<stderr>:THCudaCheck FAIL file=horovod/torch/ready_event.cc line=94 error=600 : device not ready\n"
            "[1,1]<stderr>:  what():  [1,1]<stderr>:cuda runtime error (600) : device not ready at x.cc:94\n"
            "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
            "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error:"
            " uncorrectable ECC error encountered\n")
    _, sig, lines = _signals(tmp_path, "slurm-11.out", "2024-01-01 00:00:00,000 INFO x\n" + text)
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout", "cuda:error", "cuda:uncorrectable_ecc",
                                      "cuda:uncorrectable_ecc"]
    assert lines == [2, 5, 7, 8]


def test_nccl_library_lines_name_host_and_device(tmp_path: Path) -> None:
    """Real-shaped (NVIDIA/nccl#1283, #1405, #1410): NCCL WARN lines name host and device; the
    continuation lines of a raised NCCL error are not events."""
    text = ("(train_rft pid=2657296) 2024-05-11 14:10:52.224 n176-080-198:2657296:2658229 [0] NCCL INFO Connected"
            " all rings\n"
            "(train_rft pid=2657296) 2024-05-11 14:10:52.227 n176-080-198:2657296:2658232 [0] include/alloc.h:102"
            " NCCL WARN Cuda failure 1 'invalid argument'\n"
            "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer"
            " 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
            "kp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\n"
            "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp"
            ":275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
            "[rank7]: Last error:\n[rank7]: Cuda failure 1 'invalid argument'\n")
    _, sig, lines = _signals(tmp_path, "slurm-12.out", text)
    assert sig[["signal", "host", "gpu"]].astype(object).where(sig[["signal", "host", "gpu"]].notna(), None) \
        .values.tolist() == [["nccl:cuda_failure", "n176-080-198", "0"],
                             ["nccl:net_error", "kp-ddp-worker-0", "4"], ["nccl:error", None, None]]
    assert lines == [2, 3, 5]


def test_terminal_wrapped_record_is_one_event_at_its_start(tmp_path: Path) -> None:
    """Real-shaped (huggingface/open-r1#620, copied from a terminal that wrapped at 137 columns)."""
    first = ("[rank2]:[E424 01:17:25.031978332 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 2]"
             " Process group watchdog thread terminat")
    text = (f"2025-04-24 01:00:00,000 INFO x\n{first}\n"
            "ed with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=B\n"
            " Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.\n")
    _, sig, lines = _signals(tmp_path, "slurm-13.out", text)
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout"] and lines == [2]
    assert sig["time"].iloc[0] == _ts("2025-04-24 01:17:25.031978332")


@pytest.mark.parametrize("lines", [
    [" iteration      122/  250000 | consumed samples:       124928 | elapsed time per iteration (ms): 86545.2"
     " | learning rate: 9.150E-06 | lm loss: 2.504220E+00 |"],  # Megatron (epfLLM/Megatron-LLM#11)
    ["{'loss': 0.2411, 'grad_norm': 0.306, 'learning_rate': 9.8e-06, 'epoch': 0.4}"] * 3,  # HF Trainer
    ["Epoch 0:   6%|##   | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc]"],  # Lightning
])
def test_clean_training_log_is_a_training_log_without_events(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "train-stdout.log"
    path.write_text("\n".join(lines) + "\n")
    res = reliab.ingest(path)
    assert res.sources[str(path)].source == "nccl"
    assert len(res.signals) == 0 and int(res.accounting["irrelevant"].iloc[0]) == len(lines)

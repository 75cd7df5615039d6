"""Training logs: vLLM worker prefixes, Python logging month-day stamps, vLLM's raised NCCL error.

Lines are the real text of the holdout corpus (``tests/reference/real_world/pytorch/``) and of
the vLLM threads named beside them; vLLM's stamp is ``%(levelname)s %(asctime)s
[%(fileinfo)s:%(lineno)d]`` with ``%m-%d %H:%M:%S`` (``vllm/logger.py``), a trainer's is
``%m/%d %H:%M:%S`` (``detectron2/utils/logger.py``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reliab.io.formats._nccl_messages import classify, month_day_stamp, split_line
from reliab.io.formats._nccl_sniff import score_lines
from reliab.io.formats.nccl import read_nccl

# vllm-project/vllm#17756 (corpus: vllm-17756-…), vllm#27405 (corpus), vllm#9308, vllm#7057
V0_WORKER = ("(VllmWorker rank=6 pid=409) ERROR 07-23 19:34:51 [multiproc_executor.py:487] RuntimeError:"
             " NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)")
V1_WORKER = ("(Worker_TP0 pid=43609) ERROR 10-23 09:29:40 [multiproc_executor.py:671] torch.AcceleratorError:"
             " CUDA error: the provided PTX was compiled with an unsupported toolchain.")
OLD_FORMAT = "(VllmWorkerProcess pid=52526) INFO 10-12 13:49:42 multiproc_worker_utils.py:215] Worker ready; awaiting tasks"
RAY_IP = ("(RayWorkerWrapper pid=4329, ip=192.168.200.191) ERROR 08-02 01:57:45 worker_base.py:382]"
          "     return fn(*args, **kwargs)")
# yewzijian/RegTR#33 (corpus: regtr-33-…)
SLASH = ("06/26 18:54:31 [ERROR] trainer - <class 'RuntimeError'> at trainer.py:101 - CUDA error: an illegal"
         " memory access was encountered")


def test_vllm_worker_prefixes_are_peeled_and_name_the_rank() -> None:
    part = split_line(V0_WORKER)
    assert (part.rank, part.glog, part.month_day) == ("6", (7, 23, 19, 34, 51, 0), True)
    assert part.body.startswith("RuntimeError: NCCL error: unhandled cuda error")
    part = split_line(V1_WORKER)
    assert (part.rank, part.glog) == (None, (10, 23, 9, 29, 40, 0))
    assert part.body.startswith("torch.AcceleratorError: CUDA error:")


def test_old_vllm_format_without_bracket_and_ray_ip() -> None:
    part = split_line(OLD_FORMAT)
    assert (part.glog, part.body) == ((10, 12, 13, 49, 42, 0), "Worker ready; awaiting tasks")
    part = split_line(RAY_IP)
    assert (part.host, part.glog) == ("192.168.200.191", (8, 2, 1, 57, 45, 0))


def test_slash_month_day_stamps() -> None:
    assert month_day_stamp(SLASH) == ((6, 26, 18, 54, 31, 0), SLASH[15:])
    stamp, msg = month_day_stamp("[06/26 18:54:31 d2.engine.train_loop]: Starting training from iteration 0")
    assert (stamp, msg) == ((6, 26, 18, 54, 31, 0), "d2.engine.train_loop]: Starting training from iteration 0")
    assert month_day_stamp("26/06 18:54:31 [ERROR] trainer - x") is None  # day first: no month 26
    assert month_day_stamp("06/26/2025 18:54:31 [ERROR] trainer - x") is None
    assert month_day_stamp("10/50 00:12:34 tqdm-like") is None
    assert month_day_stamp("INFO 13-01 00:00:00 [x.py:1] no month 13") is None


def test_vllm_pynccl_error_is_a_raised_nccl_error_its_source_line_is_not() -> None:
    found = classify("RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)")
    assert found is not None and found.signal == "nccl:error"
    assert found.text == "NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    assert classify('    raise RuntimeError(f"NCCL error: {error_str}")') is None


def test_month_day_lines_take_the_year_of_the_dated_line(tmp_path: Path) -> None:
    path = tmp_path / "job.log"
    path.write_text("2024-08-02 01:50:00,000 INFO launch\n" + RAY_IP + "\n"
                    "(RayWorkerWrapper pid=4329, ip=192.168.200.191) ERROR 08-02 01:57:45 worker_base.py:382]"
                    " RuntimeError: CUDA error: an illegal memory access was encountered\n"
                    + V0_WORKER + "\n")
    sig = read_nccl(str(path)).tables["signals"]
    assert sig["signal"].tolist() == ["cuda:illegal_memory_access", "nccl:error"]
    assert sig["time"].tolist() == [pd.Timestamp("2024-08-02 01:57:45", tz="UTC"),
                                    pd.Timestamp("2024-07-23 19:34:51", tz="UTC")]
    assert sig["host"].tolist()[0] == "192.168.200.191"


def test_year_option_and_no_dated_line(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text(V1_WORKER + "\n" + SLASH + "\n")
    res = read_nccl(str(path), year=2025)
    assert res.tables["signals"]["time"].tolist() == [pd.Timestamp("2025-10-23 09:29:40", tz="UTC"),
                                                      pd.Timestamp("2025-06-26 18:54:31", tz="UTC")]
    assert res.tables["signals"]["signal"].tolist() == ["cuda:error", "cuda:illegal_memory_access"]


def test_month_day_stamp_alone_is_not_glog_for_the_sniffer() -> None:
    assert score_lines([OLD_FORMAT]) < 0.8


def test_caret_notation_colour_codes_around_a_vllm_worker_prefix() -> None:
    # vllm-project/vllm#22746: the worker prefix coloured, escape bytes pasted as '^['
    line = ("^[[1;36m(VllmWorker rank=0 pid=13543)^[[0;0m INFO 08-12 08:45:18 [custom_all_reduce.py:196]"
            " Registering 8643 cuda graph addresses")
    part = split_line(line)
    assert (part.rank, part.glog, part.body) == ("0", (8, 12, 8, 45, 18, 0), "Registering 8643 cuda graph addresses")

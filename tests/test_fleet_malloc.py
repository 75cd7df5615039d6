"""On a Dask worker (started with ``MALLOC_TRIM_THRESHOLD_``, which turns off glibc's dynamic
mmap threshold) each array above 128 KiB is a fresh mapping: page faults on every first
touch.  The fleet reduction raises the mmap threshold for its process; then a loop of
short-lived 1 MiB arrays reuses heap memory instead of faulting each page in again (by the
page-fault count of the process, not by time)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = """
import resource
import numpy as np
from reliab.fleet._chunk import heap_for_arrays

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    alive = []  # a few arrays live at once, as in a computation
    for _ in range(100):
        alive.append(np.ones(2**17))  # 1 MiB, written: every page touched
        if len(alive) > 3:
            alive.pop(0)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

plain = faults()
print(plain, heap_for_arrays(), faults())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_short_lived_arrays_stop_faulting_once_the_threshold_is_raised() -> None:
    env = {"MALLOC_TRIM_THRESHOLD_": "65536", "PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True)
    plain, raised, after = out.stdout.split()
    assert raised == "True"
    assert int(plain) > 100 * 200  # 256 pages a MiB, each faulted in again
    assert int(after) < int(plain) // 2


ALONE = """
import resource
import numpy as np
from reliab.fleet._chunk import heap_for_arrays

heap_for_arrays()
np.ones(2**17)  # the heap grows once
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(100):
    np.ones(2**17)  # 1 MiB, written, freed at once: the top of the heap each time
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
@pytest.mark.parametrize("trim", [None, "65536"])
def test_an_array_freed_at_the_top_of_the_heap_is_not_given_back(trim: str | None) -> None:
    """With a fixed mmap threshold glibc's trim threshold stays at 128 KiB (mallopt(3)): each
    1 MiB array freed at the top of the heap is returned to the system and faulted in again
    by the next one (256 pages each); the reduction raises the trim threshold with it."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    if trim:
        env["MALLOC_TRIM_THRESHOLD_"] = trim
    out = subprocess.run([sys.executable, "-c", ALONE], capture_output=True, text=True, env=env, check=True)
    assert int(out.stdout) < 100 * 256 // 10

"""The heap of a process that reduces telemetry: short-lived arrays served from it, not mapped.

The reduction makes many arrays of a few MiB that live for a few numpy passes.  glibc serves
an allocation above its mmap threshold with a fresh mapping, unmapped when freed, and gives
the top of the heap back to the system once more than its trim threshold is free there
(mallopt(3)); either way the next array's pages are faulted in again.
"""

from __future__ import annotations

import functools
import os
import sys

__all__ = ["MMAP_THRESHOLD", "heap_for_arrays"]

#: arrays up to this size come from the heap (glibc's default is 128 KiB, or dynamic)
MMAP_THRESHOLD = 32 * 2**20


@functools.cache
def heap_for_arrays() -> bool:
    """Serve this process's arrays of up to :data:`MMAP_THRESHOLD` from the heap (glibc).

    Dask starts its workers with ``MALLOC_TRIM_THRESHOLD_`` set, and setting any malloc
    threshold turns glibc's dynamic mmap threshold off (mallopt(3)), so every array above
    128 KiB is mapped afresh and unmapped when freed: each of the reduction's many
    short-lived arrays faults its pages in again (the reduction ran 1.9x slower so).  The
    trim threshold is raised with it (to twice the mmap threshold: up to 64 MiB of freed
    heap kept per process), else each array freed at the top of the heap is given back.  Left
    alone when ``MALLOC_MMAP_THRESHOLD_`` is set or the C library has no ``mallopt``.
    Returns whether the threshold was set.
    """
    import ctypes

    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    if not mallopt(ctypes.c_int(-3), ctypes.c_int(MMAP_THRESHOLD)):  # -3: M_MMAP_THRESHOLD
        return False
    # a fixed mmap threshold leaves the trim threshold at 128 KiB (or Dask's): every array
    # freed at the top of the heap would be given back and faulted in again; twice the mmap
    # threshold, as glibc's dynamic rule sets it
    return bool(mallopt(ctypes.c_int(-1), ctypes.c_int(2 * MMAP_THRESHOLD)))  # -1: M_TRIM_THRESHOLD

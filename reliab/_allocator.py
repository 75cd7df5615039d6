"""polars' allocator setting: freed memory goes back to the system after 100 ms.

polars' Linux wheels allocate with a bundled jemalloc, which reads ``_RJEM_MALLOC_CONF`` once,
when the library first allocates (at ``import polars``, which itself puts its defaults
``dirty_decay_ms:500,muzzy_decay_ms:1000`` in front of any value already set; options are
read left to right and the last one wins: jemalloc manual, "TUNING" and ``opt.*``,
https://jemalloc.net/jemalloc.3.html).  With those defaults the pages a large kernel log's
parse has freed are still held while the tables are validated and attributed, and a 5M-line
log peaks at 400–450 MiB; with :data:`ALLOCATOR_ENV` it peaks at ~360 MiB at the same speed
(``benchmarks/bench_ingest_kernel.py``).

:func:`configure` sets the variable when ``reliab`` is imported, only if it is not set
already (the user's own value wins, even one equal to polars' defaults) and polars is not
loaded yet (then its allocator has already read its options, and a value set now would only
reach child processes).
"""

from __future__ import annotations

import os
import sys

#: jemalloc ``opt.dirty_decay_ms`` and ``opt.muzzy_decay_ms`` for polars' allocator
ALLOCATOR_ENV = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:100,muzzy_decay_ms:0")


def configure() -> bool:
    """Set :data:`ALLOCATOR_ENV` for polars if the user has not and polars is not loaded yet.

    Returns
    -------
    bool
        Whether the setting was made (``False``: the variable was set, or polars was already
        imported and keeps the options it started with).
    """
    name, value = ALLOCATOR_ENV
    if name in os.environ or "polars" in sys.modules:
        return False
    os.environ[name] = value
    return True


def release_freed() -> bool:
    """Give the memory the allocators keep after frees back to the system, where that is possible.

    Arrow's default pool returns its unused cached pages (``MemoryPool.release_unused``, Apache
    Arrow C++ ``memory_pool.h``), and glibc's ``malloc_trim(0)`` releases the free memory at the
    top of the heap and in the middle of its arenas (malloc_trim(3); Python's small-object
    arenas and large blocks freed by a per-line reader end up there).  A no-op where pyarrow is
    not loaded or the C library has no ``malloc_trim`` (musl, macOS, Windows).

    Returns
    -------
    bool
        Whether glibc's heap was trimmed.
    """
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return bool(trim(0))

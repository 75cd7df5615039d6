"""Sums, extremes and counts over consecutive segments of an array, without ``reduceat`` when
the segments are short.

Telemetry reduced to windows cuts a sorted array into many short segments: a series'
samples in one hour (4 at a 15-minute interval, 60 at a minute), a host's GPUs in one
window (8).  ``np.ufunc.reduceat`` pays a fixed cost per segment that dominates there.
:class:`Segments` lays the segments out as the rows of a ``(segments, longest)`` grid (a
reshape without copying when every segment has the same length, else one scatter padded
with the operation's identity: 0 for sums, NaN for ``fmin``/``fmax``) and folds the grid's
columns left to right with the element-wise ufunc, so each segment is reduced in the order
of its elements, as a sequential loop would.  Long or very uneven segments (where the grid
would be much larger than the data) go to ``reduceat``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Segments", "Blocks"]

#: longest segment reduced on a grid; longer ones (minute windows of 1 Hz samples) use reduceat
MAX_WIDTH = 64


def _fold_columns(ufunc: np.ufunc, cols: list[np.ndarray], dtype: np.dtype | type) -> np.ndarray:
    """``ufunc`` folded over ``cols`` left to right in ``dtype`` (each cast to it first, as a
    loop would): the first two in one call, the others into its result."""
    if len(cols) == 1:
        return cols[0].astype(dtype)
    acc = ufunc(cols[0], cols[1], dtype=dtype)
    for col in cols[2:]:
        ufunc(acc, col, out=acc)
    return acc


class Segments:
    """Segments of an array of ``total`` elements starting at ``starts`` (increasing, first 0).

    Parameters
    ----------
    starts : numpy.ndarray
        Index of each segment's first element.
    total : int
        Length of the arrays reduced.
    """

    def __init__(self, starts: np.ndarray, total: int) -> None:
        self.starts = starts
        self.total = total
        self.counts = np.diff(np.r_[starts, total]).astype(np.int64)
        m = len(starts)
        self.width = int(self.counts.max()) if m else 0
        self.grid = bool(m) and self.width <= MAX_WIDTH and m * self.width <= 2 * total
        self.index: np.ndarray | None = None  # flat grid position of each element; None: a plain reshape
        if self.grid and m * self.width != total:
            offset = np.arange(m, dtype=np.int64) * self.width - starts
            self.index = np.arange(total, dtype=np.int64) + np.repeat(offset, self.counts)

    def _fold(self, ufunc: np.ufunc, x: np.ndarray, fill: float | int, dtype: np.dtype | type | None) -> np.ndarray:
        m, k = len(self.starts), self.width
        if self.index is None:
            cells = x.reshape(m, k)
        else:
            flat = np.full(m * k, fill, dtype=x.dtype)
            flat[self.index] = x
            cells = flat.reshape(m, k)
        return _fold_columns(ufunc, [cells[:, j] for j in range(k)], dtype or x.dtype)

    def _reduce(self, ufunc: np.ufunc, x: np.ndarray, fill: float | int,
                dtype: np.dtype | type | None = None) -> np.ndarray:
        if not len(self.starts):
            return np.zeros(0, dtype=dtype or x.dtype)
        if self.grid:
            return self._fold(ufunc, x, fill, dtype)
        return ufunc.reduceat(x if dtype is None else x.astype(dtype), self.starts)

    def sum(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """Sum per segment (NaN propagates, as in ``np.add.reduceat``)."""
        return self._reduce(np.add, x, 0, dtype)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Number of true elements per segment (int64)."""
        return self._reduce(np.add, mask.view(np.uint8) if mask.dtype == bool else mask, 0, np.int64)

    def fmin(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """Smallest element per segment, ignoring NaN (NaN when all are), in ``dtype`` (a
        widening cast, which keeps the order: the smallest of the cast elements)."""
        return self._reduce(np.fmin, x, np.nan, dtype)

    def fmax(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """Largest element per segment, ignoring NaN (NaN when all are), in ``dtype``."""
        return self._reduce(np.fmax, x, np.nan, dtype)

    def first(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """Each segment's first element (cast to ``dtype``)."""
        if self.grid and self.index is None:  # segments of one length: a strided copy, no gather
            return x.reshape(len(self.starts), self.width)[:, 0].astype(dtype or x.dtype)
        got = x[self.starts]
        return got if dtype is None else got.astype(dtype)

    def last(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """Each segment's last element (cast to ``dtype``)."""
        if self.grid and self.index is None:
            return x.reshape(len(self.starts), self.width)[:, -1].astype(dtype or x.dtype)
        got = x[self.starts + self.counts - 1]
        return got if dtype is None else got.astype(dtype)


class Blocks(Segments):
    """Segments that interleave: ``blocks`` blocks of ``inner`` runs of ``width`` elements, where
    segment ``(b, j)`` holds element ``j`` of every run of block ``b`` (the series of a host
    by window, when every series of every host has the same windows).  Reduced by folding
    the runs of each block in order, without gathering the segments together.

    Parameters
    ----------
    blocks, inner, width : int
        Number of blocks, runs per block and elements per run.
    """

    def __init__(self, blocks: int, inner: int, width: int) -> None:
        self.shape = (blocks, inner, width)
        self.starts = np.arange(blocks * width, dtype=np.int64)  # one per segment (its count only)
        self.total = blocks * inner * width
        self.counts = np.full(blocks * width, inner, np.int64)
        self.width = inner
        self.grid = True
        self.index = None

    def _fold(self, ufunc: np.ufunc, x: np.ndarray, fill: float | int, dtype: np.dtype | type | None) -> np.ndarray:
        cells = x.reshape(self.shape)
        return _fold_columns(ufunc, [cells[:, j, :] for j in range(self.shape[1])], dtype or x.dtype).reshape(-1)

    def first(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        return x.reshape(self.shape)[:, 0, :].astype(dtype or x.dtype).reshape(-1)

    def last(self, x: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        return x.reshape(self.shape)[:, -1, :].astype(dtype or x.dtype).reshape(-1)

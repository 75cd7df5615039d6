"""The UTC time of the RFC 3339 stamp that starts a candidate line, for the whole group at once.

Every bulk shape (:mod:`reliab.io.formats.kernel._bulk`) starts with an rsyslog RFC 3339
stamp (RFC 3339 §5.6, as rsyslog's ``RSYSLOG_FileFormat`` writes it).  :func:`with_time`
reads the stamps of a group's lines once, into ``_time``, instead of once per shape:

* a line's stamp is its first space-separated word, read only when it has exactly the
  form the shapes accept (:data:`STAMP`: years 1900–2259, hours 00–23, seconds 00–59, at
  most six fraction digits, ``Z`` or an offset of less than 24 hours);
* those stamps are converted by Arrow's ISO 8601 string-to-timestamp cast, one C++ pass
  (~10x cheaper than a ``strftime``-format parse, which re-reads its format for every
  value);
* if any of them is not a calendar date (``2024-02-30``) the cast refuses the whole array,
  and the group falls back to :func:`reference_time`, which gives null for just those.

On the accepted form both give the same instant (proleptic Gregorian calendar, the offset
subtracted); ``tests/test_kernel_bulk_time.py`` checks it.
"""

from __future__ import annotations

import polars as pl

from reliab.io.formats.kernel._bulk_headers import DEFERRED_STAMP as _DEFERRED
from reliab.io.formats.kernel._bulk_shapes import _STAMP

#: the stamp of the bulk shapes' rsyslog prefix (``_bulk_shapes._HEAD``), as a whole word
STAMP = rf"^{_STAMP}$"


def reference_time(stamp: pl.Expr) -> pl.Expr:
    """The UTC time of RFC 3339 stamps, null where one is not a calendar date (polars/chrono)."""
    return stamp.str.replace("Z", "+00:00", literal=True).str.replace(r"([+-][0-9]{2})([0-9]{2})$", "$1:$2").str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%:z", time_unit="us", time_zone="UTC", strict=False, cache=False)


def _cast(stamps: pl.Series) -> pl.Series:
    """``stamps`` (all of the :data:`STAMP` form) as UTC times: Arrow's cast, else the reference."""
    import pyarrow as pa

    try:
        times = stamps.to_arrow().cast(pa.timestamp("us", tz="UTC"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a date not in the calendar
        return stamps.to_frame("s").select(reference_time(pl.col("s"))).to_series()
    return pl.Series(times, dtype=pl.Datetime("us", "UTC"))


def stamp_times(hits: pl.DataFrame) -> pl.Series:
    """``_time``: the UTC time of each line's leading RFC 3339 stamp, null where it has none."""
    line = pl.col("line")
    stamp = hits.select(line.str.head(line.str.find(" ", literal=True))).to_series()
    out = pl.repeat(None, hits.height, dtype=pl.Datetime("us", "UTC"), eager=True).alias("_time")
    if "_orig" in hits.columns:  # (a rewritten RFC 3164 or printk line's placeholder stamp: one cast)
        fake = (stamp == _DEFERRED).fill_null(False)
        if fake.any():
            out = out.scatter(fake.arg_true(), _cast(pl.Series([_DEFERRED])).item())
            stamp = stamp.set(fake, None)  # type: ignore[arg-type]
    rows = stamp.str.contains(STAMP).fill_null(False).arg_true()
    if rows.len():
        out = out.scatter(rows, _cast(stamp.gather(rows)))
    return out


def with_time(hits: pl.DataFrame) -> pl.DataFrame:
    """``hits`` with ``_time`` (:func:`stamp_times`), unless it already has it."""
    return hits if "_time" in hits.columns else hits.with_columns(stamp_times(hits))

"""``reliab report`` on inputs too large to hold: the tables streamed to disk, the report's rows read back.

:func:`reliab.ingest` with ``output=`` writes the ``signals`` and ``telemetry`` tables to
partitioned Parquet while it reads (:mod:`reliab.io._streamed`), so its memory does not grow
with the logs.  The report then needs far fewer signal rows than the logs hold; this module
reads back exactly those (:func:`lean_signals`), and, for the data-quality section, the
rows and time span of each input file's signals (:func:`signal_spans`), without ever
holding the whole table.

Which signal rows the report's analyses read (:func:`reliab.study.analyze`):

- the observation window from the logs takes the earliest and the latest ``time``;
- the lemon screen (:func:`reliab.find_lemons`) counts, per host, ``ticket:*``,
  ``slurm:drain*``, ``nic:link_down`` and ``nic:lost_carrier`` rows, and the *distinct*
  ``xid:*`` signals;
- the run's cost (:func:`reliab.failure_cost`) reads the rows of its jobs (``job_id``),
  the ``train:*`` checkpoint rows and, per host, the time of the first critical Xid;
- the failure-risk features (:func:`reliab.predict_failures`) count every row of the
  precursor families (:data:`reliab.predict.PRECURSOR_FAMILIES`) in trailing windows.

So every row with a ``job_id`` or one of those counted signals is kept, and of every other
(host, signal, severity) only its earliest row, plus the table's earliest and latest rows.
The rows kept are in the order of the whole table (:func:`reliab.io.read_table`),
and each analysis gives the same result on them as on the whole table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab.io import OutputIngestResult, parts_in_order, read_manifest, read_rows

__all__ = ["STREAM_BYTES", "ReportIngest", "lean_ingest", "lean_signals", "should_stream", "signal_spans"]

#: ``stream=None`` streams the tables to disk when the inputs hold at least this many bytes
STREAM_BYTES = 256 << 20
#: a compressed input counts this many times its size (a kernel log compresses ~10-50 to 1)
COMPRESSED_FACTOR = 10
_COMPRESSED = (".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4")
#: signals counted row by row (lemon features) or matched whatever their host (tickets, checkpoints)
_COUNTED_PREFIXES = ("ticket:", "train:", "slurm:drain")
_COUNTED = ("nic:link_down", "nic:lost_carrier")
_GROUP = ["host", "signal", "severity"]


def _size(path: Path) -> int:
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not path.is_file() or path.is_symlink():
        return 0
    return st.st_size * (COMPRESSED_FACTOR if path.name.lower().endswith(_COMPRESSED) else 1)


def should_stream(paths: Sequence[Path], stream: bool | None) -> bool:
    """``stream`` if given; else whether ``paths`` hold at least :data:`STREAM_BYTES`.

    Files are sized without following links, compressed ones counted
    :data:`COMPRESSED_FACTOR` times; the walk stops at the threshold.
    """
    if stream is not None:
        return stream
    total = 0
    for path in paths:
        if "://" in str(path):
            continue
        if not path.is_dir():
            total += _size(path)
        else:
            for root, _, files in os.walk(path):
                total += sum(_size(Path(root) / f) for f in files)
                if total >= STREAM_BYTES:
                    return True
        if total >= STREAM_BYTES:
            return True
    return False


def _records(folder: Path, table: str) -> list[dict[str, Any]]:
    return parts_in_order(read_manifest(folder)["tables"].get(table, []))


def _chosen(cols: pd.DataFrame) -> np.ndarray:
    """Rows of a part every analysis reads row by row: with a job id, or a counted signal."""
    from reliab.predict import PRECURSOR_FAMILIES

    signal = cols["signal"].astype("string").fillna("")
    keep = cols["job_id"].notna().to_numpy(dtype=bool) | signal.isin(_COUNTED).to_numpy(dtype=bool)
    precursor = "|".join(f"(?:{p})" for p in PRECURSOR_FAMILIES.values())
    keep |= signal.str.contains(precursor, regex=True, case=False).to_numpy(dtype=bool)
    for prefix in _COUNTED_PREFIXES:
        keep |= signal.str.startswith(prefix).to_numpy(dtype=bool)
    return keep


def lean_signals(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """The signal rows of a committed output folder the report reads (see the module doc).

    Two passes over the parts: the first reads ``time``, ``host``, ``signal``,
    ``severity`` and ``job_id`` and chooses rows; the second reads the whole rows chosen.
    """
    import pyarrow.parquet as pq

    folder = Path(folder)
    records = _records(folder, "signals")
    chosen: list[np.ndarray] = []
    best = pd.DataFrame(columns=[*_GROUP, "t", "part", "row"])
    edges: dict[str, tuple[int, int, int]] = {}  # "min"/"max" -> (time, part, row)
    for k, record in enumerate(records):
        cols = pq.read_table(folder / record["path"], columns=["time", *_GROUP, "job_id"]).to_pandas()
        keep = _chosen(cols)
        chosen.append(np.flatnonzero(keep))
        known = pd.to_datetime(cols["time"], utc=True).notna().to_numpy()
        ns = np.where(known, _ns(cols["time"]), np.iinfo(np.int64).max)  # a missing time is never the earliest
        if known.any():
            lo, hi = int(ns.argmin()), int(np.where(known, ns, np.iinfo(np.int64).min).argmax())
            if "min" not in edges or ns[lo] < edges["min"][0]:
                edges["min"] = (int(ns[lo]), k, lo)
            if "max" not in edges or ns[hi] > edges["max"][0]:
                edges["max"] = (int(ns[hi]), k, hi)
        rows = pd.DataFrame({**{g: cols[g].astype(object).to_numpy() for g in _GROUP}, "t": ns,
                             "part": k, "row": np.arange(len(cols))})
        best = _earliest(pd.concat([best, rows.loc[~keep]], ignore_index=True))
    extra = [(int(p), int(r)) for p, r in zip(best["part"], best["row"], strict=True)]
    extra += [(p, r) for _, p, r in edges.values()]
    for k in {k for k, _ in extra}:
        chosen[k] = np.union1d(chosen[k], np.array([r for p, r in extra if p == k], dtype=np.int64))
    return read_rows(folder, records, chosen)


def _ns(times: pd.Series) -> np.ndarray:
    """Nanoseconds since the epoch (missing times: any value, masked by the caller)."""
    t = pd.to_datetime(times, utc=True)
    return pd.DatetimeIndex(t).as_unit("ns").asi8

def _earliest(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (host, signal, severity), the earliest row (first in table order among ties)."""
    order = np.lexsort((rows["row"].to_numpy(dtype=np.int64), rows["part"].to_numpy(dtype=np.int64),
                        rows["t"].to_numpy(dtype=np.int64)))
    return rows.iloc[order].drop_duplicates(_GROUP, keep="first").reset_index(drop=True)


def signal_spans(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Per input file, the rows of its signals and their earliest and latest time.

    As :func:`reliab.report.provenance.origin_spans` gives them for the whole table, read
    part by part (``origin`` and ``time`` only).
    """
    import pyarrow.parquet as pq

    from reliab.report.provenance import origin_spans

    folder = Path(folder)
    spans = [origin_spans(pq.read_table(folder / r["path"], columns=["origin", "time"]).to_pandas(), ("time", "time"))
             for r in _records(folder, "signals")]
    if not spans:
        return origin_spans(pd.DataFrame({"origin": pd.Series(dtype=object),
                                          "time": pd.Series(dtype="datetime64[ns, UTC]")}), ("time", "time"))
    both = pd.concat(spans, ignore_index=True).groupby("path", sort=False)
    return pd.DataFrame({"rows": both["rows"].sum(), "lo": both["lo"].min(), "hi": both["hi"].max()}).reset_index()


@dataclass(frozen=True, repr=False)
class ReportIngest(OutputIngestResult):
    """An :class:`~reliab.io._result.OutputIngestResult` whose ``signals`` are the rows the report reads.

    Counts (:meth:`summary`, :meth:`to_dict`) are those written with the tables, never those
    of the rows held.

    Attributes
    ----------
    origin_spans : mapping of str to DataFrame
        ``signals`` -> rows and time span per input file (:func:`signal_spans`), for the
        report's provenance table.
    """

    origin_spans: Mapping[str, pd.DataFrame] = field(default_factory=dict)

    def _signal_sources(self) -> pd.Series:
        counts = dict(self.counts.get("signal_sources", {}))
        return pd.Series(list(counts.values()), index=list(counts), dtype="int64")

    def _rows(self, table: str) -> int:
        return int(self.counts.get("rows", {}).get(table, 0))


def lean_ingest(res: OutputIngestResult) -> ReportIngest:
    """``res`` with the signal rows the report reads (:func:`lean_signals`) and the telemetry loaded."""
    fields = {name: getattr(res, name) for name in ("jobs", "interruptions", "quarantine", "accounting",
                                                     "sources", "notes", "policy", "user_failures",
                                                     "output", "counts")}
    return ReportIngest(signals=lean_signals(res.output), telemetry=res.telemetry,
                        origin_spans={"signals": signal_spans(res.output)}, **fields)

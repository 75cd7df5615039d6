"""The ``jobs`` columns of sacct rows split into cells, for :mod:`reliab.io.formats.slurm._columnar`.

Each column is what :func:`reliab.io.formats.slurm.job_record` makes of the cell, for the
values it is certain to read the same way; a row with any other value is handed back, to be
read by the per-line parser (which then gives the value, or the reason the line is malformed).

References
----------
``sacct(1)``, Slurm 25.11 ``doc/man/man1/sacct.1``: field list, JOB STATE CODES,
``SLURM_TIME_FORMAT``; AllocTRES ``gres/gpu[:type]=N`` (Slurm ``gres.conf(5)``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from reliab.io.formats.slurm._states import STATE_CODES

if TYPE_CHECKING:
    import polars as pl

__all__ = ["job_columns"]

_STATE_RE = r"^([A-Z][A-Z_]*)\+?(?: by \S+)?\+?$"
_TIME_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$"
_UNSET = ["", "unknown", "none", "n/a"]
_COUNT_RE = r"^[0-9]{1,18}$"
_UNTYPED = r"(?:^|,)gres/gpu=[0-9]"
_TYPED = r"(?:^|,)gres/gpu:[^=,]+=[0-9]"
_MAX_INT = 2**63 - 1
_TIMES = ("submit", "start", "end")
#: a job's columns, in the order of the ``jobs`` table (origin apart), and the line number
COLUMNS = ("job_id", "name", "user", "partition", "state", "state_raw", "exit_code", *_TIMES, "nnodes",
           "ngpus", "nodelist", "failed_node", "restarts", "n")

OffsetOf = Callable[[list[datetime]], dict[datetime, "int | None"]]


def job_columns(rows: pl.DataFrame, idx: dict[str, int], gpus_per_node: int | None,
                offset_of: OffsetOf) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(jobs, rest)``: the jobs of ``rows`` read in columns, and the rows left to the per-line parser.

    Parameters
    ----------
    rows : polars.DataFrame
        Columns ``line`` (text), ``n`` (line number) and ``c`` (its cells), rows of printable
        ASCII with the header's number of cells and a JobID that is no step.
    idx : dict
        Field name (lower case) -> its cell.
    gpus_per_node : int, optional
        The reader's option (non-negative).
    offset_of : callable
        Naive wall-clock hours -> their UTC offset in microseconds in the reader's zone
        (``None`` for an hour in which the offset changes).

    Returns
    -------
    (polars.DataFrame, polars.DataFrame)
        :data:`COLUMNS` (times naive-free ``Datetime("ns", "UTC")``), and ``n``, ``line`` of the
        rows left over.
    """
    import polars as pl

    def cell(name: str) -> pl.Expr:
        return pl.col("c").list.get(idx[name])

    def text(name: str) -> pl.Expr:
        if name not in idx:
            return pl.lit(None, pl.Utf8)
        value = cell(name).str.strip_chars(" ")
        return pl.when(value != "").then(value)

    def count(name: str | None) -> tuple[pl.Expr, pl.Expr]:
        if name is None:
            return pl.lit(None, pl.Int64), pl.lit(True)
        value = cell(name).str.strip_chars(" ")
        digits = value.str.contains(_COUNT_RE)
        return pl.when(digits).then(value.cast(pl.Int64, strict=False)), digits | (value == "")

    def wall(name: str) -> tuple[pl.Expr, pl.Expr]:
        if name not in idx:
            return pl.lit(None, pl.Datetime("us")), pl.lit(True)
        value = cell(name).str.strip_chars(" ")
        parsed = value.str.strptime(pl.Datetime("us"), "%Y-%m-%dT%H:%M:%S", strict=False)
        good = value.str.contains(_TIME_RE) & parsed.is_not_null() & parsed.dt.year().is_between(1678, 2261)
        return pl.when(good).then(parsed), good | value.str.to_lowercase().is_in(_UNSET)

    nodes_field = "nnodes" if "nnodes" in idx else "allocnodes" if "allocnodes" in idx else None
    nnodes, nodes_ok = count(nodes_field)
    restarts, restarts_ok = count("restarts" if "restarts" in idx else None)
    state_raw = cell("state").str.strip_chars(" ")
    code = state_raw.str.extract(_STATE_RE, 1)
    walls = {name: wall(name) for name in _TIMES}
    nodelist = text("nodelist")
    frame = rows.with_columns(
        job_id=cell("jobid").str.strip_chars(" "), name=text("jobname"), user=text("user"),
        partition=text("partition"), state=code.replace(STATE_CODES), state_raw=state_raw,
        exit_code=text("exitcode"), nnodes=nnodes, restarts=restarts,
        nodelist=pl.when(nodelist.str.to_lowercase() != "none assigned").then(nodelist),
        failed_node=text("failednode"), **{name: w for name, (w, _) in walls.items()},
        ok=code.is_not_null() & nodes_ok & restarts_ok & pl.all_horizontal([ok for _, ok in walls.values()]))
    frame = _gpus(frame, idx, gpus_per_node)
    frame = _to_utc(frame, offset_of)
    good = frame.filter(pl.col("ok"))
    return good.select(COLUMNS), frame.filter(~pl.col("ok")).select("n", "line")


def _gpus(frame: pl.DataFrame, idx: dict[str, int], gpus_per_node: int | None) -> pl.DataFrame:
    """``ngpus`` (:func:`reliab.io.formats.slurm.gpus_from_tres`, then NNodes x gpus_per_node)."""
    import polars as pl

    if "alloctres" not in idx:
        gpus, ok = pl.lit(None, pl.Int64), pl.lit(True)
    else:
        tres = pl.col("c").list.get(idx["alloctres"])
        untyped, typed = tres.str.count_matches(_UNTYPED), tres.str.count_matches(_TYPED)
        frame = frame.with_columns(_u=untyped, _t=typed)
        one = tres.str.extract(r"(?:^|,)gres/gpu=([0-9]+)", 1).cast(pl.Int64, strict=False)
        if frame["_t"].max():  # typed counts (gres/gpu:h100=4) add up
            each = tres.str.extract_all(r"(?:^|,)gres/gpu:[^=,]+=[0-9]+")
            total = each.list.eval(pl.element().str.extract(r"([0-9]+)$", 1).cast(pl.Int64)).list.sum()
        else:
            total = pl.lit(None, pl.Int64)
        u, t = pl.col("_u"), pl.col("_t")
        gpus = pl.when((u == 0) & (t == 0)).then(pl.lit(None, pl.Int64)).when(t == 0).then(one).otherwise(total)
        # one untyped count, or typed ones only; no run of 16 digits: no bound can be crossed
        ok = ~tres.str.contains(r"[0-9]{16}") & (((t == 0) & (u <= 1)) | ((u == 0) & (t <= 1000)))
    frame = frame.with_columns(ngpus=gpus, ok=pl.col("ok") & ok)
    if gpus_per_node is not None:
        nodes = pl.col("nnodes")
        derive = pl.col("ngpus").is_null() & nodes.is_not_null()
        fits = nodes <= (_MAX_INT // gpus_per_node if gpus_per_node else _MAX_INT)
        frame = frame.with_columns(ngpus=pl.when(derive).then(nodes * gpus_per_node).otherwise(pl.col("ngpus")),
                                   ok=pl.col("ok") & (~derive | fits))
    return frame.drop("_u", "_t", strict=False)


def _to_utc(frame: pl.DataFrame, offset_of: OffsetOf) -> pl.DataFrame:
    """The wall-clock times as UTC instants (nanoseconds); a time in an hour whose offset
    changes (a DST edge: ambiguous or skipped times) leaves its row to the per-line parser."""
    import polars as pl

    hours = (pl.concat([frame.select(pl.col(n).dt.truncate("1h").alias("h")) for n in _TIMES])
             .drop_nulls().unique()["h"].to_list())
    offsets = offset_of(hours)
    keys = pl.Series(hours, dtype=pl.Datetime("us"))
    values = pl.Series([offsets[h] for h in hours], dtype=pl.Int64)
    exprs, edge = {}, []
    for name in _TIMES:
        off = pl.col(name).dt.truncate("1h").replace_strict(keys, values, default=None, return_dtype=pl.Int64)
        exprs[name] = (pl.col(name) - pl.duration(microseconds=off)).dt.replace_time_zone("UTC") \
            .dt.cast_time_unit("ns")
        edge.append(pl.col(name).is_not_null() & off.is_null())
    return frame.with_columns(**exprs, ok=pl.col("ok") & ~pl.any_horizontal(edge))

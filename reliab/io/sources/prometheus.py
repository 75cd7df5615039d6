"""``prometheus://host:port``: GPU telemetry from Prometheus (dcgm-exporter series) over ``query_range``.

``reliab.ingest("prometheus://host:9090", start=..., end=..., step="30s")`` asks
``/api/v1/query_range`` (Prometheus HTTP API) for the dcgm-exporter metrics (:data:`METRICS`,
or ``metrics=``) and builds the ``telemetry`` table (``time``, ``host``, ``gpu`` and one column
per metric, named as the DCGM file readers name them: ``temp_c``, ``power_w``…); changes of
``DCGM_FI_DEV_XID_ERRORS`` become ``xid:<code>`` signals.  ``prometheus+https://`` speaks
HTTPS, ``user:password@`` in the URL is sent as basic authentication (to that server only:
redirects are refused, and the URL is always shown as ``user:***@``), and a path after the
port is the server's prefix (``prometheus://host/prom``).

Values are what Prometheus evaluates at ``start, start + step, …``: the latest sample at or
before each step within the lookback delta (5 min by default), so a table equals the scraped
history exactly when ``step`` is the scrape interval and ``start`` lies on the scrape grid.

Chunks: Prometheus refuses a range query of more than 11,000 points per series
(``exceeded maximum resolution of 11,000 points per timeseries``, ``web/api/v1/api.go``) and a
query that would load more than ``--query.max-samples`` samples (50,000,000 by default).  The
window is cut into chunks of at most ``max_points`` steps; a chunk refused for either limit is
halved and the smaller size kept for the chunks after it.  Each chunk is one query and one
accounting row, with path ``prometheus://host:port?start=…&end=…&step=…``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit

import pandas as pd

from reliab.errors import SourceError
from reliab.io._lines import quarantine_frame
from reliab.io._redact import hide_password
from reliab.io._registry import FileResult, register_source
from reliab.io.sources._http import MAX_BYTES, ApiError, basic_auth, get_json
from reliab.io.sources._series import (
    Samples,
    add_answer,
    column_for,
    identity_notes,
    is_metric_name,
    telemetry_table,
    xid_signals,
)
from reliab.io.sources._window import Moment, duration, iso, window

#: dcgm-exporter series read by default (``etc/default-counters.csv`` names; those commented out
#: there by default, such as ECC totals and violation counters, are simply absent if not scraped)
METRICS = tuple(f"DCGM_FI_DEV_{n}" for n in (
    "GPU_TEMP", "MEMORY_TEMP", "POWER_USAGE", "TOTAL_ENERGY_CONSUMPTION", "SM_CLOCK", "MEM_CLOCK",
    "GPU_UTIL", "CLOCKS_EVENT_REASONS", "CLOCK_THROTTLE_REASONS", "POWER_VIOLATION",
    "THERMAL_VIOLATION", "ECC_SBE_VOL_TOTAL", "ECC_DBE_VOL_TOTAL", "ECC_SBE_AGG_TOTAL",
    "ECC_DBE_AGG_TOTAL", "UNCORRECTABLE_REMAPPED_ROWS", "CORRECTABLE_REMAPPED_ROWS",
    "ROW_REMAP_FAILURE", "PCIE_REPLAY_COUNTER", "XID_ERRORS"))
#: Prometheus' hard limit of points per series in one range query
MAX_POINTS = 11_000
SOURCE = "prometheus"
_URL_KEYS = ("start", "end", "step", "metrics")
#: errors meaning "this query is too big": split it
_TOO_BIG = ("exceeded maximum resolution", "too many samples", "would load too many samples")


@dataclasses.dataclass(frozen=True)
class Server:
    """Where the API is and how to talk to it."""

    base: str  # http(s)://host:port[/prefix]
    display: str  # prometheus://host:port[/prefix], credentials removed
    headers: dict[str, str]


def server_of(location: str, given: dict[str, object]) -> tuple[Server, dict[str, object]]:
    """The server of ``prometheus[+http|+https]://[user:pw@]host[:port][/prefix][?start=…]``.

    Raises
    ------
    ValueError
        No host, an unknown transport or query key, or a key given twice.
    """
    parts = urlsplit(location)
    location = hide_password(location)
    scheme = parts.scheme.lower()
    transport = {"prometheus": "http", "prometheus+http": "http", "prometheus+https": "https"}.get(scheme)
    if transport is None:
        raise ValueError(f"{location}: use prometheus://, prometheus+http:// or prometheus+https://")
    if not parts.hostname:
        raise ValueError(f"{location}: no host (e.g. prometheus://localhost:9090)")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{location}: the port is not a number in 0-65535") from None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host + (f":{port}" if port else "")
    prefix = parts.path.rstrip("/")
    merged = dict(given)
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _URL_KEYS:
            raise ValueError(f"{location}: unknown query key {key!r} (known: {', '.join(_URL_KEYS)})")
        if merged.get(key) is not None and merged[key] != value:
            raise ValueError(f"{key}= given twice: {merged[key]!r} and {value!r} in the URL")
        merged[key] = value.split(",") if key == "metrics" else value
    server = Server(f"{transport}://{netloc}{prefix}", f"{scheme}://{netloc}{prefix}",
                    basic_auth(parts.username, parts.password))
    return server, merged


def _queries(metrics: Sequence[str] | Mapping[str, str] | None,
             selector: str | None) -> tuple[list[tuple[str, dict[str, str], str | None]], list[str]]:
    """[(PromQL, column of each metric name, column of an expression)], metric names asked.

    Bare metric names share one query (``{__name__=~"a|b|…"}``); each PromQL expression
    (needs ``metrics={expr: column}``) is a query of its own.
    """
    if metrics is None:
        metrics = METRICS
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    mapping = dict(metrics) if isinstance(metrics, Mapping) else {m: None for m in metrics}
    if not mapping:
        raise ValueError("metrics= is empty")
    names = [m for m in mapping if is_metric_name(m)]
    exprs = [m for m in mapping if not is_metric_name(m)]
    for e in exprs:
        if not mapping[e]:
            raise ValueError(f"metrics: the expression {e!r} needs a column name (metrics={{expr: column}})")
    match = "|".join(names)
    extra = f",{selector.strip().strip('{}')}" if selector else ""
    out: list[tuple[str, dict[str, str], str | None]] = []
    if names:
        columns = {n: str(mapping[n] or column_for(n)) for n in names}
        out.append((f'{{__name__=~"{match}"{extra}}}', columns, None))
    out += [(e, {}, str(mapping[e])) for e in exprs]
    return out, list(mapping)


def _fetch(server: Server, query: str, a: pd.Timestamp, n: int, step_s: float,
           timeout_s: float, max_bytes: int) -> list[dict]:
    """One ``query_range`` over ``n`` steps from ``a`` (both ends included)."""
    end = a + pd.Timedelta(seconds=step_s * (n - 1))
    doc = get_json(f"{server.base}/api/v1/query_range",
                   {"query": query, "start": f"{a.timestamp():.3f}", "end": f"{end.timestamp():.3f}",
                    "step": f"{step_s:g}"}, location=server.display, timeout_s=timeout_s,
                   headers=server.headers, max_bytes=max_bytes)
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise SourceError(f"{server.display}: the answer to query_range is not a matrix (is this a Prometheus API?)")
    return data["result"]


@register_source("prometheus")
def read_prometheus(
    location: str,
    *,
    start: Moment | None = None,
    end: Moment | None = None,
    step: str | pd.Timedelta | float = "60s",
    metrics: Sequence[str] | Mapping[str, str] | str | None = None,
    selector: str | None = None,
    max_points: int = MAX_POINTS,
    timeout_s: float = 60.0,
    max_bytes: int = MAX_BYTES,
    strict: bool = False,
) -> list[FileResult]:
    """Prometheus ``query_range`` (``prometheus://host:port``): dcgm-exporter telemetry and XID signals.

    Parameters
    ----------
    location : str
        ``prometheus://host:9090`` (``prometheus+https://``, ``user:pw@`` and a path prefix
        allowed); ``?start=…&end=…&step=…&metrics=a,b`` may replace those arguments.
    start, end : str or datetime
        The window (UTC when naive; ``end`` defaults to now); both ends are evaluated.
    step : str, Timedelta or float seconds
        Evaluation step; use the scrape interval to get the samples as scraped.
    metrics : list of str, or dict of str to str, optional
        Metric names (default :data:`METRICS`), or ``{metric or PromQL expression: column}``.
    selector : str, optional
        Label matchers added to every metric, e.g. ``'Hostname=~"node00.*"'``.
    max_points : int
        Steps per query (at most Prometheus' 11,000).
    timeout_s : float
        Longest wait for one answer, from sending the query to its last byte (a total
        deadline, not a limit per read).
    max_bytes : int
        Largest answer accepted (default 512 MiB); a larger one is an error naming the limit.
    strict : bool
        Raise on the first malformed sample instead of quarantining it.

    Returns
    -------
    list of FileResult
        One per query; the last carries the whole ``telemetry`` table and the XID ``signals``.

    Raises
    ------
    SourceError
        The server is down or unreachable, the URL is not a Prometheus API, a query is
        refused, or the window holds no sample of the metrics.
    ValueError
        A bad window, step, metric list or location.

    References
    ----------
    Prometheus HTTP API (``/api/v1/query_range``, range vectors, error format); NVIDIA
    dcgm-exporter ``etc/default-counters.csv``; DCGM ``dcgm_fields.h``.
    """
    server, opts = server_of(location, {"start": start, "end": end, "step": step, "metrics": metrics})
    a, b = window(opts["start"], opts["end"])  # type: ignore[arg-type]
    step_s = duration(opts["step"], "step").total_seconds()  # type: ignore[arg-type]
    if not 1 <= int(max_points) <= MAX_POINTS:
        raise ValueError(f"max_points={max_points} must be between 1 and {MAX_POINTS}")
    if int(max_bytes) < 1:
        raise ValueError(f"max_bytes={max_bytes} must be a positive number of bytes")
    queries, asked = _queries(opts["metrics"], selector)  # type: ignore[arg-type]
    total = int((b - a).total_seconds() // step_s) + 1
    samples = Samples()
    results: list[FileResult] = []
    origins: list[str] = []
    for k, (query, columns, column) in enumerate(queries):
        tag = f"#query{k + 1}" if len(queries) > 1 else ""
        done, size = 0, int(max_points)
        while done < total:
            n = min(size, total - done)
            lo = a + pd.Timedelta(seconds=step_s * done)
            try:
                answer = _fetch(server, query, lo, n, step_s, timeout_s, int(max_bytes))
            except ApiError as exc:
                if n > 1 and any(s in exc.error for s in _TOO_BIG):
                    size = max(1, n // 2)
                    continue
                raise
            hi = lo + pd.Timedelta(seconds=step_s * (n - 1))
            url = _chunk_url(server, lo, hi, step_s, None if opts["metrics"] is None else asked) + tag
            origins.append(url)
            count = add_answer(samples, answer, len(origins) - 1, columns, column)
            if strict and count.bad:
                pos, reason, text = count.bad[0]
                raise SourceError(f"{url}: sample {pos}: {reason}: {text}")
            results.append(FileResult(
                path=url, source=SOURCE, lines=count.lines, parsed=count.parsed, irrelevant=count.irrelevant,
                malformed=len(count.bad), quarantine=quarantine_frame([(url, p, SOURCE, r, t) for p, r, t in count.bad])))
            done += n
    if not samples.time_ms:
        raise SourceError(f"{server.display}: no samples of {_short(asked)} between {iso(a)} and {iso(b)} UTC"
                          " (check the window, step= and selector=)")
    signals, notes = xid_signals(samples, origins)
    tables = {"telemetry": telemetry_table(samples), "signals": signals}
    last = results[-1]
    results[-1] = dataclasses.replace(last, tables=tables, notes=(*last.notes, *notes, *identity_notes(samples)))
    return results


def _chunk_url(server: Server, lo: pd.Timestamp, hi: pd.Timestamp, step_s: float,
               metrics: list[str] | None) -> str:
    query = {"start": iso(lo), "end": iso(hi), "step": f"{step_s:g}s",
             **({"metrics": ",".join(metrics)} if metrics else {})}
    return f"{server.display}?{urlencode(query, safe=':,')}"


def _short(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

"""The result contract shared by every model: frozen data with ``summary``, ``to_dict``, ``plot``.

A result class is a ``@dataclass(frozen=True)`` that defines ``summary() -> DataFrame`` (a
new frame on every call) and ``plot(ax=None) -> Figure``, and has the attributes ``n``,
``conf_level`` (``None`` when the result has no interval), ``method`` and ``notes``
(:data:`CONTRACT`).  ``to_dict`` and ``_repr_html_`` follow from those.  A result that could
not be computed is a :class:`NotAvailable` with the reason.  Nothing here computes.

This module sits below ``models`` and ``taxonomy`` so that both can use it.
"""

from __future__ import annotations

import dataclasses
import html
import math
from typing import Any

import numpy as np
import pandas as pd

#: attributes every public result has (``conf_level`` may be ``None``: no interval)
CONTRACT = ("n", "conf_level", "method", "notes")


def json_safe(value: Any) -> Any:
    """Convert numpy/pandas scalars and containers into plain JSON-safe Python objects.

    Non-finite floats become ``None`` (JSON has no NaN/inf); timestamps become ISO strings.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return [json_safe(r) for r in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return json_safe(value.to_dict())
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, (pd.Timedelta, np.timedelta64)):
        return pd.Timedelta(value).total_seconds() / 3600.0
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, str):
        return value
    return str(value)


def new_figure(ax: Any = None, figsize: tuple[float, float] = (6.0, 4.0)) -> tuple[Any, Any]:
    """``(figure, axes)``: the figure of ``ax``, or a new pyplot-free Figure with one axes.

    Result ``plot`` methods draw on a :class:`matplotlib.figure.Figure` made here rather
    than through ``pyplot``, so nothing global changes and nothing is shown.
    """
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.add_subplot()


@dataclasses.dataclass(frozen=True)
class NotAvailable:
    """An analysis that could not run, and why; reports show it as "not available: <why>".

    Attributes
    ----------
    what : str
        The analysis, e.g. ``"Weibull fit of times between interruptions"``.
    reason : str
        Why it could not run, in words a reader acts on (what input is missing, how many
        events there were and how many it needs).
    """

    what: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "NotAvailable", "what": ..., "reason": ...}``."""
        return {"type": "NotAvailable", "what": self.what, "reason": self.reason}


class ResultMixin:
    """Mixin for frozen result dataclasses that define ``summary()``."""

    def summary(self) -> pd.DataFrame:  # pragma: no cover - overridden
        raise NotImplementedError

    def _meta(self) -> dict[str, Any]:
        """Scalar metadata for ``to_dict``: every non-frame, non-private dataclass field."""
        out: dict[str, Any] = {}
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                if f.name.startswith("_") or f.name == "backend" or not f.repr:
                    continue
                v = getattr(self, f.name)
                if isinstance(v, (pd.DataFrame, pd.Series, np.ndarray)):
                    continue
                out[f.name] = list(v) if isinstance(v, tuple) else v
        for name in CONTRACT:  # contract attributes may be properties
            if name not in out and hasattr(self, name):
                v = getattr(self, name)
                out[name] = list(v) if isinstance(v, tuple) else v
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: metadata plus the summary table as records."""
        d = dict(self._meta())
        d["type"] = type(self).__name__
        d["summary"] = self.summary()
        return json_safe(d)

    def _repr_html_(self) -> str:
        meta = self._meta()
        items = "".join(
            f"<li><b>{html.escape(str(k))}</b>: {html.escape(str(v))}</li>"
            for k, v in meta.items()
            if not isinstance(v, (list, tuple, dict)) or len(str(v)) < 200
        )
        table = self.summary().to_html(float_format=lambda x: f"{x:,.4g}", border=0)
        return f"<div class='reliab-result'><h4>{type(self).__name__}</h4><ul>{items}</ul>{table}</div>"

"""A capture file's result re-pointed at the live location it was read for."""

from __future__ import annotations

import dataclasses

import pandas as pd

from reliab.io._registry import FileResult

__all__ = ["relabel"]


def relabel(result: FileResult, url: str) -> FileResult:
    """``result`` of a capture file, re-pointed at ``url``: path, origins and quarantine paths."""
    old = len(result.path)

    def moved(frame: pd.DataFrame, col: str) -> pd.DataFrame:
        if not len(frame):
            return frame
        out = frame.copy()
        out[col] = (url + out[col].astype(str).str.slice(old)).astype(frame[col].dtype)
        return out

    tables = {name: moved(t, "origin") if "origin" in t.columns else t for name, t in result.tables.items()}
    quarantine = None if result.quarantine is None else moved(result.quarantine, "path")
    return dataclasses.replace(result, path=url, tables=tables, quarantine=quarantine)

"""The common delimited file, split at C speed: plain text with one record per line.

A telemetry CSV is nearly always a plain, valid UTF-8 file with ``\n`` terminators, no
blank line, no quote and the same number of fields on every line.  :func:`plain_lines`
reads such a file whole and splits it with ``str.split`` (no per-line Python), and
:func:`uniform` says, for one chunk of data lines, that the reader's line-by-line checks
(quotes, repeated headers, field counts) would pass every line.  Anything else returns
``None``/``False`` and the reader takes its line-by-line path, which handles every odd
case (``\r`` terminators, invalid bytes, over-long lines, blank lines, quoted cells): both
paths give the same table, accounting and quarantine.
"""

from __future__ import annotations

import io
import os
import re
import stat
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from reliab.io._files import compression_of
from reliab.io._prefilter import MAX_LINE_BYTES

if TYPE_CHECKING:
    import pyarrow as pa

#: files read whole on the fast path (larger ones stream line by line, in bounded memory)
WHOLE_BYTES = 16 << 20
#: a blank line: nothing but white space (``str.isspace``) between two line ends
_BLANK = re.compile(r"^\s*$", re.M)


#: bytes the fast path takes: printable ASCII, tab, newline (and, in :func:`plain_lines`, UTF-8)
_TEXT = bytes(range(0x20, 0x7f)) + b"\t\n"
_UTF8 = bytes(range(0x80, 0x100))


def plain_lines(path: str) -> list[str] | None:
    """The lines of ``path`` (terminators removed) if it is plain and clean, else ``None``.

    Clean: a regular, uncompressed file of at most :data:`WHOLE_BYTES` bytes, valid UTF-8,
    without control characters other than tab and newline (so no ``\r`` or NUL), without
    blank lines and without a line longer than :data:`~reliab.io._prefilter.MAX_LINE_BYTES`.
    """
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or not 0 < st.st_size <= WHOLE_BYTES or compression_of(path):
            return None
        with open(path, "rb") as fh:
            data = fh.read(WHOLE_BYTES + 1)
    except OSError:
        return None  # the line-by-line path reports it
    if len(data) > WHOLE_BYTES or data.translate(None, _TEXT + _UTF8):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.endswith("\n"):
        text = text[:-1]
    if _blank_line(text):
        return None
    lines = text.split("\n")
    if len(data) > MAX_LINE_BYTES and max(map(len, lines)) * 4 + 1 > MAX_LINE_BYTES \
            and max(len(line.encode("utf-8")) for line in lines) + 1 > MAX_LINE_BYTES:
        return None  # (a line's size counts its terminator)
    return lines


def _blank_line(text: str) -> bool:
    """Whether a line of ``text`` (lines joined by ``\n``) is empty or white space only."""
    if not text.isascii():
        return _BLANK.search(text) is not None
    # ASCII white space here is space and tab: a blank line is empty or ends in one of them
    if not text or text.startswith("\n") or text.endswith((" ", "\t", "\n")):
        return True
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    before = codes[:-1]  # the byte before each "\n" of the text (one pass each, not a search per "\n")
    return bool(((codes[1:] == _NL) & ((before == _NL) | (before == _SPACE) | (before == _TAB))).any())


_NL, _SPACE, _TAB = ord("\n"), ord(" "), ord("\t")


def _line_starts(raw: bytes) -> np.ndarray:
    """The first byte of every line of ``raw`` (lines joined by ``\n``; an empty last line apart)."""
    codes = np.frombuffer(raw, dtype=np.uint8)
    return np.concatenate([codes[:1], codes[1:][codes[:-1] == _NL]])


def uniform(joined: str, lines: list[str], sep: str, width: int, head_start: str | None) -> bytes | None:
    """``joined`` (``lines`` joined with ``\n``) as bytes if every line may be a plain record
    of ``width`` fields, else ``None``.

    Plain: printable ASCII and tabs only (no quote), no line whose first non-blank
    character is the header's first one (only such lines can repeat the header) and
    ``width - 1`` separators per line on average (the CSV reader checks each line).
    """
    if not lines or head_start is None or not head_start.isalnum() or not joined.isascii():
        return None
    raw = joined.encode("ascii")
    if raw.translate(None, _TEXT) or b'"' in raw:
        return None
    # (a character of more than one byte cannot start a line of ASCII text)
    codes = [b[0] for b in (c.encode() for c in (" ", "\t", head_start.lower(), head_start.upper())) if len(b) == 1]
    if np.isin(_line_starts(raw), codes).any():
        return None
    if raw.count(sep.encode()) != (width - 1) * len(lines):
        return None
    return raw


def arrow_strings(raw: bytes, width: int, sep: str, rows: int) -> pd.DataFrame | None:
    """The cells of ``rows`` lines (``raw``, see :func:`uniform`) as Arrow-backed text, columns
    ``0..width-1``; ``None`` if a line has another number of fields."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    names = [str(i) for i in range(width)]
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw + b"\n"),
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False,
                                             ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows != rows:
        return None
    return pd.DataFrame({i: pd.Series(pd.arrays.ArrowStringArray(table.column(i).combine_chunks()))
                         for i in range(width)})


#: a decimal number of at most 15 characters: 15 digits at most, so that the correctly
#: rounded parse (Arrow) and pandas' ``to_numeric`` (an exact integer times or divided by
#: an exact power of ten, one rounding) give the same float
_DECIMAL = r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$"
#: ISO 8601 UTC time to the second, years a ``datetime64[ns]`` holds
_ISO_Z = r"^(?:1[7-9][0-9]{2}|2[01][0-9]{2}|22[0-5][0-9])-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"


def _arrow_of(values: pd.Series) -> pa.Array:
    import pyarrow as pa

    return pa.array(values, type=pa.string(), from_pandas=True)


def decimals(values: pd.Series, missing_tokens: frozenset[str]) -> pd.Series | None:
    """Text cells -> float64 when every cell, stripped, is a short decimal or a missing-value
    token (NaN); ``None`` otherwise (the caller's general conversion decides)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.utf8_trim_whitespace(_arrow_of(values))
    if text.null_count:
        return None
    number = pc.and_(pc.match_substring_regex(text, _DECIMAL), pc.less_equal(pc.utf8_length(text), 15))
    if pc.all(number).as_py():
        floats = pc.cast(text, pa.float64())
    else:
        missing = pc.is_in(pc.utf8_lower(text), value_set=pa.array(sorted(missing_tokens), type=pa.string()))
        if not pc.all(pc.or_(missing, number)).as_py():
            return None
        floats = pc.cast(pc.if_else(number, text, pa.scalar(None, pa.string())), pa.float64())
    return pd.Series(floats.to_numpy(zero_copy_only=False), index=values.index, dtype="float64")


def iso_utc(values: pd.Series) -> pd.Series | None:
    """Text cells ``YYYY-MM-DDTHH:MM:SSZ`` -> UTC times, ``None`` unless every cell is one."""
    import pyarrow.compute as pc

    text = pc.utf8_trim_whitespace(_arrow_of(values))
    if text.null_count or not pc.all(pc.match_substring_regex(text, _ISO_Z)).as_py():
        return None
    nanos = iso_nanos(text)
    if nanos is None:
        return None
    return pd.Series(nanos.view("datetime64[ns]"), index=values.index).dt.tz_localize("UTC")


#: (start, stop) of year, month, day, hour, minute and second in ``YYYY-MM-DDTHH:MM:SSZ``
_FIELDS = ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19))
#: days of each month of a common year (index 0 unused)
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
_ISO_WIDTH = 20


def iso_nanos(text: pa.Array) -> np.ndarray | None:
    """Nanoseconds since the epoch of cells that all match ``_ISO_Z`` (20 ASCII characters),
    computed from their digits; ``None`` if a cell names no calendar day or time of day
    (30 February, 29 February of a common year, hour 24, second 60) or the cells are not
    laid out as 20 bytes each.

    The fields are read from the string buffer as one ``(rows, 20)`` byte matrix, so a
    column costs a few array operations, not a parse per cell.
    """
    import pyarrow as pa

    n = len(text)
    wide = pa.types.is_large_string(text.type) or pa.types.is_large_binary(text.type)
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64 if wide else np.int32)[text.offset:text.offset + n + 1]
    start, stop = int(offsets[0]), int(offsets[-1])
    if n == 0 or stop - start != _ISO_WIDTH * n:
        return None
    cells = np.frombuffer(text.buffers()[2], dtype=np.uint8)[start:stop].reshape(n, _ISO_WIDTH).astype(np.int64) - 48
    year, month, day, hour, minute, second = (_number(cells, a, b) for a, b in _FIELDS)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    last = _MONTH_DAYS[np.clip(month, 0, 12)] + (leap & (month == 2))
    ok = ((month >= 1) & (month <= 12) & (day >= 1) & (day <= last) & (hour <= 23) & (minute <= 59)
          & (second <= 59))
    if not ok.all():
        return None
    return (_epoch_days(year, month, day) * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000_000


def _number(cells: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The decimal number of the digit columns ``start:stop`` of ``cells`` (digit values)."""
    out = cells[:, start].copy()
    for k in range(start + 1, stop):
        out = out * 10 + cells[:, k]
    return out


def _epoch_days(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (years >= 0), as ``date.toordinal``
    counts them (H. Hinnant's ``days_from_civil``: years start in March)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468

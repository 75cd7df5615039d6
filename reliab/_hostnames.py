"""Host names from untrusted text, made canonical: one machine, one name.

A log line is written by whoever can write to the log, and a host name of ``node01``
followed by a right-to-left override (U+202E), preceded by a zero-width space (U+200B),
split by a zero-width joiner (U+200D) or spelt in fullwidth letters (``ｎｏｄｅ01``) shows
as the same name in a table yet counts as another host: one node split into six look-alike
rows (and a lemon split in six).  Every host name stored is therefore:

1. NFKC-normalised (Unicode Standard Annex #15): compatibility forms such as fullwidth
   letters and digits become their ordinary letters;
2. stripped of every format character (general category ``Cf``: bidi controls U+202A-E
   and U+2066-9, zero-width U+200B-D, word joiner U+2060, byte-order mark U+FEFF, soft
   hyphen U+00AD…; Unicode Standard Annex #9 and Unicode Technical Standard #39 §3), which
   no host name needs and which only hide or reorder text.

Letters of other scripts that merely look alike (Cyrillic ``о`` for Latin ``o``) are kept
as they are: they may be real names, and telling them apart needs the confusables data of
UTS #39, which this module does not apply.  Names that are plain ASCII, as nearly all are,
are not touched (checked column-wise in Arrow first).  A reader's tables are made canonical
by :func:`reliab.io._hosttables.canonical_tables`.
"""

from __future__ import annotations

import unicodedata

import pandas as pd

#: columns holding host names (or Slurm host lists)
HOST_COLUMNS = frozenset({"host", "nodelist"})


def canonical_host(name: str) -> str:
    """``name`` NFKC-normalised, without format (``Cf``) characters (see the module doc)."""
    if name.isascii():
        return name
    text = unicodedata.normalize("NFKC", name)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _all_ascii(s: pd.Series) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = pa.array(s, type=pa.string(), from_pandas=True)
        return bool(pc.all(pc.string_is_ascii(arr)).as_py() in (True, None))
    except Exception:  # noqa: BLE001 - text Arrow cannot hold (lone surrogates): look value by value
        return all(v.isascii() for v in s.dropna().unique() if isinstance(v, str))


def canonical_hosts(s: pd.Series) -> pd.Series:
    """``s`` with :func:`canonical_host` applied to every name (the same object if all are ASCII)."""
    if s.empty or _all_ascii(s):
        return s
    uniques = s.dropna().unique()
    mapping = {v: canonical_host(v) for v in uniques if isinstance(v, str) and not v.isascii()}
    if not mapping:
        return s
    return s.map(lambda v: mapping.get(v, v) if isinstance(v, str) else v).astype(s.dtype)


__all__ = ["HOST_COLUMNS", "canonical_host", "canonical_hosts"]

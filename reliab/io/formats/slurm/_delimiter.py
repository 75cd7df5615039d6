"""The ``--delimiter`` of a ``sacct -p``/``-P`` capture, told from one of its lines.

``sacct(1)`` (Slurm 25.11, ``doc/man/man1/sacct.1``): ``--delimiter=<characters>`` is "the
characters used to separate fields when using the -p or -P printing option" (``|`` by
default).  Sites and tools pick their own — rug-cit-hpc/slurm-jobinfo runs
``sacct --parsable --noheader --delimiter=☃``.  The first field of every header and row is
``JobID`` (or ``JobIDRaw``) or a job id, so the character right after it is the delimiter.
"""

from __future__ import annotations

import re

#: a header's first field name or a row's job id (``123``, ``123_4``, ``123+0``, ``123.batch``)
_LEAD = re.compile(r"\s*(?:jobid(?:raw)?|[0-9]+(?:[_+][0-9]+)?(?:\.[A-Za-z0-9_]+)?)", re.IGNORECASE)


def delimiter_of(line: str) -> str | None:
    """The field delimiter of a ``sacct -p``/``-P`` header or row, ``None`` if there is none.

    Parameters
    ----------
    line : str
        A header (``JobID☃State☃…``) or a row (``20872560☃X0JV…☃…``).

    Returns
    -------
    str or None
        The one character after the first field; ``None`` for a fixed-width line (a blank
        follows the first field), for a line that does not start with ``JobID`` or a job id,
        and for a first field followed by a letter, digit or one of ``._+%``.  A delimiter of
        several characters cannot be told this way and must be given (``delimiter=``).
    """
    m = _LEAD.match(line)
    if m is None or m.end() >= len(line):
        return None
    char = line[m.end()]
    if char.isalnum() or char.isspace() or char in "._+%":
        return None
    return char


__all__ = ["delimiter_of"]

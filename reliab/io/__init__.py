"""Reading raw logs: the ingest engine and, in :mod:`reliab.io.formats`, one reader per log family.

The engine is the driver (:mod:`reliab.io._driver`: discover, sniff, read, assemble), the line
scanner with its accounting (:mod:`reliab.io._lines`, :mod:`reliab.io._prefilter`,
:mod:`reliab.io._fastscan`), file opening and decompression (:mod:`reliab.io._files`), the
parser registry (:mod:`reliab.io._registry`), the incremental store (:mod:`reliab.io._store`)
and the Dask driver (:mod:`reliab.io.distributed`).  The public entry point is
:func:`reliab.ingest`.
"""

from reliab.io._driver import available_sources, discover, ingest
from reliab.io._registry import FileResult, get_parser, register_parser
from reliab.io._result import IngestResult, SourceChoice

__all__ = ["ingest", "IngestResult", "SourceChoice", "available_sources", "discover",
           "FileResult", "get_parser", "register_parser"]

"""Reading raw logs: the ingest engine and, in :mod:`reliab.io.formats`, one reader per log family.

The engine is the driver (:mod:`reliab.io._driver`: discover, sniff, read, assemble), the line
scanner with its accounting (:mod:`reliab.io._lines`, :mod:`reliab.io._prefilter`,
:mod:`reliab.io._fastscan`), file opening and decompression (:mod:`reliab.io._files`), the
parser registry and the ``scheme://`` live-source seam (:mod:`reliab.io._registry`), input
discovery and the hand-over manifest (:mod:`reliab.io._discover`, :mod:`reliab.io._manifest`,
:mod:`reliab.io._plan`), the incremental store (:mod:`reliab.io._store` and its helpers)
the Dask driver (:mod:`reliab.io.distributed`) and the local engine's streaming output
(:mod:`reliab.io._streamed`, tables written as partitioned Parquet, :mod:`reliab.io._partitioned`).  The public entry point is
:func:`reliab.ingest`.
"""

from reliab.io._driver import available_sources, discover, ingest
from reliab.io._manifest import ManifestError, load_manifest
from reliab.io._registry import FileResult, get_parser, register_parser, register_source
from reliab.io._result import IngestResult, OutputIngestResult, SourceChoice

__all__ = ["ingest", "IngestResult", "OutputIngestResult", "SourceChoice", "available_sources", "discover",
           "FileResult", "get_parser", "register_parser", "register_source", "load_manifest", "ManifestError"]

"""Reading raw logs: the ingest engine and, in :mod:`reliab.io.formats`, one reader per log family.

The engine is the pipeline (:mod:`reliab.io._driver`: plan, read, merge, attribute; its modes in
:mod:`reliab.io._modes`, reading one file in :mod:`reliab.io._readfile`), the line
scanner with its accounting (:mod:`reliab.io._lines`, :mod:`reliab.io._prefilter`,
:mod:`reliab.io._fastscan`), file opening and decompression (:mod:`reliab.io._files`), the
parser registry and the ``scheme://`` live-source seam (:mod:`reliab.io._registry`), input
discovery and the hand-over manifest (:mod:`reliab.io._discover`, :mod:`reliab.io._manifest`,
:mod:`reliab.io._plan`), the incremental store (:mod:`reliab.io._store` and its helpers)
the Dask driver (:mod:`reliab.io.distributed`) and the local engine's streaming output
(:mod:`reliab.io._streamed`, tables written as partitioned Parquet, :mod:`reliab.io._partitioned`).  The public entry point is
:func:`reliab.ingest`.
"""

from reliab._lazy import lazy_exports
from reliab.io._driver import available_sources, discover, ingest
from reliab.io._manifest import ManifestError, load_manifest
from reliab.io._registry import FileResult, get_parser, register_parser, register_source
from reliab.io._result import IngestResult, OutputIngestResult, SourceChoice

# public names of the engine's parts, imported on first use (PEP 562)
_LAZY: dict[str, str] = {
    "run_keys": "reliab.io._driver",
    "dask_client": "reliab.io.distributed",
    "read_table": "reliab.io._partitioned",
    "read_manifest": "reliab.io._partitioned",
    "part_files": "reliab.io._partitioned",
    "parts_in_order": "reliab.io._partitioned",
    "read_rows": "reliab.io._partitioned",
    "MANIFEST": "reliab.io._partitioned",
    "DERIVED": "reliab.io._partitioned",
    "reader_options": "reliab.io._options",
    "doc_lines": "reliab.io._options",
    "convert_text": "reliab.io._options",
    "toml_time_text": "reliab.io._options",
    "value_problem": "reliab.io._options",
    "hide_password": "reliab.io._redact",
    "url_scheme": "reliab.io._registry",
    "parsers": "reliab.io._registry",
    "compression_of": "reliab.io._files",
    "quarantined_lines": "reliab.io._quarantine",
    "OMITTED": "reliab.io._quarantine",
    "inferred_times": "reliab.io._result",
    "set_aside": "reliab.io._result",
    "NOT_OPENED": "reliab.io._discover",
}

__getattr__ = lazy_exports(__name__, _LAZY)[0]

__all__ = ["ingest", "IngestResult", "OutputIngestResult", "SourceChoice", "available_sources", "discover",
           "FileResult", "get_parser", "register_parser", "register_source", "load_manifest", "ManifestError",
           *_LAZY]


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

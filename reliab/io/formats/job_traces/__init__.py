"""Public GPU-cluster job traces, each mapped to the ``jobs`` table.

* :mod:`~reliab.io.formats.job_traces.philly` — Microsoft Philly ``cluster_job_log`` (JSON),
  source ``philly``;
* :mod:`~reliab.io.formats.job_traces.helios` — SenseTime Helios ``cluster_log.csv`` and
  Shanghai AI Lab Acme ``trace_seren.csv``/``trace_kalos.csv``, sources ``helios``, ``acme``;
* :mod:`~reliab.io.formats.job_traces.pai` — Alibaba PAI ``pai_job_table`` and
  ``pai_task_table``, sources ``pai_job``, ``pai_task``.

Each reader maps its trace's state vocabulary onto Slurm's job state names (its docstring
and ``docs/raw-formats.md`` list the mapping) and makes the time zone of its times explicit.
"""

from reliab.io.formats.job_traces import (
    helios,  # noqa: F401  (helios, acme)
    pai,  # noqa: F401  (pai_job, pai_task)
    philly,  # noqa: F401
)

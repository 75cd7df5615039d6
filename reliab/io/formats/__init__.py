"""One module (or small package) per log family; importing this package registers them all.

The import order below is the registration order, which breaks ties between parsers that
score a file equally when sniffing.  To add a format, write one module here that decorates
its reader with :func:`reliab.io._registry.register_parser`, and import it below.
"""

from reliab.io.formats import (
    bgl,  # noqa: F401
    flight_recorder,  # noqa: F401
    job_traces,  # noqa: F401  (philly, helios, acme, pai_job, pai_task)
    kernel,  # noqa: F401
    lanl,  # noqa: F401
    lanl_hpc,  # noqa: F401
    lifetimes,  # noqa: F401  (inventories and replacement logs)
    nccl,  # noqa: F401
    sandia_syslog,  # noqa: F401
    sel,  # noqa: F401
    slurm,  # noqa: F401  (sacct, sacct_json)
    tickets,  # noqa: F401
)
from reliab.io.formats.telemetry import (
    delimited,  # noqa: F401  (telemetry_csv, nvidia_smi_csv)
    nvidia_smi,  # noqa: F401  (nvidia_smi_q, dmon, dcgm)
    parquet,  # noqa: F401
)

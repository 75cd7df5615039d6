"""A report for the user's own cluster: fleet and exposure, every analysis, archive, run.

* :func:`fleet_facts` — window and GPU-days at risk, and how they were derived;
* :func:`analyze` — every analysis the report shows, each a result or a
  :class:`~reliab.NotAvailable` with the reason;
* :func:`run_report` — logs in, report, archive and tables out (``reliab report``);
* :func:`load_config` — the same run described in a TOML file (quarterly analyses);
* :func:`load_archive` — an earlier run's ``results.json``, for the period comparison.
"""

from reliab.study._analyses import analyze
from reliab.study._archive import archive, load_archive, write_archive
from reliab.study._config import ReportConfig, load_config
from reliab.study._fleet import Fleet, fleet_facts, read_inventory
from reliab.study._run import ReportRun, input_digests, run_report

__all__ = ["Fleet", "ReportConfig", "ReportRun", "analyze", "archive", "fleet_facts", "input_digests",
           "load_archive", "load_config", "read_inventory", "run_report", "write_archive"]

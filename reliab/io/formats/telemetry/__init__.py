"""GPU telemetry readers: nvidia-smi (CSV, ``-q``, ``dmon``), dcgm-exporter, generic CSV/Parquet."""

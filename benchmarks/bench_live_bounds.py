"""Peak RSS and time of the live sources against endless and slow answers.

Run: ``python benchmarks/bench_live_bounds.py [--max-bytes N]`` (from the repository root).

Cases: a fake Prometheus (``tests/test_live_hostile.py``, on 127.0.0.1) whose answer never
ends, one that sends a byte every 0.5 s (``timeout_s=2``), and a stand-in ``sacct`` whose
output never ends (``yes``).  Each is read by ``reliab.ingest`` in a fresh interpreter
(its own session, killed with its children after ``--cap`` seconds) whose peak RSS
(``VmHWM``) is sampled every 0.1 s.  The interpreter's start (imports, about 3 s here) is
in the time.  ``BEFORE`` is what the same cases did before the bounds (measured on this
machine with a 10 s cap): they grew without end.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_live_hostile as fake  # noqa: E402 - the fake servers of the tests

BEFORE = {"prometheus endless": "still reading after 10 s: 1,937 MiB",
          "prometheus drip, timeout_s=2": "still reading after 10 s (the 64-byte answer takes 32 s)",
          "sacct endless": "still reading after 10 s: 2,144 MiB (12.5 GiB after 60 s)"}
SACCT = """#!/bin/sh
case "$1" in
  --version) echo "slurm 22.05.8";;
  --helpformat) echo "JobID JobIDRaw JobName User Partition State ExitCode Start End NNodes NodeList";;
  *) exec yes "7|7|train|alice|gpu|COMPLETED|0:0|2024-06-01T01:00:00|2024-06-01T02:00:00|1|n1";;
esac
"""


def measure(code: str, cap: float) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, last error line) of ``python -c code``."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    peak = 0
    while proc.poll() is None and time.monotonic() - t0 < cap:
        try:
            with open(f"/proc/{proc.pid}/status") as status:
                peak = max(peak, next(int(ln.split()[1]) for ln in status if ln.startswith("VmHWM")))
        except (OSError, StopIteration):
            pass
        time.sleep(0.1)
    took = time.monotonic() - t0
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return took, peak / 1024, "still running (killed)"
    errors = [ln for ln in proc.stderr.read().splitlines() if "Error" in ln]  # type: ignore[union-attr]
    return took, peak / 1024, errors[-1][:160] if errors else "no error"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-bytes", type=int, default=None, help="max_bytes= (default: the sources' own)")
    parser.add_argument("--cap", type=float, default=60.0, help="kill a case after this many seconds")
    args = parser.parse_args()
    server = fake._serve("127.0.0.1", [])
    base = f"prometheus://admin:{fake.PASSWORD}@127.0.0.1:{server.server_address[1]}"
    limit = "" if args.max_bytes is None else f", max_bytes={args.max_bytes}"
    window = f"start={fake.START!r}, end={fake.END!r}"
    with tempfile.TemporaryDirectory() as tmp:
        sacct = Path(tmp) / "sacct"
        sacct.write_text(SACCT)
        sacct.chmod(0o755)
        cases = {
            "prometheus endless": f"reliab.ingest('{base}/endless', {window}, timeout_s=600{limit})",
            "prometheus drip, timeout_s=2": f"reliab.ingest('{base}/drip', {window}, timeout_s=2{limit})",
            "sacct endless": f"reliab.ingest('slurm://', start='2024-06-01', end='2024-06-02', sacct_command="
                             f"'{sacct}', timeout_s=600, events=False{limit})",
        }
        print(f"{'case':30s} {'time':>7s} {'peak RSS':>10s}  outcome | before")
        for name, call in cases.items():
            took, rss, outcome = measure(f"import reliab; {call}", args.cap)
            print(f"{name:30s} {took:6.1f}s {rss:7.0f} MiB  {outcome} | {BEFORE[name]}", flush=True)
    server.shutdown()
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs ({time.strftime('%Y-%m-%d %H:%M')})")


if __name__ == "__main__":
    main()

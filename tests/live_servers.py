"""Real servers for the live-source tests, started in the foreground under a temporary folder.

Slurm: ``munged``, ``mariadbd``, ``slurmdbd``, ``slurmctld`` and three ``slurmd`` (``-N rn1..rn3``,
one ``Port`` each) on 127.0.0.1, each with its own configuration, sockets, pid, state and log
files; no systemd, no file outside the folder.  Prometheus: ``promtool tsdb
create-blocks-from openmetrics`` into a fresh storage folder, then ``prometheus`` on 127.0.0.1.
Every process is a :class:`subprocess.Popen` of this module and is stopped by its pid.
Debian bookworm packages: slurmctld, slurmd, slurmdbd, slurm-client, munge, mariadb-server,
prometheus (which ships promtool).
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

SLURM_BINARIES = ("munged", "mungekey", "mariadb-install-db", "mariadbd", "mariadb", "slurmdbd",
                  "slurmctld", "slurmd", "sacct", "sacctmgr", "sbatch", "scontrol", "scancel", "squeue")
PROMETHEUS_BINARIES = ("prometheus", "promtool")
NODES = ("rn1", "rn2", "rn3")


def missing(binaries: tuple[str, ...]) -> list[str]:
    """Binaries of ``binaries`` that are not on PATH (nor in /usr/sbin, /sbin)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    return [b for b in binaries if shutil.which(b, path=path) is None]


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports free on 127.0.0.1 right now."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_for(check, what: str, timeout_s: float = 60.0, every_s: float = 0.2):
    """Call ``check()`` until it returns a truthy value; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (OSError, subprocess.SubprocessError) as exc:
            last = exc
        time.sleep(every_s)
    raise TimeoutError(f"{what} not ready after {timeout_s:g} s" + (f" ({last})" if last else ""))


class Daemons:
    """Processes started here, stopped in reverse order by pid."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin"}

    def start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        log = open(self.root / f"{name}.out", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**self.env, **(env or {})}, start_new_session=True)
        log.close()
        self.procs.append((name, proc))
        return proc

    def check_alive(self) -> None:
        for name, proc in self.procs:
            if proc.poll() is not None:
                tail = (self.root / f"{name}.out").read_text(errors="replace")[-1500:]
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def stop(self) -> None:
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        self.procs.clear()


def run(args: list[str], env: dict[str, str], check: bool = True, timeout: float = 60) -> str:
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


# ---------------------------------------------------------------- Slurm
class SlurmCluster:
    """munge + MariaDB + slurmdbd + slurmctld + three slurmd on one host, under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.daemons = Daemons(root)
        self.user = getpass.getuser()
        self.conf = root / "etc" / "slurm.conf"
        self.env = {**self.daemons.env, "SLURM_CONF": str(self.conf)}

    # -- configuration
    def _write_config(self, ports: dict[str, int]) -> None:
        r = self.root
        for d in ("etc", "state", "log", "run", "db", *(f"spool/{n}" for n in NODES)):
            (r / d).mkdir(parents=True, exist_ok=True)
        munge = r / "munge"
        munge.mkdir(mode=0o755, exist_ok=True)
        sock = munge / "munge.socket"
        dbd = (f"AuthType=auth/munge\nAuthInfo=socket={sock}\nDbdHost=localhost\nDbdAddr=127.0.0.1\n"
               f"DbdPort={ports['dbd']}\nSlurmUser={self.user}\nLogFile={r}/log/slurmdbd.log\n"
               f"PidFile={r}/run/slurmdbd.pid\nStorageType=accounting_storage/mysql\n"
               f"StorageHost=127.0.0.1\nStoragePort={ports['db']}\nStorageUser=slurm\n"
               f"StoragePass=reliab\nStorageLoc=slurm_acct_db\n")
        (r / "etc" / "slurmdbd.conf").write_text(dbd)
        os.chmod(r / "etc" / "slurmdbd.conf", 0o600)
        nodes = "".join(f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={ports[n]} "
                        "CPUs=2 RealMemory=500 State=UNKNOWN\n" for n in NODES)
        conf = (
            f"ClusterName=reliabtest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={ports['ctld']}\n"
            f"SlurmUser={self.user}\nSlurmdUser={self.user}\nAuthType=auth/munge\nAuthInfo=socket={sock}\n"
            f"CredType=cred/munge\nAccountingStoragePass={sock}\nStateSaveLocation={r}/state\n"
            f"SlurmdSpoolDir={r}/spool/%n\nSlurmctldPidFile={r}/run/slurmctld.pid\n"
            f"SlurmdPidFile={r}/run/slurmd-%n.pid\nSlurmctldLogFile={r}/log/slurmctld.log\n"
            f"SlurmdLogFile={r}/log/slurmd-%n.log\nProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
            "JobAcctGatherType=jobacct_gather/none\nSwitchType=switch/none\nMpiDefault=none\n"
            "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
            f"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\n"
            f"AccountingStoragePort={ports['dbd']}\nJobCompType=jobcomp/none\nReturnToService=1\n"
            "KillWait=2\nMinJobAge=2\nSlurmctldTimeout=30\nSlurmdTimeout=30\nInactiveLimit=0\nWaittime=0\n"
            "DebugFlags=NO_CONF_HASH\n" + nodes
            + "PartitionName=debug Nodes=rn[1-3] Default=YES MaxTime=INFINITE State=UP\n")
        self.conf.write_text(conf)

    # -- daemons
    def _start_munge(self) -> None:
        m = self.root / "munge"
        run(["mungekey", "--create", f"--keyfile={m}/munge.key"], self.env)
        self.daemons.start("munged", ["munged", "--foreground", "--force", f"--key-file={m}/munge.key",
                                      f"--socket={m}/munge.socket", f"--pid-file={m}/munged.pid",
                                      f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed"])
        wait_for(lambda: (m / "munge.socket").exists(), "munged")

    def _start_mariadb(self, port: int) -> None:
        data, sock = self.root / "db" / "data", self.root / "db" / "mysqld.sock"
        as_root = ["--user=root"] if os.geteuid() == 0 else []
        run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", *as_root,
             "--auth-root-authentication-method=normal", "--skip-test-db"], self.env, timeout=120)
        self.daemons.start("mariadbd", ["mariadbd", "--no-defaults", f"--datadir={data}", *as_root,
                                        f"--socket={sock}", f"--port={port}", "--bind-address=127.0.0.1",
                                        f"--pid-file={self.root}/db/mysqld.pid", "--skip-name-resolve",
                                        "--innodb-buffer-pool-size=32M", f"--log-error={self.root}/db/error.log"])
        client = ["mariadb", "--no-defaults", f"--socket={sock}", "-uroot"]
        wait_for(lambda: subprocess.run([*client, "-e", "select 1"], env=self.env, capture_output=True,
                                        check=False).returncode == 0, "mariadbd", 60)
        run([*client, "-e", "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'reliab';"
             " GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';"], self.env)

    def start(self) -> SlurmCluster:
        names = ["db", "dbd", "ctld", *NODES]
        ports = dict(zip(names, free_ports(len(names)), strict=True))
        self._write_config(ports)
        self._start_munge()
        self._start_mariadb(ports["db"])
        self.daemons.start("slurmdbd", ["slurmdbd", "-D"], self.env)
        wait_for(lambda: self.sacctmgr_ok(), "slurmdbd", 60)
        run(["sacctmgr", "-i", "add", "cluster", "reliabtest"], self.env)
        self.daemons.start("slurmctld", ["slurmctld", "-D", "-i"], self.env)
        wait_for(lambda: subprocess.run(["scontrol", "ping"], env=self.env, capture_output=True, text=True,
                                        check=False).stdout.count("UP") > 0, "slurmctld", 60)
        for n in NODES:
            self.daemons.start(f"slurmd-{n}", ["slurmd", "-D", "-N", n], self.env)
        wait_for(lambda: self.idle_nodes() == len(NODES), "three idle slurmd", 60)
        return self

    def sacctmgr_ok(self) -> bool:
        self.daemons.check_alive()
        return subprocess.run(["sacctmgr", "-n", "show", "cluster"], env=self.env, capture_output=True,
                              check=False, timeout=20).returncode == 0

    def idle_nodes(self) -> int:
        self.daemons.check_alive()
        out = run(["sinfo", "-h", "-N", "-o", "%N %t"], self.env, check=False)
        return sum(1 for line in out.splitlines() if line.split()[-1:] == ["idle"])

    # -- jobs
    def sbatch(self, name: str, *args: str, wrap: str) -> str:
        out = run(["sbatch", "--parsable", "-J", name, f"--chdir={self.root}", "-o", f"{self.root}/log/{name}-%j.out",
                   *args, "--wrap", wrap], self.env)
        return out.strip().split(";")[0]

    def squeue_state(self, job_id: str) -> str:
        return run(["squeue", "-h", "-j", job_id, "-o", "%T"], self.env, check=False).strip()

    def wait_running(self, job_id: str) -> None:
        wait_for(lambda: self.squeue_state(job_id) == "RUNNING", f"job {job_id} running", 60)

    def wait_queue_empty(self, timeout_s: float) -> None:
        wait_for(lambda: run(["squeue", "-h"], self.env).strip() == "", "all jobs ended", timeout_s, 1.0)

    def stop(self) -> None:
        subprocess.run(["scancel", f"--user={self.user}"], env=self.env, capture_output=True, check=False)
        subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True, check=False, timeout=30)
        time.sleep(1)
        self.daemons.stop()


# ---------------------------------------------------------------- Prometheus
class PrometheusServer:
    """A Prometheus on 127.0.0.1 whose storage is backfilled from OpenMetrics text."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.daemons = Daemons(root)
        self.port = 0
        self.data = root / "data"

    @property
    def url(self) -> str:
        return f"prometheus://127.0.0.1:{self.port}"

    def start(self, history: list[str], *, max_samples: int | None = None,
              data: Path | None = None) -> PrometheusServer:
        """Backfill ``history`` (OpenMetrics texts) unless ``data`` holds blocks already; serve."""
        if data is None:
            data = self.root / "data"
            for k, text in enumerate(history):
                source = self.root / f"history-{k:04d}.om"
                source.write_text(text)
                run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(source), str(data)],
                    self.daemons.env, timeout=300)
                source.unlink()
        self.data = data
        (self.root / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
        self.port = free_ports(1)[0]
        extra = [f"--query.max-samples={max_samples}"] if max_samples else []
        self.daemons.start("prometheus", [
            "prometheus", f"--config.file={self.root}/prometheus.yml", f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=100y", *extra])

        def ready() -> bool:
            self.daemons.check_alive()
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:  # noqa: S310
                return r.status == 200

        wait_for(ready, "prometheus", 60)
        return self

    def stop(self) -> None:
        self.daemons.stop()



def openmetrics(families: dict[str, list[tuple[dict[str, str], list[int], list[float]]]], *,
                span_s: int = 86_400) -> list[str]:
    """OpenMetrics texts with timestamps (seconds), one per ``span_s`` of time, for backfilling.

    ``families``: metric name -> [(labels, epoch seconds, values)], one entry per series.
    Values are written with ``repr`` (the shortest text that reads back as the same double),
    so the samples stored are exactly the floats given.  ``promtool tsdb create-blocks-from
    openmetrics`` reads its whole input once per 2-hour block it writes, so the history is
    cut into day-long files (each read 12 times) rather than one file read once per block.
    """
    buckets: dict[int, list[str]] = {}
    for name, series in families.items():
        for labels, times, values in series:
            inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
            head = f"{name}{{{inner}}} "
            for t, v in zip(times, values, strict=True):
                buckets.setdefault(int(t) // span_s, []).append(f"{head}{float(v)!r} {int(t)}")
    texts = []
    for key in sorted(buckets):
        lines, family = [], None
        for line in buckets[key]:
            name = line.split("{", 1)[0]
            if name != family:
                lines.append(f"# TYPE {name} gauge")
                family = name
            lines.append(line)
        texts.append("\n".join([*lines, "# EOF"]) + "\n")
    return texts

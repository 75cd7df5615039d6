"""Lemon nodes: hosts that fail far more often than the fleet, with the evidence behind them.

Two views, reported side by side:

* **Excess failures.**  Under a homogeneous fleet each node's count of hardware
  interruptions is Poisson with mean (fleet rate × its hours at risk).  The upper tail
  probability P(X ≥ k) is the node's p-value; Benjamini–Hochberg (1995) controls the false
  discovery rate across nodes.
* **Multi-signal score.**  Meta's RSC study (Kokolis et al., "Revisiting Reliability in
  Large-Scale Machine Learning Research Clusters", HPCA 2025, arXiv 2410.21680, §V, lemon-node
  detection; the signal list was read in a summary quoting the paper, not in its full text)
  found these per-node signals correlate most with lemons: distinct XIDs (``xid_cnt``), tickets,
  times taken out of service (``out_count``), multi- and single-node job failures.  Each
  independent count (failures, distinct XIDs, tickets, link flaps) is log-transformed and
  standardised across the fleet; their sum is the score, and the table is ranked by it.  An
  isolation forest (Liu, Ting & Zhou 2008; scikit-learn) gives a second, model-based anomaly
  score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError

FEATURES = ("failures", "xid_cnt", "tickets", "out_count", "multi_node_node_fails",
            "single_node_node_fails", "link_flaps")


@dataclass(frozen=True)
class LemonsResult(ResultMixin):
    """Nodes ranked by the multi-signal score, with the excess-failure test beside it.

    ``table`` has one row per host: ``rank``, ``host``, ``lemon`` (flagged), ``failures``,
    ``expected``, ``ratio`` with its exact Poisson interval ``ratio_low``/``ratio_high``
    (at ``conf_level``), ``pvalue``, ``qvalue`` (BH), ``score``, ``anomaly_score``, the
    feature columns and ``evidence`` (a readable sentence).
    """

    table: pd.DataFrame = field(repr=False)
    fleet_rate_per_1k_node_days: float
    n_nodes: int
    n_failures: int
    node_hours: float
    fdr: float
    method: str = "Poisson upper tail + Benjamini-Hochberg; sum of z-scores of log counts; isolation forest"
    notes: tuple[str, ...] = ()
    conf_level: float = 0.95

    @property
    def n(self) -> int:
        """Nodes ranked."""
        return self.n_nodes

    def summary(self) -> pd.DataFrame:
        return self.table[self.table["lemon"]].copy() if self.table["lemon"].any() else self.table.head(10).copy()

    def invariants(self) -> tuple[Check, ...]:
        """Counts >= 0; p and q values in [0, 1]; each failure ratio inside its interval;
        lemons flagged only at q < fdr."""
        tb = self.table
        return (in_range("counts_nonnegative", tb[["failures", "expected"]].to_numpy(), 0),
                in_range("p_q_in_unit_interval", tb[["pvalue", "qvalue"]].to_numpy(), 0, 1),
                contains("ratio_in_interval", tb["ratio_low"], tb["ratio"], tb["ratio_high"]),
                in_range("lemons_below_fdr", tb.loc[tb["lemon"], "qvalue"], 0, self.fdr))

    def top(self, n: int = 10) -> pd.DataFrame:
        """The ``n`` highest-ranked hosts."""
        return self.table.head(n).copy()

    @property
    def lemons(self) -> list[str]:
        """Hosts flagged as lemons, best evidence first."""
        return self.table.loc[self.table["lemon"], "host"].tolist()

    def plot(self, ax: Any = None, *, n: int = 20) -> Any:
        """Bar chart of the top ``n`` scores, lemons highlighted; returns the Figure."""
        fig, ax = new_figure(ax, (7, 0.25 * n + 1))
        top = self.table.head(n).iloc[::-1]
        ax.barh(top["host"], top["score"], color=np.where(top["lemon"], "#c0392b", "#95a5a6"))
        ax.set_xlabel("multi-signal score (sum of z-scores)")
        ax.set_title("Lemon candidates")
        return fig


def _count_by_host(signals: pd.DataFrame, mask: pd.Series) -> pd.Series:
    return signals.loc[mask & signals["host"].notna(), "host"].value_counts()


def failure_events(failures: pd.DataFrame) -> pd.DataFrame:
    """Failure records (schema ``failures``) as interruption-like rows: one event per record,
    ``hosts`` its unit, ``job_id`` its origin (a record is its own event: no job is involved)."""
    return pd.DataFrame({"hosts": failures["unit"].astype("object"), "component": failures["component"].astype("object"),
                         "planned": False, "job_id": failures["origin"].astype("object")})


def node_features(signals: pd.DataFrame, interruptions: pd.DataFrame, *, jobs: pd.DataFrame | None = None,
                  components: tuple[str, ...] = ("GPU", "Host", "Network"),
                  failures: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-host evidence: the RSC lemon signals computed from reliab's canonical tables.

    ``out_count`` counts distinct interruptions whose root cause named the host (each one
    takes the node out of service); where a ``slurm:drain`` signal exists it is added.
    Failure records (``failures``, schema ``failures``) count one event each, beside the
    interruptions; interruptions without job ids count one event per row.
    """
    if "job_id" not in interruptions.columns:
        interruptions = interruptions.assign(job_id=[f"row:{i}" for i in range(len(interruptions))])
    if failures is not None and len(failures):
        events = failure_events(failures)
        interruptions = events if not len(interruptions) else pd.concat(
            [interruptions[["hosts", "component", "planned", "job_id"]].astype("object"), events], ignore_index=True)
    sig = signals.astype({"signal": "string"})
    key = sig["signal"].fillna("")
    xid = sig[key.str.startswith("xid:") & sig["host"].notna()]
    feats = pd.DataFrame({
        "xid_cnt": xid.groupby("host")["signal"].nunique(),
        "tickets": _count_by_host(sig, key.str.startswith("ticket:")),
        "link_flaps": _count_by_host(sig, key.isin(["nic:link_down", "nic:lost_carrier"])),
        "drains": _count_by_host(sig, key.str.startswith("slurm:drain")),
    })
    inter = interruptions[~interruptions["planned"].astype(bool)]
    inter = inter[inter["component"].isin(components) & inter["hosts"].notna()]
    hosts = inter.assign(host=inter["hosts"].astype(str).str.split(",")).explode("host")
    hosts["host"] = hosts["host"].str.strip()
    hosts = hosts.reset_index(drop=True)
    multi = pd.Series(True, index=hosts.index)
    if jobs is not None and "nnodes" in jobs:
        nnodes = hosts["job_id"].map(jobs.drop_duplicates("job_id").set_index("job_id")["nnodes"])
        multi = nnodes.fillna(2).astype(float) > 1
    failures = pd.DataFrame({
        "failures": hosts.groupby("host")["job_id"].nunique(),
        "multi_node_node_fails": hosts[multi].groupby("host")["job_id"].nunique(),
        "single_node_node_fails": hosts[~multi].groupby("host")["job_id"].nunique(),
    })
    feats = feats.join(failures, how="outer").fillna(0).astype(int)
    feats["out_count"] = feats["failures"] + feats.pop("drains")
    return feats


#: one term per independent piece of evidence: failure-derived features (multi/single-node
#: fails, times taken out) restate ``failures`` and would count it several times
SCORE_FEATURES = ("failures", "xid_cnt", "tickets", "link_flaps")


def _z(x: pd.Series) -> pd.Series:
    """Standardised log1p counts (mean/sd: sparse counts have a zero MAD)."""
    v = np.log1p(x.astype(float))
    sd = v.std(ddof=0)
    return (v - v.mean()) / (sd if sd > 0 else 1.0)


def _anomaly(features: pd.DataFrame, seed: int) -> np.ndarray:
    from sklearn.ensemble import IsolationForest

    if len(features) < 8:
        return np.full(len(features), np.nan)
    model = IsolationForest(n_estimators=100, random_state=seed).fit(np.log1p(features.to_numpy(float)))
    return -model.score_samples(np.log1p(features.to_numpy(float)))


def _evidence(row: pd.Series) -> str:
    parts = [f"{int(row['failures'])} hardware interruptions vs {row['expected']:.2f} expected (q={row['qvalue']:.2g})"]
    for name, label in (("xid_cnt", "distinct XIDs"), ("tickets", "tickets"), ("link_flaps", "link flaps")):
        if row[name] > 0:
            parts.append(f"{int(row[name])} {label}")
    return "; ".join(parts)


def find_lemons(signals: pd.DataFrame, interruptions: pd.DataFrame, *, node_hours: pd.Series | float,
                hosts: list[str] | None = None, jobs: pd.DataFrame | None = None, fdr: float = 0.05,
                components: tuple[str, ...] = ("GPU", "Host", "Network"), anomaly: bool = True,
                seed: int = 0, conf_level: float = 0.95, failures: pd.DataFrame | None = None,
                groups: pd.Series | None = None) -> LemonsResult:
    """Rank nodes by excess hardware failures and by the RSC multi-signal score.

    Parameters
    ----------
    signals, interruptions : DataFrame
        Canonical tables (``reliab.ingest`` output); interruptions carry ``hosts``,
        ``component`` and ``planned``.
    node_hours : Series or float
        Hours at risk per host (index = host), or one number for every host.
    hosts : list of str, optional
        The fleet; default every host seen in ``node_hours`` (if a Series) or the signals.
    fdr : float
        False discovery rate for the Benjamini–Hochberg flag.
    components : tuple of str
        Component classes counted as node failures (software and unknown are not).
    anomaly : bool
        Also compute the isolation-forest anomaly score (NaN when False).
    seed : int
        Seed of the isolation forest.
    conf_level : float
        Level of the exact Poisson interval of each node's ratio of observed to expected
        failures (Garwood 1936).
    failures : DataFrame, optional
        Failure records (schema ``failures``, e.g. the LANL release): each record of a
        counted component is one node failure, with or without job records.
    groups : Series, optional
        Host -> group (e.g. system): a node's expected failures use its group's rate, so
        nodes of a system that fails often are compared with their own system's nodes.

    Returns
    -------
    LemonsResult
        Table ranked by the multi-signal score; ``lemon`` flags the nodes whose excess
        failures pass the Benjamini–Hochberg test.

    Raises
    ------
    InsufficientDataError
        With no node failures at all (nothing to compare against).
    """
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.rates import confint_poisson

    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if not 0.0 < fdr < 1.0:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    feats = node_features(signals, interruptions, jobs=jobs, components=components, failures=failures)
    if isinstance(node_hours, pd.Series):
        fleet = list(node_hours.index) if hosts is None else hosts
        hours = node_hours.reindex(fleet).astype(float)
    else:
        fleet = hosts if hosts is not None else sorted(set(signals["host"].dropna()) | set(feats.index))
        hours = pd.Series(float(node_hours), index=fleet)
    if (hours < 0).any() or np.isinf(hours).any():
        raise ValueError("node_hours must be finite and >= 0; "
                         f"{int(((hours < 0) | np.isinf(hours)).sum())} value(s) are not")
    if hours.isna().any():
        raise ValueError(f"node_hours has no value for {int(hours.isna().sum())} host(s), e.g. {hours[hours.isna()].index[0]!r}")
    feats = feats.reindex(fleet, fill_value=0)
    total_fail, total_hours = int(feats["failures"].sum()), float(hours.sum())
    if total_fail == 0:
        raise InsufficientDataError(f"no hardware interruptions on {len(fleet)} nodes: cannot rank lemons")
    if groups is None:
        expected = total_fail / total_hours * hours
    else:
        group = groups.reindex(fleet).astype("object").fillna("(none)")
        rate = feats["failures"].groupby(group.to_numpy()).sum() / hours.groupby(group.to_numpy()).sum()
        expected = pd.Series(rate.reindex(group.to_numpy()).to_numpy(), index=hours.index) * hours
    p = stats.poisson.sf(feats["failures"].to_numpy() - 1, expected.to_numpy())
    q = multipletests(p, alpha=fdr, method="fdr_bh")[1]
    lo, hi = confint_poisson(feats["failures"].to_numpy(dtype=float), expected.to_numpy(dtype=float),
                             method="exact-c", alpha=1.0 - conf_level)
    table = feats.assign(expected=expected, ratio=feats["failures"] / expected, ratio_low=lo,
                         ratio_high=hi, pvalue=p, qvalue=q)
    z = pd.concat([_z(feats[f]) for f in SCORE_FEATURES if feats[f].any()], axis=1)
    table["score"] = z.sum(axis=1) if z.shape[1] else 0.0
    table["anomaly_score"] = _anomaly(feats[list(FEATURES)], seed) if anomaly else np.nan
    table["lemon"] = (table["qvalue"] < fdr) & (table["failures"] >= 2)
    table = table.rename_axis("host").reset_index()
    table = table.sort_values(["score", "qvalue"], ascending=[False, True], kind="stable")
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table["evidence"] = table.apply(_evidence, axis=1)
    table = table.reset_index(drop=True)
    notes: tuple[str, ...] = ("a node needs at least 2 hardware interruptions to be flagged",)
    if groups is not None:
        notes += ("expected failures per node from its own group's rate (failures / node-hours of the group)",)
    return LemonsResult(table=table, fleet_rate_per_1k_node_days=1000.0 * 24 * total_fail / total_hours,
                        n_nodes=len(fleet), n_failures=total_fail, node_hours=total_hours, fdr=fdr, notes=notes,
                        conf_level=conf_level)

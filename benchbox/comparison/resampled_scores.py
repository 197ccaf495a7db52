"""A task's main score recomputed from per-item rows under bootstrap weights: the per-replicate scores the
leaderboard's intervals and ranks come from (:mod:`benchbox.comparison.leaderboard`, :mod:`benchbox.stats.ranking`).

Each replicate is a row of a weight matrix ``W`` [B, items] (how many times each item was drawn,
:func:`benchbox.stats.ranking.cluster_weights`); the statistic is the metric's own, weighted, by its kind
(:mod:`benchbox.task_contract.paired_tests`):

- ``correlation``: Pearson per subset (Spearman: Pearson of the ranks of the full subset, ranked once as the
  sentence-group jackknife does); ``<method>_mean`` the unweighted mean over subsets, ``_wmean`` weighted by
  subset size, ``_pooled`` one correlation over every item (SentEval's aggregates);
- ``classification``: the proportion correct (× 100 for a percentage);
- ``ranks``: ``r<K>`` the proportion of queries with rank ≤ K (× 100 for a percentage), ``mrr`` the mean
  reciprocal rank, ``meanr`` the mean rank (the direction is the subset); ``medr`` has none;
- ``mean``: the mean of the per-item values of the metric;
- ``bootstrap``: the task's own ``statistic(rows)`` on the resampled rows (one call per replicate).

A main score recorded per subset with no headline subset is the unweighted mean of its per-subset scores
(:data:`PER_SUBSET`), the rule the STS years declare for their ``_mean`` aggregates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchbox.task_contract.paired_tests import sentence_columns
from benchbox.task_contract.protocol import MetricSpec

#: how a main score recorded on several subsets (no ``all``/``test`` subset) becomes one task score
PER_SUBSET = "mean over subsets"


def strata_and_clusters(task: str, kind: str | None, items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """What the items of a task are drawn by: strata (subset; for retrieval, direction and fold) and clusters
    (within a correlation subset the sentence groups of pairs that share a sentence, else each item)."""
    from benchbox import stats

    subset = items["subset"].astype(str) if "subset" in items else pd.Series("", index=items.index)
    strata = (items["direction"].astype(str) + "/" + subset) if kind == "ranks" and "direction" in items else subset
    clusters = np.arange(len(items)).astype(object)
    if kind == "correlation" and sentence_columns(items):
        for stratum in dict.fromkeys(strata):
            inside = np.flatnonzero((strata == stratum).to_numpy())
            part = items.iloc[inside]
            groups = stats.sentence_groups(*sentence_columns(part))
            clusters[inside] = [f"{stratum}#{g}" for g in groups]
    return strata.to_numpy(), np.asarray([str(c) for c in clusters])


def _pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    total = w.sum(axis=1)
    mx, my = w @ x / total, w @ y / total
    cov = w @ (x * y) / total - mx * my
    vx, vy = w @ (x * x) / total - mx**2, w @ (y * y) / total - my**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(vx * vy)


def _mean(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return w @ values / w.sum(axis=1)


def _correlation(metric: str, subset: str | None, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    method, _, aggregate = metric.partition("_")
    subsets = items["subset"].astype(str).to_numpy()

    def one(mask: np.ndarray) -> np.ndarray:
        g, s = items["gold"].to_numpy(float)[mask], items["score"].to_numpy(float)[mask]
        if method == "spearman":
            g, s = rankdata(g), rankdata(s)
        return _pearson(g, s, weights[:, mask])

    if aggregate == "pooled":
        return one(np.ones(len(items), bool))
    if not aggregate and subset is not None:
        return one(subsets == subset)
    names = list(dict.fromkeys(subsets))
    per = np.stack([one(subsets == name) for name in names])
    if aggregate == "wmean":
        sizes = np.array([(subsets == name).sum() for name in names], float)
        return sizes @ per / sizes.sum()
    return per.mean(axis=0)


def _rows(kind: str, subset: str, items: pd.DataFrame) -> np.ndarray:
    """The items of one subset (retrieval: one direction)."""
    column = "direction" if kind == "ranks" else "subset"
    return (items[column].astype(str) == subset).to_numpy()


def _one_subset(kind: str, spec: MetricSpec, subset: str, items: pd.DataFrame,
                weights: np.ndarray) -> np.ndarray | None:
    mask = _rows(kind, subset, items)
    w = weights[:, mask]
    unit = 100.0 if spec.unit == "%" else 1.0
    if kind == "classification":
        return unit * _mean(items["correct"].to_numpy(float)[mask], w)
    if kind == "ranks":
        rank = items["rank"].to_numpy(float)[mask]
        k = spec.name[1:]
        if spec.name.startswith("r") and k.isdigit():
            return unit * _mean((rank <= int(k)).astype(float), w)
        values = {"mrr": 1.0 / rank, "meanr": rank}.get(spec.name)
        return None if values is None else _mean(values, w)
    if kind == "mean":
        mask &= (items["metric"] == spec.name).to_numpy()
        return _mean(items["value"].to_numpy(float)[mask], weights[:, mask])
    if kind == "bootstrap" and spec.statistic is not None:
        part = items[mask].reset_index(drop=True)
        counts = w.astype(int)
        return np.array([spec.statistic(part.iloc[np.repeat(np.arange(len(part)), row)]) for row in counts])
    return None


def resampled_score(spec: MetricSpec, subset: str | None, items: pd.DataFrame,
                    weights: np.ndarray) -> np.ndarray | None:
    """[B] the metric ``spec`` of one run under each row of ``weights`` (module docstring): on ``subset``, or,
    ``subset=None``, the mean over the subsets it is recorded on (:data:`PER_SUBSET`; correlation aggregates
    on subset ``all`` are computed from every subset). None: the metric has no resampled statistic."""
    kind = spec.kind
    if kind == "correlation":
        return _correlation(spec.name, None if subset in (None, "all") else subset, items, weights)
    if kind is None:
        return None
    if subset is not None:
        return _one_subset(kind, spec, subset, items, weights)
    column = "direction" if kind == "ranks" else "subset"
    per = [_one_subset(kind, spec, name, items, weights) for name in dict.fromkeys(items[column].astype(str))]
    return None if not per or any(p is None for p in per) else np.mean(per, axis=0)

"""The paired bootstrap of a difference (Efron & Tibshirani 1993), stratified for aggregates, and of any
statistic of per-item rows."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.errors import BenchboxError
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED
from benchbox.stats.resampling import (
    aggregate_strata,
    bootstrap_counts,
    percentile_interval,
    require_bootstrap_memory,
    stratified_counts,
    weighted_pearson,
    weighted_spearman,
)

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


@dataclass(frozen=True)
class BootstrapResult:
    """A paired bootstrap of statistic(A) − statistic(B): observed difference, percentile interval, bootstrap
    standard error, z = diff / se and its two-sided p."""

    diff: float
    ci_low: float
    ci_high: float
    se: float
    z: float
    p: float
    n_boot: int

    @property
    def ci(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high


#: ``statistic(w, gold, score) -> [B]``: the statistic of each weighted sample (``w``: [B, n] draw counts)
WeightedStatistic = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
STATISTICS: dict[str, WeightedStatistic] = {"pearson": weighted_pearson, "spearman": weighted_spearman}
AGGREGATES = ("mean", "wmean", "pooled")


def weighted_mean(w: np.ndarray, gold: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Mean of ``score`` in each resample (``gold`` unused): e.g. the mean rank."""
    return (w * score).sum(axis=1) / w.sum(axis=1)


def weighted_median(w: np.ndarray, gold: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Lower median of ``score`` in each resample (``gold`` unused): e.g. the median rank."""
    order = np.argsort(score, kind="stable")
    cum = np.cumsum(w[:, order], axis=1)
    index = np.argmax(cum >= cum[:, -1:] / 2, axis=1)
    return score[order][index]


def _wald_p(diff: float, se: float) -> float:
    """Two-sided p of z = diff / bootstrap standard error (Efron & Tibshirani 1993, ch. 6 and 16). The
    percentile p (share of draws across 0) cannot fall below 2/(B + 1): too coarse to survive a Holm
    correction over dozens of comparisons, hence the normal approximation."""
    from scipy import stats as st

    if se == 0 or not np.isfinite(se):
        return 1.0 if diff == 0 else 0.0
    return float(2 * st.norm.sf(abs(diff) / se))


def _bootstrap_result(diff: float, boot: np.ndarray, level: float, n_boot: int) -> BootstrapResult:
    """The observed difference with the percentile interval, standard error, z and p of its resampled values."""
    low, high = percentile_interval(boot, level)
    se = float(boot.std(ddof=1))
    z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    return BootstrapResult(diff, low, high, se, z, _wald_p(diff, se), n_boot)


def paired_bootstrap(
    gold,
    score_a,
    score_b,
    *,
    strata=None,
    statistic: str | WeightedStatistic = "pearson",
    aggregate: str = "mean",
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap (Efron & Tibshirani 1993) of statistic(gold, A) − statistic(gold, B).

    Items are resampled with replacement, the same draw for A and B (paired), vectorised through draw
    counts (:mod:`benchbox.stats.resampling`). With ``strata`` (one label per item, e.g. the STS subset), items are
    resampled within each stratum and the statistic is aggregated as ``aggregate``: ``"mean"`` (unweighted
    mean over strata), ``"wmean"`` (weighted by stratum size) or ``"pooled"`` (one statistic over all items)
    — the per-year STS aggregates (docs/protocols.md#sts-scores; NaN per-stratum values count as 0, as in SentEval).
    ``statistic``: ``"pearson"``, ``"spearman"`` or a :data:`WeightedStatistic` (e.g. :func:`weighted_mean`).
    Returns the observed difference, the percentile interval and a two-sided p from the bootstrap standard
    error (:func:`_wald_p`). Under a simulated null (two encoders with r = .5 to gold, 2000 simulations,
    B = 500) it rejected at 5% in 5.7% of cases with n = 120 and 5.05% with n = 500: slightly liberal for
    small n, like most bootstrap tests.
    """
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    g = np.zeros_like(a) if gold is None else np.asarray(gold, dtype=float)
    if not (a.ndim == b.ndim == g.ndim == 1 and len(a) == len(b) == len(g)):
        raise BenchboxError(f"gold, score_a and score_b must be 1-d of one length, got {g.shape}, {a.shape}, {b.shape}")
    if isinstance(statistic, str):
        if statistic not in STATISTICS:
            raise BenchboxError(f"unknown statistic {statistic!r}: use {', '.join(STATISTICS)} or a function")
        statistic = STATISTICS[statistic]
    if aggregate not in AGGREGATES:
        raise BenchboxError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")
    if n_boot < 2:
        raise BenchboxError(f"n_boot must be at least 2, got {n_boot}")
    labels = np.zeros(len(a), dtype=np.int64) if strata is None else pd.factorize(np.asarray(strata))[0]
    if len(labels) != len(a):
        raise BenchboxError(f"strata has {len(labels)} labels for {len(a)} items")
    groups = [np.flatnonzero(labels == k) for k in range(labels.max() + 1)] if len(a) else []
    if not groups or min(len(idx) for idx in groups) < 2:
        raise BenchboxError("paired_bootstrap needs at least 2 items in every stratum")
    require_bootstrap_memory(n_boot, len(a))
    sizes = np.array([len(idx) for idx in groups], dtype=float)
    counts = stratified_counts(np.random.default_rng(seed), [len(idx) for idx in groups], n_boot)
    draws = np.zeros((n_boot, len(a)))
    for idx, w in zip(groups, counts):
        draws[:, idx] = w

    def value(w: np.ndarray, score: np.ndarray) -> np.ndarray:
        if aggregate == "pooled":
            return np.nan_to_num(statistic(w, g, score))
        per = np.vstack([np.nan_to_num(statistic(w[:, idx], g[idx], score[idx])) for idx in groups])
        return aggregate_strata(per, sizes, aggregate)

    ones = np.ones((1, len(a)))
    diff = float(value(ones, a)[0] - value(ones, b)[0])
    return _bootstrap_result(diff, value(draws, a) - value(draws, b), level, n_boot)


def paired_bootstrap_rows(
    rows_a: pd.DataFrame,
    rows_b: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of ``statistic(rows_a) - statistic(rows_b)`` for any statistic of per-item rows (a
    task's own metric, e.g. an AUC): row i of A and of B is the same item, and each resample takes the same
    items for both, drawn as :func:`paired_bootstrap` draws them without strata (the same seed gives the same
    resamples). Interval, standard error and p as there; a resample whose statistic is not finite (e.g. an AUC
    of a one-class resample) is left out."""
    if len(rows_a) != len(rows_b) or len(rows_a) < 2:
        raise BenchboxError(f"paired_bootstrap_rows needs two tables of one length >= 2, got {len(rows_a)} and {len(rows_b)}")
    if n_boot < 2:
        raise BenchboxError(f"n_boot must be at least 2, got {n_boot}")
    counts = bootstrap_counts(np.random.default_rng(seed), len(rows_a), n_boot).astype(np.int64)
    items = np.arange(len(rows_a))
    diff = float(statistic(rows_a)) - float(statistic(rows_b))
    boot = np.array([float(statistic(rows_a.iloc[idx])) - float(statistic(rows_b.iloc[idx]))
                     for idx in (np.repeat(items, c) for c in counts)])
    boot = boot[np.isfinite(boot)]
    if len(boot) < 2:
        raise BenchboxError("paired_bootstrap_rows: the statistic is not finite on the resamples")
    return _bootstrap_result(diff, boot, level, n_boot)

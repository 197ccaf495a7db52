"""The bootstrap's resamples (Efron & Tibshirani 1993), drawn here for every interval and paired test of benchbox,
and the vectorised correlations of count-weighted resamples.

Hand-written: scipy's ``bootstrap`` draws index resamples only, so it cannot give these exact count-weighted
correlations in O(B·n) nor the paired, stratified streams the published intervals were computed from.

Two ways of drawing, each its own random stream (the same seed gives the same resamples, bit for bit):
- counts (:func:`bootstrap_counts`, :func:`stratified_counts`): a resample of n items is its count vector w
  (how often each item was drawn; B of them as a [B, n] matrix, from ordinary index resampling); strata are
  drawn one after the other from one generator. Used by the paired bootstrap of :mod:`benchbox.stats`, the
  STS year intervals and the structure measures.
- indices (:func:`index_batches`): B resamples of m items within each of several equal-size strata, as index
  arrays [batch, strata, m] drawn batch by batch; used by the retrieval bootstrap over images, whose median
  ranks need the drawn values themselves.

Pearson's r of a count resample is the w-weighted Pearson correlation; Spearman's ρ is the weighted Pearson
correlation of the resample's ranks, where an item's rank is its average rank among the drawn copies (ties,
including the copies of one item, share the mean rank — ``scipy.stats.rankdata(method="average")`` on the
expanded resample). Both are exact and cost O(B·n) without a sort per resample. Intervals are percentile
intervals (:func:`percentile_interval`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from benchbox.memory import require_resamples

#: peak bytes per (resample × item) cell of a bootstrap of correlations: draw counts, ranks and the weighted-moment
#: temporaries (tracemalloc, n = 1379, B = 2000: paired_bootstrap 40 Pearson / 64 Spearman, STS year CIs 56)
BOOTSTRAP_BYTES_PER_CELL = 64


def require_bootstrap_memory(n_boot: int, n_items: int, option: str = "--bootstrap") -> None:
    """Refuse, before allocating, a bootstrap of ``n_boot`` resamples × ``n_items`` that cannot fit in memory;
    the message names the largest value of ``option`` (the option that set ``n_boot``) that would."""
    require_resamples(option, n_boot, BOOTSTRAP_BYTES_PER_CELL * n_items,
                      f"a bootstrap of {n_items} items, {BOOTSTRAP_BYTES_PER_CELL} bytes per item")


def bootstrap_counts(rng: np.random.Generator, n: int, n_boot: int) -> np.ndarray:
    """[n_boot, n] draw counts of ``n_boot`` resamples of n items with replacement."""
    require_bootstrap_memory(n_boot, n)
    draws = rng.integers(0, n, size=(n_boot, n)) + (np.arange(n_boot) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)


def stratified_counts(rng: np.random.Generator, sizes: list[int], n_boot: int) -> Iterator[np.ndarray]:
    """[n_boot, size] draw counts of each stratum in turn, resampled within the stratum, all from ``rng``."""
    for size in sizes:
        yield bootstrap_counts(rng, size, n_boot)


def index_batches(rng: np.random.Generator, n_boot: int, strata: int, m: int, batch: int) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of m items (indices 0..m−1, with replacement) within each of ``strata`` strata, as
    [≤ batch, strata, m] index arrays, one batch after the other."""
    for start in range(0, n_boot, batch):
        yield rng.integers(0, m, size=(min(batch, n_boot - start), strata, m))


def aggregate_strata(per_stratum: np.ndarray, sizes: np.ndarray, aggregate: str) -> np.ndarray:
    """[B] aggregate of per-stratum statistics [strata, B]: ``"mean"`` (unweighted) or ``"wmean"`` (by size)."""
    return per_stratum.mean(axis=0) if aggregate == "mean" else sizes @ per_stratum / sizes.sum()


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``values`` at ``level`` (Efron & Tibshirani 1993, ch. 13)."""
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each weighted sample; ``x``/``y`` are [n] or [B, n], ``w`` is [B, n]. NaN if constant."""
    total = w.sum(axis=1, keepdims=True)
    mx = (w * x).sum(axis=1, keepdims=True) / total
    my = (w * y).sum(axis=1, keepdims=True) / total
    dx, dy = x - mx, y - my
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))


def weighted_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """[B, n] average ranks (1-based) of every item within each resample given by counts ``w``."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]]))  # tie groups
    group = np.zeros(len(x), dtype=np.int64)
    group[starts[1:]] = 1
    group = np.cumsum(group)
    counts = np.add.reduceat(w[:, order], starts, axis=1)
    below = np.cumsum(counts, axis=1) - counts
    group_rank = below + (counts + 1) / 2
    ranks = np.empty_like(w)
    ranks[:, order] = group_rank[:, group]
    return ranks


def weighted_spearman(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of each resample given by counts ``w`` [B, n] of the items (x, y)."""
    return weighted_pearson(w, weighted_ranks(w, x), weighted_ranks(w, y))

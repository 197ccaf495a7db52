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
    draws = rng.integers(0, n, size=(n_boot, n))
    draws += (np.arange(n_boot) * n)[:, None]  # resample b counts in bins b·n .. b·n + n − 1
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


#: resamples computed together by the weighted correlations: their [rows, n] temporaries stay in the CPU's cache
#: (n = 750: 180 kB each). Every resample's sums are the same NumPy row reductions whatever the block, so the
#: results do not depend on it, to the last bit.
BLOCK_ROWS = 32


def _blocks(n_rows: int) -> Iterator[slice]:
    for start in range(0, n_rows, BLOCK_ROWS):
        yield slice(start, min(start + BLOCK_ROWS, n_rows))


def _rows(values: np.ndarray, block: slice) -> np.ndarray:
    """The rows of ``values`` ([n] for every resample, or [B, n]) that ``block`` takes."""
    return values if values.ndim == 1 else values[block]


class _Buffers:
    """Reused [rows, n] float64 temporaries of one blocked computation (no allocation per block)."""

    def __init__(self, n: int, count: int) -> None:
        self._all = np.empty((count, BLOCK_ROWS, n))

    def __getitem__(self, index: tuple[int, int]) -> np.ndarray:
        which, rows = index
        return self._all[which, :rows]


def _pearson_block(w: np.ndarray, x: np.ndarray, y: np.ndarray, buffers: _Buffers) -> np.ndarray:
    """:func:`weighted_pearson` of one block of resamples, in the buffers: the same element operations as
    ``(w * dx * dy).sum(axis=1)`` etc. (``w * dx`` computed once for two products), so the same numbers."""
    rows = len(w)
    t, dx, dy, wdx = (buffers[k, rows] for k in range(4))
    total = w.sum(axis=1, keepdims=True)
    mx = np.multiply(w, x, out=t).sum(axis=1, keepdims=True) / total
    my = np.multiply(w, y, out=t).sum(axis=1, keepdims=True) / total
    np.subtract(x, mx, out=dx)
    np.subtract(y, my, out=dy)
    np.multiply(w, dx, out=wdx)
    sxy = np.multiply(wdx, dy, out=t).sum(axis=1)
    sxx = np.multiply(wdx, dx, out=t).sum(axis=1)
    np.multiply(w, dy, out=t)
    syy = np.multiply(t, dy, out=t).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(sxx * syy)


def weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each weighted sample; ``x``/``y`` are [n] or [B, n], ``w`` is [B, n]. NaN if constant."""
    buffers = _Buffers(w.shape[1], 4)
    out = np.empty(len(w))
    for block in _blocks(len(w)):
        out[block] = _pearson_block(w[block], _rows(x, block), _rows(y, block), buffers)
    return out


class _RankOrder:
    """The sort of x that every resample's ranks share: the items in order, their tie groups and each item's
    group."""

    def __init__(self, x: np.ndarray) -> None:
        self.order = np.argsort(x, kind="stable")
        sorted_x = x[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]]))  # tie groups
        self.ties = len(self.starts) < len(x)
        group = np.zeros(len(x), dtype=np.int64)
        group[self.starts[1:]] = 1
        self.item_group = np.empty(len(x), dtype=np.int64)
        self.item_group[self.order] = np.cumsum(group)

    def ranks(self, w: np.ndarray, out: np.ndarray) -> np.ndarray:
        """[rows, n] average ranks of the items in each resample of the block ``w``, into ``out``. The counts
        are whole numbers, so every sum and half here is exact in float64 (any order gives the same ranks)."""
        counts = np.take(w, self.order, axis=1)  # per item, in x's order
        if self.ties:
            counts = np.add.reduceat(counts, self.starts, axis=1)  # per tie group
        upto = np.cumsum(counts, axis=1)
        upto -= 0.5 * (counts - 1)  # rank of the group: copies below it + the mean of 1..count
        return np.take(upto, self.item_group, axis=1, out=out)


def weighted_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """[B, n] average ranks (1-based) of every item within each resample given by counts ``w``."""
    rank_order, ranks = _RankOrder(x), np.empty_like(w)
    for block in _blocks(len(w)):
        rank_order.ranks(w[block], ranks[block])
    return ranks


def weighted_spearman(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of each resample given by counts ``w`` [B, n] of the items (x, y): the weighted Pearson r of
    the resample's ranks, a block of resamples at a time."""
    x_order, y_order, buffers = _RankOrder(x), _RankOrder(y), _Buffers(w.shape[1], 6)
    out = np.empty(len(w))
    for block in _blocks(len(w)):
        wb = w[block]
        rows = len(wb)
        rx = x_order.ranks(wb, buffers[4, rows])
        ry = y_order.ranks(wb, buffers[5, rows])
        out[block] = _pearson_block(wb, rx, ry, buffers)
    return out

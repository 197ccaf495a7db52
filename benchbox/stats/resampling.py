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
    """The sort of x that every resample's ranks share: the items in x's order, the first position of each tie
    group in that order, and the tie group of each item and of each sorted position."""

    def __init__(self, x: np.ndarray) -> None:
        self.order = np.argsort(x, kind="stable")
        sorted_x = x[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]]))  # tie groups
        self.ties = len(self.starts) < len(x)
        first = np.zeros(len(x), dtype=np.int64)
        first[self.starts[1:]] = 1
        self.sorted_group = np.cumsum(first)
        self.item_group = np.empty(len(x), dtype=np.int64)
        self.item_group[self.order] = self.sorted_group

    def group_counts(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The block ``w``'s counts per item in x's order [rows, n] and per tie group [rows, groups]."""
        counts = np.take(w, self.order, axis=1)
        return counts, (np.add.reduceat(counts, self.starts, axis=1) if self.ties else counts)

    def doubled_ranks(self, counts: np.ndarray) -> np.ndarray:
        """2·rank − 1 of each tie group, from its counts [rows, groups]: a group's rank is the copies drawn
        below it plus the mean of 1..count, so 2·rank − 1 = 2·(copies up to it) − count, a whole number."""
        doubled = np.cumsum(counts, axis=1)
        doubled *= 2
        doubled -= counts
        return doubled

    def ranks(self, w: np.ndarray, out: np.ndarray) -> np.ndarray:
        """[rows, n] average ranks of the items in each resample of the block ``w``, into ``out`` (exact:
        halves of whole numbers)."""
        ranks = self.doubled_ranks(self.group_counts(w)[1])
        ranks += 1
        ranks *= 0.5
        return np.take(ranks, self.item_group, axis=1, out=out)


def weighted_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """[B, n] average ranks (1-based) of every item within each resample given by counts ``w``."""
    rank_order, ranks = _RankOrder(x), np.empty_like(w)
    for block in _blocks(len(w)):
        rank_order.ranks(w[block], ranks[block])
    return ranks


#: the most draws per resample for which :func:`weighted_spearman` sums whole numbers below 2^53 (4·N³ at most)
EXACT_SPEARMAN_DRAWS = 2**16


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[rows] dot product of each row of ``a`` with the same row of ``b``: ``np.matmul`` on [rows, 1, n] × [rows, n, 1]
    stacks, which calls the BLAS dot routine of ``np.dot`` once per row (the same numbers as ``np.dot`` of the two
    rows, bit for bit)."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


def weighted_spearman(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of each resample given by counts ``w`` [B, n] of the items (x, y): the weighted Pearson r
    (:func:`weighted_pearson`) of the resample's average ranks (:func:`weighted_ranks`).

    With N draws, the ranks are halves of whole numbers with mean (N + 1)/2, so every product and sum of the
    weighted Pearson r of ranks is a multiple of 1/4 below N³: exact in float64 for N ≤
    :data:`EXACT_SPEARMAN_DRAWS`, whatever the order of summation. Its moments are then computed here from
    R = 2·rank − 1 (whole numbers, mean N): Σw·dx·dy = (Σw·Rx·Ry − N³)/4 and likewise for x and y alone, each
    tie group counted once, the ranks of y read in x's order; the same values, so the same ρ to the last bit,
    in fewer passes. Larger resamples take the ranks themselves."""
    total = w.sum(axis=1)
    if len(w) and total.max() > EXACT_SPEARMAN_DRAWS:
        return weighted_pearson(w, weighted_ranks(w, x), weighted_ranks(w, y))
    x_order, y_order = _RankOrder(x), _RankOrder(y)
    y_group_in_x_order = y_order.item_group[x_order.order]
    moments = np.empty((3, len(w)))  # Σw·Rx·Ry, Σw·Rx², Σw·Ry²
    for block in _blocks(len(w)):
        (x_counts, x_groups), (_, y_groups) = x_order.group_counts(w[block]), y_order.group_counts(w[block])
        rx, ry = x_order.doubled_ranks(x_groups), y_order.doubled_ranks(y_groups)
        moments[1, block] = row_dots(x_groups * rx, rx)
        moments[2, block] = row_dots(y_groups * ry, ry)
        rx_items = np.take(rx, x_order.sorted_group, axis=1) if x_order.ties else rx
        moments[0, block] = row_dots(x_counts * rx_items, np.take(ry, y_group_in_x_order, axis=1))
    sxy, sxx, syy = (moments - total**3) / 4
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(sxx * syy)

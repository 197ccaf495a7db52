"""The count-based bootstrap correlations equal scipy on the expanded resamples; the blocked and exact-moment
computations give the same numbers, to the last bit, as the plain ones."""

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from benchbox.stats import resampling
from benchbox.stats.resampling import bootstrap_counts, weighted_pearson, weighted_ranks, weighted_spearman


def test_counts_are_resamples():
    w = bootstrap_counts(np.random.default_rng(0), 7, 50)
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all()


def test_weighted_correlations_equal_scipy_on_expanded_resamples():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, 40).astype(float)  # many ties, as in gold scores
    y = x + rng.normal(0, 2, 40)
    w = bootstrap_counts(rng, 40, 20)
    pearson, spearman = weighted_pearson(w, x, y), weighted_spearman(w, x, y)
    for b in range(20):
        idx = np.repeat(np.arange(40), w[b].astype(int))
        assert pearson[b] == pytest.approx(pearsonr(x[idx], y[idx])[0], abs=1e-12)
        assert spearman[b] == pytest.approx(spearmanr(x[idx], y[idx])[0], abs=1e-12)


def _tied_sample(n: int, n_boot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 8, n).astype(float)  # ties on both sides, as gold scores and rounded cosines
    y = np.round(x + rng.normal(0, 3, n), 1)
    w = bootstrap_counts(rng, n, n_boot)
    w[0] = np.bincount(np.zeros(n, dtype=int), minlength=n)  # one resample of a single item drawn n times: NaN
    return w, x, y


def test_spearman_from_exact_moments_is_the_pearson_of_the_ranks_to_the_last_bit(monkeypatch):
    """Counts and ranks are whole and half numbers: the moments are exact in any order (weighted_spearman's
    docstring), so the shortcut equals the Pearson r of the ranks bit for bit, NaN included."""
    w, x, y = _tied_sample(57, 3 * resampling.BLOCK_ROWS + 5)
    fast = weighted_spearman(w, x, y)
    assert np.isnan(fast[0]) and np.isfinite(fast[1:]).all()
    assert np.array_equal(fast, weighted_pearson(w, weighted_ranks(w, x), weighted_ranks(w, y)), equal_nan=True)
    monkeypatch.setattr(resampling, "EXACT_SPEARMAN_DRAWS", 56)  # 57 draws: the ranks themselves
    assert np.array_equal(fast, weighted_spearman(w, x, y), equal_nan=True)


def test_blocks_of_resamples_do_not_change_a_bit(monkeypatch):
    """Each resample's sums are the same row reductions whatever the block of resamples computed together."""
    w, x, y = _tied_sample(300, 70)
    together = [weighted_pearson(w, x, y), weighted_pearson(w, weighted_ranks(w, x), y), weighted_ranks(w, y)]
    monkeypatch.setattr(resampling, "BLOCK_ROWS", 1)
    alone = [weighted_pearson(w, x, y), weighted_pearson(w, weighted_ranks(w, x), y), weighted_ranks(w, y)]
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(together, alone))

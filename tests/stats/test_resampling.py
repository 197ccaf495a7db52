"""The count-based bootstrap correlations equal scipy on the expanded resamples."""

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from benchbox.stats.resampling import bootstrap_counts, weighted_pearson, weighted_spearman


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

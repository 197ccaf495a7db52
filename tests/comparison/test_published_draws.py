"""Replicates of published numbers for the rank among all (benchbox.comparison.published_draws, issue 50): the
shared-item factor gives two published correlations on one test set Steiger's covariance, and ties them to the
runs' own bootstrap replicates. Tolerances: with B draws a sample correlation's standard error is about
(1 − ρ²)/√B and a standard deviation's relative one 1/√(2B); B = 200,000 puts both near 0.002, and the bounds below
are four to five of those."""

from __future__ import annotations

import numpy as np
import pytest

from benchbox.comparison.published_draws import common_factor, published_draws, shared_item_loading
from benchbox.stats import fisher_ci

B = 200_000


def steiger_correlation_by_hand(r: float) -> float:
    """Steiger (1980) eq. 11 with eq. 14 for two models of correlation r with the gold scores whose errors are
    independent given them: r(a, b) = r², pooled r = r."""
    rab, r2 = r * r, r * r
    return (rab * (1 - 2 * r2) - 0.5 * r2 * (1 - 2 * r2 - rab**2)) / (1 - r2) ** 2


@pytest.mark.parametrize("r", [0.3, 0.6, 0.85, 0.95])
def test_the_loading_squared_is_steiger_s_correlation_at_r_squared(r):
    assert shared_item_loading(r, "r") ** 2 == pytest.approx(steiger_correlation_by_hand(r), rel=1e-12)
    assert shared_item_loading(r * 100, "%") == 0.0 and shared_item_loading(float("nan"), "r") == 0.0


def test_two_published_rows_on_one_task_correlate_as_their_loadings_and_keep_their_se():
    rng = np.random.default_rng(3)
    common = common_factor([], "r", B, rng)
    rows = {}
    for r, n in ((0.85, 1379), (0.80, 1379)):
        low, high = fisher_ci(r, n)
        rows[r] = np.arctanh(published_draws(r, float(low), float(high), "r", B, rng, common))
        assert rows[r].std() == pytest.approx(1 / np.sqrt(n - 3), rel=0.01)  # the Fisher-z interval's se
        assert rows[r].mean() == pytest.approx(np.arctanh(r), abs=5 * 0.03 / np.sqrt(B))
    expected = shared_item_loading(0.85, "r") * shared_item_loading(0.80, "r")
    assert np.corrcoef(rows[0.85], rows[0.80])[0, 1] == pytest.approx(expected, abs=0.01)
    independent = published_draws(0.85, *map(float, fisher_ci(0.85, 1379)), "r", B, rng)  # without: uncorrelated
    assert abs(np.corrcoef(np.arctanh(independent), rows[0.80])[0, 1]) < 0.01


def test_the_common_factor_follows_the_run_s_replicates_with_the_run_s_loading():
    rng = np.random.default_rng(4)
    run = np.tanh(np.arctanh(0.7) + 0.03 * rng.standard_normal(B))  # a run's bootstrap replicates of r = 0.7
    common = common_factor([(run, 0.7)], "r", B, rng)
    assert common.std() == pytest.approx(1, rel=0.01)
    assert np.corrcoef(common, np.arctanh(run))[0, 1] == pytest.approx(shared_item_loading(0.7, "r"), abs=0.01)
    constant = common_factor([(np.full(B, 0.7), 0.7)], "r", B, rng)  # a run that does not vary: independent
    assert abs(np.corrcoef(constant, np.arctanh(run))[0, 1]) < 0.01


def test_a_published_number_without_an_interval_has_no_draws():
    rng = np.random.default_rng(5)
    assert published_draws(0.8, float("nan"), 0.9, "r", 10, rng) is None
    assert published_draws(0.8, 0.9, 0.7, "r", 10, rng) is None

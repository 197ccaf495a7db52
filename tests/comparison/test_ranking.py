"""benchbox.stats.ranking (the leaderboard's joint paired bootstrap, ranks, Borda counts and rank intervals) and
benchbox.comparison.resampled_scores (a task's main score under bootstrap weights)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from benchbox.stats import ranking
from benchbox.comparison.resampled_scores import resampled_score, strata_and_clusters
from benchbox.task_contract.protocol import MetricSpec


def test_a_cluster_is_drawn_whole_and_strata_keep_their_size():
    strata = np.array(["a"] * 6 + ["b"] * 4)
    clusters = np.array([0, 0, 1, 1, 2, 2, 3, 4, 5, 6])
    weights = ranking.cluster_weights(strata, clusters, 200, np.random.default_rng(0))
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 4] == weights[:, 5]).all()
    assert (weights[:, :6].sum(axis=1) == 6).all() and (weights[:, 6:].sum(axis=1) == 4).all()


def test_ranks_share_the_best_rank_on_ties_and_put_nan_last():
    assert ranking.ranks(np.array([0.5, 0.7, 0.7, np.nan])).tolist() == [3, 1, 1, 4]
    assert ranking.ranks(np.array([3.0, 1.0, 2.0]), higher_is_better=False).tolist() == [3, 1, 2]


def test_borda_counts_give_a_point_per_model_beaten_and_half_per_tie():
    scores = np.array([[0.9, 0.1], [0.5, 0.5], [0.5, 0.3]])  # models × tasks
    assert ranking.borda_counts(scores).tolist() == [2.0 + 0.0, 0.5 + 2.0, 0.5 + 1.0]


def test_rank_intervals_are_percentiles_of_the_drawn_ranks():
    draws = np.array([[1, 2]] * 97 + [[2, 1]] * 3)
    low, high = ranking.rank_intervals(draws)
    assert low.tolist() == [1, 1] and high.tolist() == [2, 2]
    low, high = ranking.rank_intervals(np.array([[1, 2]] * 99 + [[2, 1]]))
    assert low.tolist() == [1, 2] and high.tolist() == [1, 2]


def test_the_unit_weights_give_the_recorded_scores():
    rng = np.random.default_rng(1)
    gold = rng.standard_normal(60)
    items = pd.DataFrame({"subset": ["x"] * 30 + ["y"] * 30, "item": range(60), "gold": gold,
                          "score": gold + rng.standard_normal(60)})
    ones = np.ones((1, 60))
    per = [st.pearsonr(p["gold"], p["score"])[0] for _, p in items.groupby("subset")]
    assert resampled_score(MetricSpec("pearson_mean", "correlation"), "all", items, ones)[0] == pytest.approx(np.mean(per))
    assert resampled_score(MetricSpec("pearson", "correlation"), None, items, ones)[0] == pytest.approx(np.mean(per))
    pooled = st.pearsonr(items["gold"], items["score"])[0]
    assert resampled_score(MetricSpec("pearson_pooled", "correlation"), "all", items, ones)[0] == pytest.approx(pooled)
    rho = st.spearmanr(items["gold"][:30], items["score"][:30])[0]
    assert resampled_score(MetricSpec("spearman", "correlation"), "x", items, ones)[0] == pytest.approx(rho)
    ranks = pd.DataFrame({"subset": "test", "direction": ["i2t"] * 4, "query": range(4), "rank": [1, 2, 5, 20]})
    mrr = MetricSpec("mrr", "ranks")
    assert resampled_score(mrr, "i2t", ranks, np.ones((1, 4)))[0] == pytest.approx(np.mean([1, 1 / 2, 1 / 5, 1 / 20]))
    assert resampled_score(MetricSpec("r5", "ranks", unit="%"), "i2t", ranks, np.ones((1, 4)))[0] == 75.0
    assert resampled_score(MetricSpec("rsum"), "all", ranks, np.ones((1, 4))) is None  # no statistic: no interval


def test_pairs_that_share_a_sentence_are_one_cluster():
    items = pd.DataFrame({"subset": ["x"] * 4, "item": range(4), "gold": [1, 2, 3, 4], "score": [1, 3, 2, 4],
                          "sentence1": ["a", "a", "c", "d"], "sentence2": ["b", "e", "f", "d2"]})
    strata, clusters = strata_and_clusters("t", "correlation", items)
    assert clusters[0] == clusters[1] and len(set(clusters)) == 3 and set(strata) == {"x"}

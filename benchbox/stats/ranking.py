"""Ranks of models with 95% intervals from a joint paired bootstrap of items (docs/protocols.md#leaderboard-ranks).

The leaderboard's uncertainty comes from one resampling of what was measured: the *items* (sentence pairs,
queries, classified sentences) and the *seeds* of each model — never the tasks. In each of ``B`` replicates:

1. every task's items are drawn with replacement, by cluster within stratum (:func:`cluster_weights`: a
   stratum is a subset, a cluster a sentence group — pairs that share a sentence are drawn together — else one
   item), and the **same draw is used for every model** (the paired design of Koehn 2004's paired bootstrap:
   the models are compared on the same resampled test sets);
2. every model's runs (seeds) are drawn with replacement within the model (:func:`seed_means`), its task score
   the mean over the drawn seeds of their scores on the resampled items;
3. the overall score is the mean of the task scores on the common scale, the models are ranked by it
   (:func:`ranks`: 1 = best, ties share the best rank) and by the Borda count of their per-task ranks
   (:func:`borda_counts`, mteb's aggregation).

A model's 95% rank interval is the 2.5th and 97.5th percentile of its rank over the replicates
(:func:`rank_intervals`; Hall & Miller 2009 study this bootstrap of empirical ranks and its behaviour near ties).
Everything here is pure numpy on per-item arrays, so the simulation of ``benchmarks/bench_rank_intervals.py``
runs the same functions as ``benchbox leaderboard``.
"""

from __future__ import annotations

import numpy as np

#: the level of the rank and score intervals
LEVEL = 0.95


def cluster_weights(strata: np.ndarray, clusters: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """[n_boot, n] resampling weights of ``n`` items: within each stratum, its clusters are drawn with
    replacement as many times as it has clusters, and each item weighs the number of times its cluster was
    drawn. ``strata`` and ``clusters``: one label per item (a cluster lies within one stratum)."""
    strata, clusters = np.asarray(strata), np.asarray(clusters)
    weights = np.zeros((n_boot, len(strata)))
    for stratum in dict.fromkeys(strata.tolist()):
        inside = np.flatnonzero(strata == stratum)
        ids, members = np.unique(clusters[inside], return_inverse=True)
        drawn = rng.integers(0, len(ids), size=(n_boot, len(ids)))
        counts = np.stack([np.bincount(row, minlength=len(ids)) for row in drawn])
        weights[:, inside] = counts[:, members]
    return weights


def seed_means(per_seed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[B] a model's resampled score from [k, B] scores of its ``k`` seeds on the resampled items: in each
    replicate ``k`` seeds drawn with replacement, their mean (one seed: its scores)."""
    k, n_boot = per_seed.shape
    if k == 1:
        return per_seed[0]
    drawn = rng.integers(0, k, size=(n_boot, k))
    return per_seed[drawn, np.arange(n_boot)[:, None]].mean(axis=1)


def ranks(scores: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Ranks of the models along the last axis (1 = best; models with equal scores share the best of their
    ranks); a NaN score ranks last."""
    signed = np.where(np.isnan(scores), -np.inf, scores if higher_is_better else -scores)
    return 1 + (signed[..., None, :] > signed[..., :, None]).sum(axis=-1)


def borda_counts(task_scores: np.ndarray) -> np.ndarray:
    """Borda counts [..., models] from task scores [..., models, tasks] (higher is better): on each task a
    model gets one point per model it beats and half a point per tie, summed over the tasks (the Borda count
    of mteb's leaderboard)."""
    a, b = task_scores[..., :, None, :], task_scores[..., None, :, :]
    return ((a > b) + 0.5 * (a == b) - 0.5 * np.eye(task_scores.shape[-2])[:, :, None]).sum(axis=(-1, -2))


def percentile_interval(draws: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval over the first axis (NaN draws ignored)."""
    tail = (1 - level) / 2
    return np.nanquantile(draws, tail, axis=0), np.nanquantile(draws, 1 - tail, axis=0)


def rank_intervals(draws: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of each model's rank from [B, models] rank draws: the ranks at the lower and
    upper tail percentiles, as integers within the ranks drawn."""
    tail = (1 - level) / 2
    low = np.quantile(draws, tail, axis=0, method="inverted_cdf")
    high = np.quantile(draws, 1 - tail, axis=0, method="inverted_cdf")
    return low.astype(int), high.astype(int)

"""Coverage of the leaderboard's approximate rank intervals among published rows (issue 50): one evaluated run and
K published models on one STS test set, with known true correlations, simulated many times; how often each row's
95% rank interval holds its true rank (target 92–98%).

Each replicate draws one test set of n items (gold g ~ N(0, 1)) and every model's scores on it, s_k = ρ_k·g +
√(1 − ρ_k²)·e_k, as published models are scored on the same pairs (so their errors are correlated through the
shared items, which the method ignores). The published models keep only their Pearson r and its Fisher-z 95%
interval on n (what ``mteb:PATH`` gives); the run keeps its items. Then the leaderboard's own code ranks them:
the run's replicates from a paired bootstrap of its items (``ranking.cluster_weights``, the weighted Pearson of
``stats.resampling``), each published number's from ``leaderboard.published_draws``, the interval from
``ranking.rank_intervals``. The true rank is the rank of ρ. Printed: coverage over all rows and the run's own,
the median interval width, per spacing of the true correlations (crowded: 0.005 apart, the top of the mteb
STS-B table; spread: 0.02 apart).

Run: ``python benchmarks/bench_published_ranks.py [--reps 200] [--models 30] [--n 1379] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from benchbox.comparison.leaderboard import published_draws
from benchbox.stats import fisher_ci, ranking
from benchbox.stats.resampling import weighted_pearson


def replicate(rng: np.random.Generator, rho: np.ndarray, n: int, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row's rank interval holds its true rank (row 0: the run), and the intervals' widths."""
    g = rng.standard_normal(n)
    scores = rho[:, None] * g + np.sqrt(1 - rho[:, None] ** 2) * rng.standard_normal((len(rho), n))
    r = np.array([np.corrcoef(g, s)[0, 1] for s in scores])
    weights = ranking.cluster_weights(np.zeros(n), np.arange(n), n_boot, rng)
    draws = [weighted_pearson(weights, g, scores[0])]
    for value in r[1:]:
        low, high = fisher_ci(value, n)
        draws.append(published_draws(value, float(low), float(high), "r", n_boot, rng))
    low, high = ranking.rank_intervals(ranking.ranks(np.stack(draws, axis=1)), 0.95)
    truth = ranking.ranks(rho)
    return (low <= truth) & (truth <= high), high - low + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--n", type=int, default=1379)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(50)
    for name, spacing in (("crowded", 0.005), ("spread", 0.02)):
        rho = 0.85 - spacing * np.arange(args.models + 1)
        rho = np.roll(rho, -(args.models // 2))  # the run in the middle of the published models
        covered, widths = zip(*(replicate(rng, rho, args.n, args.resamples) for _ in range(args.reps)))
        covered, widths = np.array(covered), np.array(widths)
        print(f"{name} (ρ {spacing} apart, {args.models} published + 1 run, n = {args.n}, {args.reps} replicates, "
              f"{args.resamples} resamples): coverage all rows {covered.mean():.1%}, the run {covered[:, 0].mean():.1%}, "
              f"published rows min {covered[:, 1:].mean(axis=0).min():.1%}; median width "
              f"{statistics.median(widths.ravel().tolist()):.0f} ranks")


if __name__ == "__main__":
    main()

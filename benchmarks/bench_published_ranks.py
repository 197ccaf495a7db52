"""Coverage of the leaderboard's approximate rank intervals among published rows (issue 50): one evaluated run and
K published models on one STS test set, with known true correlations, simulated many times; how often each row's
95% rank interval holds its true rank (target 92–98%).

Each replicate draws one test set of n items (gold g ~ N(0, 1)) and every model's scores on it, s_k = ρ_k·g +
√(1 − ρ_k²)·e_k, as published models are scored on the same pairs (so their errors are correlated through the
shared items; with e_k independent, r(a, b) = ρ_a·ρ_b, the value the method assumes, so this measures the method
where its assumption holds; ``--shared`` adds a common error component, models that err alike, where the method's
intervals are wider than they need be). The published models keep only their Pearson r and its Fisher-z 95%
interval on n (what ``mteb:PATH`` gives); the run keeps its items. Then the leaderboard's own code ranks them:
the run's replicates from a paired bootstrap of its items (``ranking.cluster_weights``, the weighted Pearson of
``stats.resampling``), each published number's from ``published_draws.published_draws`` with the task's ``common_factor`` (``--independent``: without,
as before issue 50's last change), the interval from
``ranking.rank_intervals``. The true rank is the rank of ρ. Printed: coverage over all rows, the run's own and
the published rows', the median interval width, per design of the true correlations (random: drawn uniformly
from [0.78, 0.88] in every replicate, the top of mteb's STS-B table; crowded: 0.005 apart; spread: 0.02 apart).

Run: ``python benchmarks/bench_published_ranks.py [--reps 200] [--models 30] [--n 1379] [--resamples 1000]
[--shared 0.3] [--independent]``.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from benchbox.comparison.published_draws import common_factor, published_draws
from benchbox.stats import fisher_ci, ranking
from benchbox.stats.resampling import weighted_pearson


def replicate(rng: np.random.Generator, rho: np.ndarray, n: int, n_boot: int, shared: float,
              independent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row's rank interval holds its true rank (row 0: the run), and the intervals' widths."""
    g = rng.standard_normal(n)
    errors = np.sqrt(shared) * rng.standard_normal(n) + np.sqrt(1 - shared) * rng.standard_normal((len(rho), n))
    scores = rho[:, None] * g + np.sqrt(1 - rho[:, None] ** 2) * errors
    r = np.array([np.corrcoef(g, s)[0, 1] for s in scores])
    weights = ranking.cluster_weights(np.zeros(n), np.arange(n), n_boot, rng)
    draws = [weighted_pearson(weights, g, scores[0])]
    common = None if independent else common_factor([(draws[0], r[0])], "r", n_boot, rng)
    for value in r[1:]:
        low, high = fisher_ci(value, n)
        draws.append(published_draws(value, float(low), float(high), "r", n_boot, rng, common))
    low, high = ranking.rank_intervals(ranking.ranks(np.stack(draws, axis=1)), 0.95)
    truth = ranking.ranks(rho)
    return (low <= truth) & (truth <= high), high - low + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--n", type=int, default=1379)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--shared", type=float, default=0.0,
                        help="share of each model's error common to every model (models that err alike)")
    parser.add_argument("--independent", action="store_true", help="published draws without the common factor")
    args = parser.parse_args()
    rng = np.random.default_rng(50)
    designs = {  # the true correlations of each replicate: the run first, then the published models
        "random": lambda: rng.uniform(0.78, 0.88, args.models + 1),  # the top of mteb's STS-B table, drawn anew
        "crowded": lambda: np.roll(0.85 - 0.005 * np.arange(args.models + 1), -(args.models // 2)),
        "spread": lambda: np.roll(0.85 - 0.02 * np.arange(args.models + 1), -(args.models // 2)),
    }
    for name, design in designs.items():
        covered, widths = zip(*(replicate(rng, design(), args.n, args.resamples, args.shared, args.independent)
                                for _ in range(args.reps)))
        covered, widths = np.array(covered), np.array(widths)
        print(f"{name} ({args.models} published + 1 run, n = {args.n}, {args.reps} replicates, {args.resamples} "
              f"resamples, shared {args.shared}{', independent draws' if args.independent else ''}): coverage all "
              f"rows {covered.mean():.1%}, the run {covered[:, 0].mean():.1%}, published rows "
              f"{covered[:, 1:].mean():.1%}; median width {statistics.median(widths.ravel().tolist()):.0f} ranks")

if __name__ == "__main__":
    main()

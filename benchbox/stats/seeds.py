"""Seed-aware comparison of two models, each with one or more training runs (seeds), over the rows of a claim.

The per-seed score of a run is its weighted mean over rows on the common scale (Fisher z of r, or the
proportion), with the pooled analysis' random-effects weights: S_s = Σ_r w_r y_{s,r}. Two tests use them:

- :func:`seed_test`: Student's two-sample t on the per-seed scores of A and B (pooled variance, k_a + k_b − 2
  degrees of freedom; exact when the seeds of both models are exchangeable draws — Welch's version was
  conservative at 3 seeds a side, 2.7% at 5% in our simulation), the one-sample t against a single
  deterministic run (k = 1: a text baseline, k − 1 degrees of freedom), so a difference
  not larger than the run-to-run spread of training is never called significant. It answers "would another
  seed give the same verdict" on these test items; item sampling is the pooled test's part
  (:mod:`benchbox.stats.pooling`), and a claim is significant only when both reject.
- :func:`aso`: Almost Stochastic Order (Dror, Shlomov & Reichart 2019; del Barrio et al. 2018) of the
  per-seed scores, by the ``deepsig`` package: ε_min < 0.5 says A is almost stochastically larger than B,
  ε_min = 0 fully; ASO is descriptive of how seeds dominate, not a p-value.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchbox.errors import BenchboxError
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED


@dataclass(frozen=True)
class SeedTest:
    """Difference of mean per-seed scores, its standard error, Student's t, degrees of freedom, p and interval."""

    diff: float
    se: float
    t: float
    df: float
    p: float
    ci_low: float
    ci_high: float
    seeds_a: int
    seeds_b: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def per_seed_scores(scores, weights) -> np.ndarray:
    """[k] weighted mean over rows of each run's [k, rows] scores (weights normalised to sum 1)."""
    y = np.atleast_2d(np.asarray(scores, dtype=float))
    w = np.asarray(weights, dtype=float)
    if y.shape[1] != len(w) or not np.all(np.isfinite(y)):
        raise BenchboxError(f"per-seed scores need finite [seeds, {len(w)}] values, got shape {y.shape}")
    return y @ (w / w.sum())


def seed_test(seeds_a, seeds_b, level: float = 0.95) -> SeedTest:
    """Student's t of mean(seeds_a) − mean(seeds_b) (per-seed scores, pooled variance, k_a + k_b − 2 df); one side
    with a single run counts as fixed (one-sample t on the other's k − 1 df). Needs two seeds on one side."""
    from scipy import stats as st

    a, b = np.asarray(seeds_a, dtype=float), np.asarray(seeds_b, dtype=float)
    if max(len(a), len(b)) < 2 or min(len(a), len(b)) < 1:
        raise BenchboxError("a seed-aware test needs at least two runs (seeds) of one of the two models")
    spread = [x for x in (a, b) if len(x) > 1]
    df = sum(len(x) - 1 for x in spread)
    pooled = sum(((x - x.mean()) ** 2).sum() for x in spread) / df
    variance = pooled * sum(1 / len(x) for x in spread)
    diff = float(a.mean() - b.mean())
    if variance == 0:
        return SeedTest(diff, 0.0, math.copysign(math.inf, diff) if diff else 0.0, math.inf, float(diff == 0),
                        diff, diff, len(a), len(b))
    se = math.sqrt(variance)
    t = diff / se
    half = float(st.t.ppf(0.5 + level / 2, df)) * se
    return SeedTest(diff, se, t, float(df), float(2 * st.t.sf(abs(t), df)), diff - half, diff + half, len(a), len(b))


def aso(seeds_a, seeds_b, *, seed: int = DEFAULT_SEED, confidence: float = 0.95,
        n_boot: int = DEFAULT_RESAMPLES) -> float:
    """ε_min of Almost Stochastic Order of A's per-seed scores over B's (``deepsig.aso``, Dror et al. 2019)."""
    from deepsig import aso as deepsig_aso

    a, b = np.asarray(seeds_a, dtype=float), np.asarray(seeds_b, dtype=float)
    return float(deepsig_aso(a, b, confidence_level=confidence, num_bootstrap_iterations=n_boot,
                             show_progress=False, seed=seed))

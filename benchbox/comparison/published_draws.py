"""Bootstrap-like replicates of published numbers, so that rows without items can be ranked beside runs
(``benchbox leaderboard``'s rank among all, issue 50).

A published number has a value and a 95% interval but no items, so it cannot join the runs' paired bootstrap. Its
replicates are normal draws on the number's own interval scale (Fisher's z for a correlation, with the interval's
se: 1/√(n − 3), Spearman's × √1.06; the unit's own scale otherwise). Independent draws overstate how much two models
scored on the same test items can swap places: their errors share the items. For correlations the draws carry that
shared part as one common factor per task:

    z*_k = ẑ_k + se_k · (λ_k · U + √(1 − λ_k²) · E_k),    λ_k² = c(r_k, r_k²),

c the correlation of the Fisher z's of two models of correlation r with the gold scores whose scores correlate
r(a, b) with each other (Steiger 1980, eq. 11 with eq. 14), at r(a, b) = r², the value when the two models' errors
are independent given the gold scores. Two published rows then correlate λ_j·λ_k ≈ c: their difference has
Steiger's variance, not the sum of their variances. U, shared by the task's published rows, is tied to the runs'
replicates, which resample the same items: U = κ·D + √(1 − κ²)·V, D the runs' mean standardised Fisher-z
replicate, κ = λ̄ / sd(D) its correlation with the common factor, V independent. So a run and a published row
correlate about λ_run·λ_k too.

Models that err alike (shared difficulty, as good encoders do) correlate more than r², so on real results the
intervals stay somewhat wide: conservative. Other units (accuracies, recalls: no Steiger covariance) are drawn
independently (λ = 0). Coverage in a simulation with known correlations: benchmarks/bench_published_ranks.py
(docs/benchmarks.md#published-rank-intervals).
"""

from __future__ import annotations

import numpy as np

from benchbox.stats.correlations import steiger_covariance
from benchbox.stats.intervals import z_quantile

#: the level of a published number's interval (Fisher-z and Wilson 95% intervals; papers' 95%)
PUBLISHED_LEVEL = 0.95
_CLIP = 1 - 1e-12


def shared_item_loading(value: float, unit: str) -> float:
    """λ: the loading of a number of ``unit`` on its task's common factor (module docstring); 0 for any unit other
    than a correlation (``"r"``), and for a correlation that is not finite."""
    if unit != "r" or not np.isfinite(value):
        return 0.0
    r = float(np.clip(value, -_CLIP, _CLIP))
    return float(np.sqrt(np.clip(steiger_covariance(r, r * r), 0.0, 1.0)))


def common_factor(run_draws: list[tuple[np.ndarray, float]], unit: str, n_boot: int,
                  rng: np.random.Generator) -> np.ndarray:
    """[n_boot] U of one task: its standard-normal common factor, tied to the runs' replicates ``run_draws``
    ((replicates [n_boot], the run's value) per run, on the unit's scale) as the module docstring says; independent
    of them when there are none, or none that varies."""
    independent = rng.standard_normal(n_boot)
    standardised, loadings = [], []
    for draws, value in run_draws:
        x = np.arctanh(np.clip(draws, -_CLIP, _CLIP)) if unit == "r" else np.asarray(draws, dtype=float)
        if np.isfinite(x).all() and x.std() > 0:
            standardised.append((x - x.mean()) / x.std())
            loadings.append(shared_item_loading(value, unit))
    if not standardised:
        return independent
    mean = np.mean(standardised, axis=0)
    spread = mean.std()
    if spread == 0:
        return independent
    kappa = float(min(1.0, np.mean(loadings) / spread))
    return kappa * mean / spread + np.sqrt(1 - kappa**2) * independent


def published_draws(value: float, low: float, high: float, unit: str, n_boot: int, rng: np.random.Generator,
                    common: np.ndarray | None = None) -> np.ndarray | None:
    """[n_boot] replicates of a published number from its 95% interval: a correlation (unit r) on Fisher's z scale,
    ``tanh(atanh(r) + se·N)`` with se = (atanh(high) − atanh(low)) / (2·z₉₇.₅); any other unit on its own scale,
    se = (high − low) / (2·z₉₇.₅). N = λ·``common`` + √(1 − λ²)·E with λ = :func:`shared_item_loading` (E
    independent; without ``common``, N = E). None without an interval."""
    if not (np.isfinite(low) and np.isfinite(high)) or high < low:
        return None
    z95 = z_quantile(PUBLISHED_LEVEL)
    noise = rng.standard_normal(n_boot)
    if common is not None:
        loading = shared_item_loading(value, unit)
        noise = loading * common + np.sqrt(1 - loading**2) * noise
    if unit == "r":
        zl, zv, zh = np.arctanh(np.clip([low, value, high], -_CLIP, _CLIP))
        return np.tanh(zv + (zh - zl) / (2 * z95) * noise)
    return value + (high - low) / (2 * z95) * noise

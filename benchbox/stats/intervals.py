"""Intervals of one number: Fisher's z interval of a correlation (Fisher 1921; for Spearman's ρ the standard
error √(1.06/(n−3)) of Fieller, Hartley & Pearson 1957) and Wilson's (1927) interval of a proportion."""

from __future__ import annotations

import numpy as np


def z_quantile(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 0.95)."""
    from scipy import stats as st

    return float(st.norm.ppf(0.5 + level / 2))


def as_scalars(*arrays: np.ndarray):
    """The arrays as floats when they are 0-d (a call on scalars), else as they are."""
    if arrays[0].ndim == 0:
        return tuple(float(a) for a in arrays)
    return arrays


#: the fewest pairs with a Fisher-z interval: its standard error is 1/√(n−3)
FISHER_MIN_N = 4


def fisher_ci(r, n, level: float = 0.95, *, spearman: bool = False):
    """Fisher-z interval for a Pearson (or, with ``spearman=True``, Spearman) correlation.

    ``r`` and ``n`` may be scalars or arrays; returns ``(low, high)`` of the same shape. NaN where n is below
    :data:`FISHER_MIN_N`.
    """
    r = np.asarray(r, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt((1.06 if spearman else 1.0) / (n - 3))
        se = np.where(n >= FISHER_MIN_N, se, np.nan)
        z = np.arctanh(np.clip(r, -1.0, 1.0))
        low, high = np.tanh(z - z_quantile(level) * se), np.tanh(z + z_quantile(level) * se)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def wilson_ci(k, n, level: float = 0.95):
    """Wilson score interval of a proportion k/n (Wilson 1927), as proportions in [0, 1]: statsmodels
    ``proportion_confint(k, n, method="wilson")``.

    ``k`` and ``n`` may be scalars or arrays; returns ``(low, high)`` of the same shape. NaN where n = 0.
    """
    from statsmodels.stats.proportion import proportion_confint

    with np.errstate(divide="ignore", invalid="ignore"):  # n = 0: NaN
        low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return as_scalars(np.asarray(low, dtype=float), np.asarray(high, dtype=float))

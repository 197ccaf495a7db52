"""Confidence intervals and significance tests (PROTOCOLS.md §6). Pure, vectorised functions.

Fisher z interval for a Pearson r: tanh(atanh r ± z_{α/2}/√(n−3)) (Fisher 1921); it reproduces every
interval of the Merkx & Frank (2019) supplement. For Spearman's ρ the standard error is √(1.06/(n−3))
(Fieller, Hartley & Pearson 1957).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as st


def _z(level: float) -> float:
    return float(st.norm.ppf(0.5 + level / 2))


def fisher_ci(r, n, level: float = 0.95, *, spearman: bool = False):
    """Fisher-z interval for a Pearson (or, with ``spearman=True``, Spearman) correlation.

    ``r`` and ``n`` may be scalars or arrays; returns ``(low, high)`` of the same shape. NaN where n ≤ 3.
    """
    r = np.asarray(r, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt((1.06 if spearman else 1.0) / (n - 3))
        se = np.where(n > 3, se, np.nan)
        z = np.arctanh(np.clip(r, -1.0, 1.0))
        low, high = np.tanh(z - _z(level) * se), np.tanh(z + _z(level) * se)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high

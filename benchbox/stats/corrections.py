"""Holm (1979) and Benjamini–Hochberg (1995) adjustment of p-values for multiple comparisons (statsmodels)."""

from __future__ import annotations

import numpy as np

from benchbox.errors import BenchboxError


CORRECTIONS = {"holm": "holm", "bh": "fdr_bh", "fdr_bh": "fdr_bh"}


def adjust_pvalues(p, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons: ``"holm"`` (Holm 1979, family-wise error) or ``"fdr_bh"``
    / ``"bh"`` (Benjamini & Hochberg 1995, false discovery rate), via statsmodels ``multipletests``.
    NaN entries (comparisons without a test) stay NaN and do not count in the family."""
    from statsmodels.stats.multitest import multipletests

    if method not in CORRECTIONS:
        raise BenchboxError(f"unknown correction {method!r}: use holm or fdr_bh (bh)")
    p = np.asarray(p, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise BenchboxError("p-values must lie in [0, 1]")
    if ok.any():
        adjusted[ok] = multipletests(p[ok], method=CORRECTIONS[method])[1]
    return adjusted

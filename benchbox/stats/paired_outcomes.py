"""Paired per-item outcomes of two models: hit or miss (McNemar's (1947) exact test; the difference of two
paired proportions on the claims' common scale) and ranks (Wilcoxon's signed-rank test)."""

from __future__ import annotations

import numpy as np

from benchbox.errors import BenchboxError


def _paired_flags(x, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or x.shape != y.shape:
        raise BenchboxError(f"{name} of A and B must be 1-d of one length, got {x.shape} and {y.shape}")
    return x, y


def paired_proportion_difference(hits_a, hits_b) -> tuple[float, float]:
    """Difference of two paired proportions (accuracy, R@K) p_a − p_b = (b − c)/n and its variance
    ((b + c)/n − ((b − c)/n)²)/n, with b, c the discordant counts (Agresti 2002, §10.1.1). The common scale on
    which :mod:`benchbox.stats.pooling` pools accuracy and recall rows. Returns ``(diff, var)``."""
    a, b = _paired_flags(hits_a, hits_b, "hits")
    a, b = a.astype(bool), b.astype(bool)
    n = len(a)
    if n == 0:
        raise BenchboxError("paired_proportion_difference needs at least one item")
    only_a, only_b = np.count_nonzero(a & ~b) / n, np.count_nonzero(~a & b) / n
    diff = only_a - only_b
    return float(diff), float((only_a + only_b - diff**2) / n)



def mcnemar_test(hits_a, hits_b) -> tuple[float, float]:
    """McNemar's (1947) exact test for paired hit/miss outcomes (e.g. R@K per query, correct per item).

    The exact binomial test on the discordant pairs (statsmodels ``mcnemar(exact=True)``); returns
    ``(statistic, p)`` with statistic = min(b, c), the smaller discordant count. No discordant pair: (0, 1).
    """
    from statsmodels.stats.contingency_tables import mcnemar

    a, b = _paired_flags(hits_a, hits_b, "hits")
    a, b = a.astype(bool), b.astype(bool)
    only_a, only_b = int(np.count_nonzero(a & ~b)), int(np.count_nonzero(~a & b))
    if only_a + only_b == 0:
        return 0.0, 1.0
    table = [[int(np.count_nonzero(a & b)), only_a], [only_b, int(np.count_nonzero(~a & ~b))]]
    result = mcnemar(table, exact=True)
    return float(result.statistic), float(result.pvalue)


def wilcoxon_test(ranks_a, ranks_b) -> tuple[float, float]:
    """Wilcoxon's signed-rank test of paired values (e.g. per-query ranks of two retrieval models);
    zero differences are dropped (Wilcoxon 1945; ``scipy.stats.wilcoxon``). Returns ``(statistic, p)``;
    all differences zero: (0, 1)."""
    from scipy import stats as st

    a, b = _paired_flags(ranks_a, ranks_b, "ranks")
    a, b = a.astype(float), b.astype(float)
    if not np.any(a != b):
        return 0.0, 1.0
    result = st.wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)

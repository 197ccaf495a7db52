"""Confidence intervals and significance tests (docs/protocols.md#statistics). Pure, vectorised functions.

- Fisher z interval for a Pearson r: tanh(atanh r ± z_{α/2}/√(n−3)) (Fisher 1921); it reproduces every
  interval of the Merkx & Frank (2019) supplement. For Spearman's ρ the standard error is √(1.06/(n−3))
  (Fieller, Hartley & Pearson 1957).
- Two encoders scored on the same items against the same gold give two dependent, overlapping
  correlations r(g, a), r(g, b) with r(a, b): Williams' t (Williams 1959; Steiger 1980 eq. 7), Steiger's Z
  (Steiger 1980) and Zou's (2007) interval of the difference, written after the R package cocor
  (Diedenhofen & Musch 2015) and tested against its documented examples. Published numbers without
  per-item scores: :func:`unknown_r_ab_test` (worst case over r(a, b)).
- Items that are not independent (STS reuses sentences across pairs): the delete-a-group jackknife of the
  same difference over groups of pairs linked by a shared sentence (:func:`grouped_jackknife_test`,
  :func:`sentence_groups`; Efron & Tibshirani 1993, ch. 11; Shao & Tu 1995).
- Paired bootstrap of a difference, stratified for aggregates (Efron & Tibshirani 1993).
- Wilson (1927) interval of a proportion; McNemar (1947) exact test; Wilcoxon signed-rank test;
  Holm (1979) and Benjamini–Hochberg (1995) adjustment (statsmodels).

Bad input (|r| > 1, n ≤ 3, mismatched lengths) raises :class:`~benchbox.errors.BenchboxError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from benchbox.errors import BenchboxError
from benchbox.resampling import (
    aggregate_strata,
    bootstrap_counts,
    percentile_interval,
    require_bootstrap_memory,
    stratified_counts,
    weighted_pearson,
    weighted_spearman,
)


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


def wilson_ci(k, n, level: float = 0.95):
    """Wilson score interval of a proportion k/n (Wilson 1927), as proportions in [0, 1]: statsmodels
    ``proportion_confint(k, n, method="wilson")``.

    ``k`` and ``n`` may be scalars or arrays; returns ``(low, high)`` of the same shape. NaN where n = 0.
    """
    with np.errstate(divide="ignore", invalid="ignore"):  # n = 0: NaN
        low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return _out(np.asarray(low, dtype=float), np.asarray(high, dtype=float))


# Williams, Steiger and Zou are hand-written: no maintained Python package implements them (cocor is R only);
# each is tested against cocor's documented examples.


def _check_r(name: str, r: np.ndarray) -> None:
    if not np.all(np.isfinite(r)) or np.any(np.abs(r) > 1):
        raise BenchboxError(f"{name} must be a correlation in [-1, 1], got {r.ravel()[:5].tolist()}")


def _check_n(n: np.ndarray) -> None:
    if not np.all(np.isfinite(n)) or np.any(n <= 3):
        raise BenchboxError(f"n must be > 3 to compare correlations, got {n.ravel()[:5].tolist()}")


def _dependent_args(r_ga, r_gb, r_ab, n) -> tuple[np.ndarray, ...]:
    arrays = [np.asarray(x, dtype=float) for x in (r_ga, r_gb, r_ab, n)]
    for name, r in zip(("r_ga", "r_gb", "r_ab"), arrays[:3]):
        _check_r(name, r)
    _check_n(arrays[3])
    try:
        arrays = list(np.broadcast_arrays(*arrays))
    except ValueError as exc:
        raise BenchboxError(f"r_ga, r_gb, r_ab and n have incompatible shapes: {exc}") from None
    if np.any(_det3(*arrays[:3]) < -1e-9):
        raise BenchboxError("r_ga, r_gb and r_ab cannot hold together: their correlation matrix is not positive "
                            "semi-definite (see feasible_r_ab)")
    return tuple(arrays)


def _out(*arrays: np.ndarray):
    if arrays[0].ndim == 0:
        return tuple(float(a) for a in arrays)
    return arrays


def _det3(r_ga: np.ndarray, r_gb: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Determinant of the 3×3 correlation matrix of (gold, a, b)."""
    return 1 - r_ga**2 - r_gb**2 - r_ab**2 + 2 * r_ga * r_gb * r_ab


def williams_test(r_ga, r_gb, r_ab, n):
    """Williams' (1959) t for two dependent correlations sharing the variable g (e.g. the gold scores),
    r(g, a) vs r(g, b), given r(a, b), in the form of Steiger (1980, eq. 7); df = n − 3, two-sided.

    Vectorised over its arguments; returns ``(t, p)``. Reproduces cocor's ``williams1959``
    (Diedenhofen & Musch 2015): (.3, .4, .5, n=100) → t = −1.0767, p = .2843.
    """
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    r_mean = (r_ga + r_gb) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (r_ga - r_gb) * np.sqrt(
            (n - 1) * (1 + r_ab)
            / (2 * (n - 1) / (n - 3) * _det3(r_ga, r_gb, r_ab) + r_mean**2 * (1 - r_ab) ** 3)
        )
    t = np.where(r_ga == r_gb, 0.0, t)
    p = 2 * st.t.sf(np.abs(t), n - 3)
    return _out(t, p)


def _steiger_cov(r_pooled: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Steiger's (1980, eq. 11 with eq. 14) covariance of the two Fisher z's under H0, with the pooled r."""
    rp2 = r_pooled**2
    return (r_ab * (1 - 2 * rp2) - 0.5 * rp2 * (1 - 2 * rp2 - r_ab**2)) / (1 - rp2) ** 2


def _steiger_z(r_ga: np.ndarray, r_gb: np.ndarray, cov: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(n - 3) * (np.arctanh(r_ga) - np.arctanh(r_gb)) / np.sqrt(2 - 2 * cov)
    z = np.where(r_ga == r_gb, 0.0, z)
    return z, 2 * st.norm.sf(np.abs(z))


def steiger_test(r_ga, r_gb, r_ab, n):
    """Steiger's (1980) Z for two dependent overlapping correlations (Dunn & Clark's 1969 z of the Fisher-z
    difference, with the covariance of eq. 14/15 evaluated at the pooled r̄ = (r_ga + r_gb)/2), two-sided.

    Follows cocor's ``steiger1980``: Steiger (1980) case A, (.4, .5, .1, n=103) → z = −0.8887185.
    Vectorised; returns ``(z, p)``.
    """
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    return _out(*_steiger_z(r_ga, r_gb, _steiger_cov((r_ga + r_gb) / 2, r_ab), n))


def _zou_interval(r_ga, r_gb, c, n, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Zou's (2007, p. 409) interval for r_ga − r_gb from the two Fisher intervals and their correlation c."""
    l1, u1 = fisher_ci(r_ga, n, level)
    l2, u2 = fisher_ci(r_gb, n, level)
    d = r_ga - r_gb
    low = d - np.sqrt(np.maximum((r_ga - l1) ** 2 + (u2 - r_gb) ** 2 - 2 * c * (r_ga - l1) * (u2 - r_gb), 0))
    high = d + np.sqrt(np.maximum((u1 - r_ga) ** 2 + (r_gb - l2) ** 2 - 2 * c * (u1 - r_ga) * (r_gb - l2), 0))
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def _zou_corr(r_ga: np.ndarray, r_gb: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Correlation between r_ga and r_gb (Zou 2007, p. 409; Dunn & Clark 1969). The cubic terms cancel:
    the numerator is ½ r_ga r_gb r_ab² + (1 − r_ga² − r_gb²) r_ab − ½ r_ga r_gb (1 − r_ga² − r_gb²)."""
    k = 1 - r_ga**2 - r_gb**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return (0.5 * r_ga * r_gb * r_ab**2 + k * r_ab - 0.5 * r_ga * r_gb * k) / ((1 - r_ga**2) * (1 - r_gb**2))


def zou_ci(r_ga, r_gb, r_ab, n, level: float = 0.95):
    """Zou's (2007) confidence interval for r_ga − r_gb, two dependent overlapping correlations.

    Vectorised; returns ``(low, high)``. Reproduces Zou (2007) / cocor ``zou2007``:
    (.396, .179, .088, n=66) → (−.093, .517).
    """
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    return _out(*_zou_interval(r_ga, r_gb, _zou_corr(r_ga, r_gb, r_ab), n, level))


def fisher_z_difference(r_ga, r_gb, r_ab, n):
    """atanh r(g, a) − atanh r(g, b) and its sampling variance (2 − 2·c)/(n − 3), with c the covariance of
    the two Fisher z's of Steiger (1980, eq. 11 with eq. 14) at the pooled r̄ — the variance behind
    :func:`steiger_test`, so z = diff / √var is Steiger's Z. The common scale on which
    :mod:`benchbox.meta` pools correlation rows. Vectorised; returns ``(diff, var)``."""
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    cov = _steiger_cov((r_ga + r_gb) / 2, r_ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.arctanh(np.clip(r_ga, -1 + 1e-12, 1 - 1e-12)) - np.arctanh(np.clip(r_gb, -1 + 1e-12, 1 - 1e-12))
    return _out(diff, (2 - 2 * cov) / (n - 3))


def normalise_sentence(text) -> str | None:
    """A sentence as :func:`sentence_groups` compares it: lower-cased, runs of whitespace collapsed to one
    space, stripped; ``None`` for a missing or empty sentence (which links nothing)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    out = " ".join(str(text).lower().split())
    return out or None


def sentence_groups(*columns) -> np.ndarray:
    """The connected components of items linked by a shared sentence: item i and item j are in one group when
    some column of i and some column of j hold the same sentence (:func:`normalise_sentence`), directly or
    through a chain of items. ``columns``: one or more sequences of sentences, one entry per item (e.g. the
    ``sentence1`` and ``sentence2`` columns of an STS subset). Returns one group id per item, 0, 1, ... in order
    of first appearance; missing or empty sentences link nothing. A bipartite graph of items and distinct
    sentences, solved by ``scipy.sparse.csgraph.connected_components`` (linear in the number of items)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if not columns:
        raise BenchboxError("sentence_groups needs at least one column of sentences")
    texts = [[normalise_sentence(t) for t in column] for column in columns]
    n = len(texts[0])
    if any(len(t) != n for t in texts):
        raise BenchboxError(f"sentence columns of different lengths: {[len(t) for t in texts]}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    ids, _ = pd.factorize(pd.Series([s for column in texts for s in column], dtype=object), use_na_sentinel=True)
    items = np.tile(np.arange(n), len(texts))
    linked = ids >= 0
    m = int(ids.max()) + 1 if linked.any() else 0
    graph = coo_matrix((np.ones(int(linked.sum())), (items[linked], n + ids[linked])), shape=(n + m, n + m))
    _, labels = connected_components(graph, directed=False)
    return pd.factorize(labels[:n])[0].astype(np.int64)


@dataclass(frozen=True)
class JackknifeResult:
    """The delete-a-group jackknife of r(g, a) − r(g, b) (:func:`grouped_jackknife_test`): the Fisher-z
    difference on all items with its jackknife variance, t = diff_z / se_z on ``df`` = G − 1 and its two-sided p;
    the difference of the correlations with its jackknife interval; the number of groups."""

    diff_z: float
    var_z: float
    t: float
    df: int
    p: float
    diff_r: float
    ci_low: float
    ci_high: float
    groups: int

    @property
    def ci(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high


def _leave_group_out_r(x: np.ndarray, y: np.ndarray, labels: np.ndarray, sizes: np.ndarray,
                       n: int) -> tuple[float, np.ndarray]:
    """Pearson r of (x, y) on all items and with each group left out, from per-group sums of x, y, x², y², xy
    (centred first, so the differences of sums do not cancel): O(n + G), no correlation recomputed."""
    x, y = x - x.mean(), y - y.mean()
    sums = [np.bincount(labels, weights=v, minlength=len(sizes)) for v in (x, y, x * x, y * y, x * y)]
    totals = [v.sum() for v in sums]

    def r(sx, sy, sxx, syy, sxy, count):
        with np.errstate(divide="ignore", invalid="ignore"):
            sxx_c, syy_c = sxx - sx * sx / count, syy - sy * sy / count
            out = (sxy - sx * sy / count) / np.sqrt(sxx_c * syy_c)
        return np.where((sxx_c > 0) & (syy_c > 0), np.clip(out, -1.0, 1.0), np.nan)

    full = float(r(*totals, n))
    left_out = r(*(t - s for t, s in zip(totals, sums)), n - sizes)
    return full, left_out


def _jackknife_variance(estimates: np.ndarray) -> float:
    """(G − 1)/G Σ (θ_(g) − θ̄)² (Efron & Tibshirani 1993, ch. 11, with groups in place of observations)."""
    g = len(estimates)
    return float((g - 1) / g * np.sum((estimates - estimates.mean()) ** 2))


def grouped_jackknife_test(gold, score_a, score_b, groups, level: float = 0.95) -> JackknifeResult:
    """Difference of two dependent correlations with the same gold, r(g, a) − r(g, b), when the items are not
    independent: the delete-a-group jackknife (Efron & Tibshirani 1993, ch. 11; Shao & Tu 1995, on the jackknife
    that deletes groups of observations; Kott 2001, the delete-a-group jackknife of survey sampling).

    ``groups`` holds one label per item; items of one group are left out together. Williams' t, Steiger's Z and
    Zou's interval assume independent pairs; STS reuses sentences (one sentence in several pairs), so pairs that
    share a sentence share its embedding error and their scores are correlated. Items in different connected
    components of the "shares a sentence" graph (:func:`sentence_groups`) share nothing, so the components are
    the smallest groups that may be treated as independent, and leaving each out in turn gives a variance that
    holds whatever the dependence inside a group.

    Δz = atanh r(g, a) − atanh r(g, b) on all items; θ_(g) the same with group g left out (computed from
    per-group sums, :func:`_leave_group_out_r`); variance (G − 1)/G Σ (θ_(g) − θ̄)²; t = Δz / SE on G − 1
    degrees of freedom, two-sided. The interval of Δr = r(g, a) − r(g, b) is Δr ± t_{G−1} · SE_r with SE_r the
    same jackknife on the r scale, centred at the full-sample Δr. With every group a single item this is the
    ordinary delete-one jackknife. Fewer than two groups, or a correlation undefined with a group left out
    (a constant column): NaN. Returns a :class:`JackknifeResult`.
    """
    g, a, b = (np.asarray(v, dtype=float) for v in (gold, score_a, score_b))
    labels = pd.factorize(np.asarray(groups))[0] if len(np.asarray(groups)) else np.zeros(0, dtype=np.int64)
    if not (g.ndim == a.ndim == b.ndim == 1 and len(g) == len(a) == len(b) == len(labels)):
        raise BenchboxError(f"gold, score_a, score_b and groups must be 1-d of one length, got {g.shape}, "
                            f"{a.shape}, {b.shape}, {np.shape(groups)}")
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise BenchboxError("gold, score_a and score_b must be finite")
    n = len(g)
    sizes = np.bincount(labels).astype(float) if n else np.zeros(0)
    count = len(sizes)
    nan = math.nan
    if count < 2:
        return JackknifeResult(nan, nan, nan, max(count - 1, 0), nan, nan, nan, nan, count)
    r_ga, loo_ga = _leave_group_out_r(g, a, labels, sizes, n)
    r_gb, loo_gb = _leave_group_out_r(g, b, labels, sizes, n)

    def fisher(r):
        return np.arctanh(np.clip(r, -1 + 1e-12, 1 - 1e-12))

    diff_z, diff_r = float(fisher(r_ga) - fisher(r_gb)), r_ga - r_gb
    loo_z, loo_r = fisher(loo_ga) - fisher(loo_gb), loo_ga - loo_gb
    if not (np.isfinite(diff_z) and np.all(np.isfinite(loo_z))):
        return JackknifeResult(diff_z, nan, nan, count - 1, nan, diff_r, nan, nan, count)
    var_z, var_r = _jackknife_variance(loo_z), _jackknife_variance(loo_r)
    df = count - 1
    se = math.sqrt(var_z)
    if se > 0:
        t = diff_z / se
    else:
        t = 0.0 if diff_z == 0 else math.copysign(math.inf, diff_z)
    p = float(2 * st.t.sf(abs(t), df))
    half = float(st.t.ppf(0.5 + level / 2, df)) * math.sqrt(var_r)
    return JackknifeResult(diff_z, var_z, float(t), df, p, float(diff_r), float(diff_r - half), float(diff_r + half),
                           count)


def paired_proportion_difference(hits_a, hits_b) -> tuple[float, float]:
    """Difference of two paired proportions (accuracy, R@K) p_a − p_b = (b − c)/n and its variance
    ((b + c)/n − ((b − c)/n)²)/n, with b, c the discordant counts (Agresti 2002, §10.1.1). The common scale on
    which :mod:`benchbox.meta` pools accuracy and recall rows. Returns ``(diff, var)``."""
    a, b = _paired_flags(hits_a, hits_b, "hits")
    a, b = a.astype(bool), b.astype(bool)
    n = len(a)
    if n == 0:
        raise BenchboxError("paired_proportion_difference needs at least one item")
    only_a, only_b = np.count_nonzero(a & ~b) / n, np.count_nonzero(~a & b) / n
    diff = only_a - only_b
    return float(diff), float((only_a + only_b - diff**2) / n)


def feasible_r_ab(r_ga, r_gb) -> tuple[np.ndarray, np.ndarray]:
    """The range of r(a, b) for which the correlation matrix of (g, a, b) is positive semi-definite:
    r_ga r_gb ± √((1 − r_ga²)(1 − r_gb²))."""
    r_ga, r_gb = np.asarray(r_ga, dtype=float), np.asarray(r_gb, dtype=float)
    half = np.sqrt(np.clip((1 - r_ga**2) * (1 - r_gb**2), 0, None))
    return np.clip(r_ga * r_gb - half, -1, 1), np.clip(r_ga * r_gb + half, -1, 1)


def _min_quadratic(a: np.ndarray, b: np.ndarray, c0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min over x in [lo, hi] of a x² + b x + c0, elementwise (a ≤ 0: concave or linear, the minimum is at an
    end; the vertex candidate then falls back to ``lo``)."""
    candidates = [a * lo**2 + b * lo + c0, a * hi**2 + b * hi + c0]
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(a > 0, -b / (2 * a), lo)
    vertex = np.clip(vertex, lo, hi)
    candidates.append(a * vertex**2 + b * vertex + c0)
    return np.minimum.reduce(candidates)


def unknown_r_ab_test(r_ga, r_gb, n, level: float = 0.95):
    """Compare two correlations measured on the same n items when r(a, b) is unknown (published numbers
    without per-item scores): the worst case over every r(a, b) consistent with r_ga and r_gb.

    Both Steiger's (1980) Z and Zou's (2007) interval depend on r(a, b) only through the covariance of the
    two correlations, which is a quadratic in r(a, b) (see :func:`_zou_corr`; Steiger's pooled form likewise).
    The variance of the difference is largest where that covariance is smallest, so taking the minimum over
    the feasible range (:func:`feasible_r_ab`) gives the largest p and the widest interval that any true
    r(a, b) would produce: a conservative test, valid whatever r(a, b) is (asymptotically). Treating the two
    correlations as independent is not always conservative (the covariance can be negative).

    Vectorised; returns ``(z, p, low, high)``.
    """
    r_ga, r_gb, n = (np.asarray(x, dtype=float) for x in (r_ga, r_gb, n))
    _check_r("r_ga", r_ga)
    _check_r("r_gb", r_gb)
    _check_n(n)
    r_ga, r_gb, n = np.broadcast_arrays(r_ga, r_gb, n)
    lo, hi = feasible_r_ab(r_ga, r_gb)
    rp2 = ((r_ga + r_gb) / 2) ** 2
    scale = (1 - rp2) ** 2
    steiger_min = _min_quadratic(0.5 * rp2 / scale, (1 - 2 * rp2) / scale, -0.5 * rp2 * (1 - 2 * rp2) / scale, lo, hi)
    k = 1 - r_ga**2 - r_gb**2
    denom = (1 - r_ga**2) * (1 - r_gb**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        zou_min = _min_quadratic(0.5 * r_ga * r_gb / denom, k / denom, -0.5 * r_ga * r_gb * k / denom, lo, hi)
    z, p = _steiger_z(r_ga, r_gb, steiger_min, n)
    low, high = _zou_interval(r_ga, r_gb, zou_min, n, level)
    return _out(z, p, low, high)


@dataclass(frozen=True)
class BootstrapResult:
    """A paired bootstrap of statistic(A) − statistic(B): observed difference, percentile interval, bootstrap
    standard error, z = diff / se and its two-sided p."""

    diff: float
    ci_low: float
    ci_high: float
    se: float
    z: float
    p: float
    n_boot: int

    @property
    def ci(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high


#: ``statistic(w, gold, score) -> [B]``: the statistic of each weighted sample (``w``: [B, n] draw counts)
WeightedStatistic = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
STATISTICS: dict[str, WeightedStatistic] = {"pearson": weighted_pearson, "spearman": weighted_spearman}
AGGREGATES = ("mean", "wmean", "pooled")


def weighted_mean(w: np.ndarray, gold: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Mean of ``score`` in each resample (``gold`` unused): e.g. the mean rank."""
    return (w * score).sum(axis=1) / w.sum(axis=1)


def weighted_median(w: np.ndarray, gold: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Lower median of ``score`` in each resample (``gold`` unused): e.g. the median rank."""
    order = np.argsort(score, kind="stable")
    cum = np.cumsum(w[:, order], axis=1)
    index = np.argmax(cum >= cum[:, -1:] / 2, axis=1)
    return score[order][index]


def _wald_p(diff: float, se: float) -> float:
    """Two-sided p of z = diff / bootstrap standard error (Efron & Tibshirani 1993, ch. 6 and 16). The
    percentile p (share of draws across 0) cannot fall below 2/(B + 1): too coarse to survive a Holm
    correction over dozens of comparisons, hence the normal approximation."""
    if se == 0 or not np.isfinite(se):
        return 1.0 if diff == 0 else 0.0
    return float(2 * st.norm.sf(abs(diff) / se))


def _bootstrap_result(diff: float, boot: np.ndarray, level: float, n_boot: int) -> BootstrapResult:
    """The observed difference with the percentile interval, standard error, z and p of its resampled values."""
    low, high = percentile_interval(boot, level)
    se = float(boot.std(ddof=1))
    z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    return BootstrapResult(diff, low, high, se, z, _wald_p(diff, se), n_boot)


def paired_bootstrap(
    gold,
    score_a,
    score_b,
    *,
    strata=None,
    statistic: str | WeightedStatistic = "pearson",
    aggregate: str = "mean",
    n_boot: int = 1000,
    seed: int = 1111,
    level: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap (Efron & Tibshirani 1993) of statistic(gold, A) − statistic(gold, B).

    Items are resampled with replacement, the same draw for A and B (paired), vectorised through draw
    counts (:mod:`benchbox.resampling`). With ``strata`` (one label per item, e.g. the STS subset), items are
    resampled within each stratum and the statistic is aggregated as ``aggregate``: ``"mean"`` (unweighted
    mean over strata), ``"wmean"`` (weighted by stratum size) or ``"pooled"`` (one statistic over all items)
    — the per-year STS aggregates (docs/protocols.md#sts-scores; NaN per-stratum values count as 0, as in SentEval).
    ``statistic``: ``"pearson"``, ``"spearman"`` or a :data:`WeightedStatistic` (e.g. :func:`weighted_mean`).
    Returns the observed difference, the percentile interval and a two-sided p from the bootstrap standard
    error (:func:`_wald_p`). Under a simulated null (two encoders with r = .5 to gold, 2000 simulations,
    B = 500) it rejected at 5% in 5.7% of cases with n = 120 and 5.05% with n = 500: slightly liberal for
    small n, like most bootstrap tests.
    """
    a = np.asarray(score_a, dtype=float)
    b = np.asarray(score_b, dtype=float)
    g = np.zeros_like(a) if gold is None else np.asarray(gold, dtype=float)
    if not (a.ndim == b.ndim == g.ndim == 1 and len(a) == len(b) == len(g)):
        raise BenchboxError(f"gold, score_a and score_b must be 1-d of one length, got {g.shape}, {a.shape}, {b.shape}")
    if isinstance(statistic, str):
        if statistic not in STATISTICS:
            raise BenchboxError(f"unknown statistic {statistic!r}: use {', '.join(STATISTICS)} or a function")
        statistic = STATISTICS[statistic]
    if aggregate not in AGGREGATES:
        raise BenchboxError(f"unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}")
    if n_boot < 2:
        raise BenchboxError(f"n_boot must be at least 2, got {n_boot}")
    labels = np.zeros(len(a), dtype=np.int64) if strata is None else pd.factorize(np.asarray(strata))[0]
    if len(labels) != len(a):
        raise BenchboxError(f"strata has {len(labels)} labels for {len(a)} items")
    groups = [np.flatnonzero(labels == k) for k in range(labels.max() + 1)] if len(a) else []
    if not groups or min(len(idx) for idx in groups) < 2:
        raise BenchboxError("paired_bootstrap needs at least 2 items in every stratum")
    require_bootstrap_memory(n_boot, len(a))
    sizes = np.array([len(idx) for idx in groups], dtype=float)
    counts = stratified_counts(np.random.default_rng(seed), [len(idx) for idx in groups], n_boot)
    draws = np.zeros((n_boot, len(a)))
    for idx, w in zip(groups, counts):
        draws[:, idx] = w

    def value(w: np.ndarray, score: np.ndarray) -> np.ndarray:
        if aggregate == "pooled":
            return np.nan_to_num(statistic(w, g, score))
        per = np.vstack([np.nan_to_num(statistic(w[:, idx], g[idx], score[idx])) for idx in groups])
        return aggregate_strata(per, sizes, aggregate)

    ones = np.ones((1, len(a)))
    diff = float(value(ones, a)[0] - value(ones, b)[0])
    return _bootstrap_result(diff, value(draws, a) - value(draws, b), level, n_boot)


def paired_bootstrap_rows(
    rows_a: pd.DataFrame,
    rows_b: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    n_boot: int = 1000,
    seed: int = 1111,
    level: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of ``statistic(rows_a) - statistic(rows_b)`` for any statistic of per-item rows (a
    task's own metric, e.g. an AUC): row i of A and of B is the same item, and each resample takes the same
    items for both, drawn as :func:`paired_bootstrap` draws them without strata (the same seed gives the same
    resamples). Interval, standard error and p as there; a resample whose statistic is not finite (e.g. an AUC
    of a one-class resample) is left out."""
    if len(rows_a) != len(rows_b) or len(rows_a) < 2:
        raise BenchboxError(f"paired_bootstrap_rows needs two tables of one length >= 2, got {len(rows_a)} and {len(rows_b)}")
    if n_boot < 2:
        raise BenchboxError(f"n_boot must be at least 2, got {n_boot}")
    counts = bootstrap_counts(np.random.default_rng(seed), len(rows_a), n_boot).astype(np.int64)
    items = np.arange(len(rows_a))
    diff = float(statistic(rows_a)) - float(statistic(rows_b))
    boot = np.array([float(statistic(rows_a.iloc[idx])) - float(statistic(rows_b.iloc[idx]))
                     for idx in (np.repeat(items, c) for c in counts)])
    boot = boot[np.isfinite(boot)]
    if len(boot) < 2:
        raise BenchboxError("paired_bootstrap_rows: the statistic is not finite on the resamples")
    return _bootstrap_result(diff, boot, level, n_boot)


def _paired_flags(x, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or x.shape != y.shape:
        raise BenchboxError(f"{name} of A and B must be 1-d of one length, got {x.shape} and {y.shape}")
    return x, y


def mcnemar_test(hits_a, hits_b) -> tuple[float, float]:
    """McNemar's (1947) exact test for paired hit/miss outcomes (e.g. R@K per query, correct per item).

    The exact binomial test on the discordant pairs (statsmodels ``mcnemar(exact=True)``); returns
    ``(statistic, p)`` with statistic = min(b, c), the smaller discordant count. No discordant pair: (0, 1).
    """
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
    a, b = _paired_flags(ranks_a, ranks_b, "ranks")
    a, b = a.astype(float), b.astype(float)
    if not np.any(a != b):
        return 0.0, 1.0
    result = st.wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)


CORRECTIONS = {"holm": "holm", "bh": "fdr_bh", "fdr_bh": "fdr_bh"}


def adjust_pvalues(p, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons: ``"holm"`` (Holm 1979, family-wise error) or ``"fdr_bh"``
    / ``"bh"`` (Benjamini & Hochberg 1995, false discovery rate), via statsmodels ``multipletests``.
    NaN entries (comparisons without a test) stay NaN and do not count in the family."""
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

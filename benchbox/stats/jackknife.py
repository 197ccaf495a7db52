"""Items that are not independent (STS reuses sentences across pairs): the groups of pairs linked by a shared
sentence and the delete-a-group jackknife of a correlation difference over them (Efron & Tibshirani 1993,
ch. 11; Shao & Tu 1995)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.errors import BenchboxError

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


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


def leave_group_out_r(x: np.ndarray, y: np.ndarray, labels: np.ndarray, sizes: np.ndarray,
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


def jackknife_variance(estimates: np.ndarray) -> float:
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
    per-group sums, :func:`leave_group_out_r`); variance (G − 1)/G Σ (θ_(g) − θ̄)²; t = Δz / SE on G − 1
    degrees of freedom, two-sided. The interval of Δr = r(g, a) − r(g, b) is Δr ± t_{G−1} · SE_r with SE_r the
    same jackknife on the r scale, centred at the full-sample Δr. With every group a single item this is the
    ordinary delete-one jackknife. Fewer than two groups, or a correlation undefined with a group left out
    (a constant column): NaN. Returns a :class:`JackknifeResult`.
    """
    from scipy import stats as st

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
    r_ga, loo_ga = leave_group_out_r(g, a, labels, sizes, n)
    r_gb, loo_gb = leave_group_out_r(g, b, labels, sizes, n)

    def fisher(r):
        return np.arctanh(np.clip(r, -1 + 1e-12, 1 - 1e-12))

    diff_z, diff_r = float(fisher(r_ga) - fisher(r_gb)), r_ga - r_gb
    loo_z, loo_r = fisher(loo_ga) - fisher(loo_gb), loo_ga - loo_gb
    if not (np.isfinite(diff_z) and np.all(np.isfinite(loo_z))):
        return JackknifeResult(diff_z, nan, nan, count - 1, nan, diff_r, nan, nan, count)
    var_z, var_r = jackknife_variance(loo_z), jackknife_variance(loo_r)
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

"""Random-effects pooling of per-row differences across tasks: the claim-level effect of ``benchbox compare``.

Per-row differences on a common scale (:func:`benchbox.stats.fisher_z_difference` for correlations,
:func:`benchbox.stats.paired_proportion_difference` for accuracies and recalls) are pooled by a
random-effects meta-analysis, with the between-row variance τ² by DerSimonian & Laird (1986, ``"dl"``) or
Paule & Mandel (1982, ``"pm"``: the root of the generalised Q equation, by bisection) in
:func:`between_row_variance` (DerSimonian–Laird checked against statsmodels' ``combine_effects``, both against R
metafor), truncated at τ² = 0 as metafor does. statsmodels' Paule–Mandel iteration is not used: on strongly
heterogeneous rows its Newton steps can stop away from the root (at τ² = 0 or elsewhere, depending on the CPU's
floating-point path) although Q(0) > k − 1; bisection on the monotone Q(τ²) finds the root on every CPU.
I² is metafor's: 100·τ²/(τ² + s²) with s² the typical within-row variance (Higgins & Thompson
2002, eq. 9), which equals (Q − df)/Q for DerSimonian–Laird.

Rows that share items are dependent. Rows carry a cluster label (the item set of their paired-test kind,
:meth:`benchbox.task_contract.paired_tests.PairedKind.cluster`): rows whose items share
a sentence form one cluster (:func:`sentence_clusters`, computed from the items by ``benchbox compare``: e.g.
STS-B test with the STS12–16 subsets it reuses sentences of, the OnWN subsets of STS12–14), and the retrieval
directions of one task form one. When some cluster holds more than one row, inference on the random-effects weighted mean (weights
W = Φ⁻¹, working covariance Φ = diag(v + τ²)) is cluster-robust, in one of two ways:

- CR2 with a t reference (``PooledEffect.variance == "CR2"``): the bias-reduced linearisation
  cluster-robust variance (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018, JBES 36(4)) on Satterthwaite
  degrees of freedom (same sources; Tipton 2015, Psychological Methods 20(3)). CR2 adjusts each cluster's
  residuals by A_j with A_j C_j A_jᵀ = Φ_j (C_j the working covariance of the cluster's residuals), so the
  variance is exactly unbiased under the working model; balanced clusters with equal variances give the
  variance of the cluster means over m and m − 1 df. Used when those df are at least
  :data:`SIGN_FLIP_BELOW_DF` = 4.
- The cluster sign-flip randomization test (``"sign-flip"``; Canay, Romano & Shaikh 2017, Econometrica
  85(3); the wild cluster bootstrap with Rademacher weights, enumerated), when the Satterthwaite df fall
  below 4, the point under which Tipton (2015) finds the CR2 t test unreliable. With the STS clusters of the
  26 semantic rows counted by shared sentences (14 clusters, one of 11 rows holding about half the weight;
  tests/stats/test_cr2.py) the df are about 3 and the CR2 t test rejects only 2.8% of true nulls at 5%, while the
  sign-flip test, exact for fixed weights when the cluster sums are independent and symmetric whatever
  their number or sizes, rejects 5.3% (4.8% with within-cluster correlation 0.5). The p of μ = 0 and the
  interval (the test inverted) are :class:`ClusterSignFlip`'s, with the weights held at the estimated τ²;
  with m clusters its smallest attainable p is 2/2^m, so with five clusters or fewer nothing is significant
  at 5% and the 95% interval is the whole line.

In both cases ``se`` is the CR2 se and ``df`` the Satterthwaite df, so the reader sees how few effective
clusters there are. The Hedges–Tipton–Jackson (2010) CR1 variance with t on m − 1 df, used before, rejected
about 11% at 5% with the STS clusters. CR2 is hand-written (:func:`cr2`): no maintained Python package
computes CR2 with Satterthwaite df for meta-analytic weights (clubSandwich is R; pyfixest, linearmodels,
wildboottest and statsmodels have none). Without repeated labels the interval is the model-based normal one
(``variance == "model"``, ``df`` = ∞).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchbox.errors import BenchboxError

#: the estimators of τ² (:func:`between_row_variance`)
METHODS = ("dl", "pm")

#: Below this Satterthwaite df the CR2 t test is unreliable (Tipton 2015, Psychological Methods 20(3)), and
#: the pooled p and interval come from the cluster sign-flip test (:class:`ClusterSignFlip`) instead.
SIGN_FLIP_BELOW_DF = 4.0
#: Up to this many clusters the sign-flip test enumerates all 2^m sign patterns ...
SIGN_FLIP_ENUMERATE = 16
#: ... beyond, it uses this many, the identity and seeded random ones (:func:`sign_patterns`).
SIGN_FLIP_DRAWS = 65_536
SIGN_FLIP_SEED = 2017


def sentence_clusters(texts: Mapping[tuple[str, str], Iterable[Any]]) -> dict[tuple[str, str], str]:
    """Cluster labels of rows from their sentences: ``texts`` maps each (task, subset) to the sentences of its
    items (every column: ``sentence1`` and ``sentence2``, or ``sentence``). Two rows fall in one cluster when
    they hold a common sentence (:func:`benchbox.stats.normalise_sentence`: lower-cased, whitespace
    collapsed), directly or through a chain of rows (union-find over rows). The label of a cluster is its
    first member in sorted order, ``task/subset``, followed by ``+N`` for N further members (e.g.
    ``sts12/MSRpar+10`` for STS-B test with the STS12–16 subsets it was drawn from): the same whatever order the
    rows come in, so every pair of models compared on the same data gets the same labels."""
    from benchbox.stats import normalise_sentence

    keys = sorted(texts, key=lambda k: (str(k[0]), str(k[1])))
    parent = list(range(len(keys)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, key in enumerate(keys):
        for text in texts[key]:
            sentence = normalise_sentence(text)
            if sentence is None:
                continue
            j = owner.setdefault(sentence, i)
            if j != i:
                a, b = find(i), find(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for i in range(len(keys)):
        members.setdefault(find(i), []).append(i)
    labels = {}
    for group in members.values():
        first = keys[min(group)]
        label = f"{first[0]}/{first[1]}" + (f"+{len(group) - 1}" if len(group) > 1 else "")
        labels.update({keys[i]: label for i in group})
    return labels


@dataclass(frozen=True)
class PooledEffect:
    """A random-effects pooled effect: estimate, standard error, interval, two-sided p, τ², I² (%), Cochran's
    Q, the number of rows and of clusters, whether the robust (clustered) variance was used, the degrees of
    freedom of the CR2 variance (Satterthwaite's on the robust path, ``math.inf`` for the normal one) and the
    inference used: ``"model"`` (normal, no repeated cluster), ``"CR2"`` (CR2 se and t on ``df``) or
    ``"sign-flip"`` (``df`` < 4: p and interval from the cluster sign-flip test; ``se`` stays the CR2 se)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    tau2: float
    i2: float
    q: float
    k: int
    clusters: int
    method: str
    robust: bool
    df: float = math.inf
    variance: str = "model"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pool_effects(effects, variances, *, method: str = "dl", clusters=None, level: float = 0.95) -> PooledEffect:
    """Pool per-row ``effects`` with sampling ``variances`` by a random-effects model (τ² by ``method``:
    ``"dl"`` or ``"pm"``). ``clusters``: one label per row; rows with one label are dependent, and when a
    label repeats the interval and p use the CR2 robust variance with Satterthwaite df, or the cluster
    sign-flip test when those df are below :data:`SIGN_FLIP_BELOW_DF` (module docstring)."""
    from scipy import stats as st

    if method not in METHODS:
        raise BenchboxError(f"unknown pooling method {method!r}: use dl (DerSimonian-Laird) or pm (Paule-Mandel)")
    y = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    if y.ndim != 1 or y.shape != v.shape or len(y) < 2:
        raise BenchboxError(f"pooling needs at least two rows of effects and variances, got {y.shape} and {v.shape}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise BenchboxError("pooling needs finite effects and positive finite variances")
    tau2 = float(between_row_variance(y, v, method))
    w_re = 1 / (v + tau2)
    estimate, se = float(w_re @ y / w_re.sum()), float(1 / math.sqrt(w_re.sum()))
    w_fe = 1 / v
    q = float(generalised_q(y, v, np.zeros(())))  # Cochran's Q
    typical = (len(y) - 1) * w_fe.sum() / (w_fe.sum() ** 2 - (w_fe**2).sum())
    i2 = 100 * tau2 / (tau2 + typical)
    labels = np.arange(len(y)) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    if len(labels) != len(y):
        raise BenchboxError(f"{len(labels)} cluster labels for {len(y)} rows")
    m = int(labels.max()) + 1
    robust = m < len(y)
    if robust:
        if m < 2:
            raise BenchboxError("every row shares items with every other: no independent clusters to pool over")
        _, variance, df = cr2(y, v + tau2, labels)  # μ̂ equals statsmodels' weighted mean
        se = math.sqrt(variance)
        if df < SIGN_FLIP_BELOW_DF:
            test = ClusterSignFlip(y, 1 / (v + tau2), labels)
            p = test.p(0.0)
            ci_low, ci_high = test.interval(level, se)
            kind = "sign-flip"
        else:
            quantile = float(st.t.ppf(0.5 + level / 2, df))
            p = float(2 * st.t.sf(abs(estimate) / se, df)) if se > 0 else float(estimate == 0)
            ci_low, ci_high, kind = estimate - quantile * se, estimate + quantile * se, "CR2"
    else:
        df, kind = math.inf, "model"
        quantile = float(st.norm.ppf(0.5 + level / 2))
        p = float(2 * st.norm.sf(abs(estimate) / se))
        ci_low, ci_high = estimate - quantile * se, estimate + quantile * se
    return PooledEffect(estimate, se, float(ci_low), float(ci_high), p, tau2, float(i2), q, len(y), m,
                        method, robust, float(df), kind)


#: a row's sampling variance at most this (in absolute value) with its effect exactly 0 is a row measured without
#: error: Fisher z rows of identical scores get (2 − 2c)/(n − 3) with c = 1 up to rounding, a few ulps of 1 (about
#: 1e-17 or below 0); a genuine variance this small needs r(a, b) within 1e-12 of 1
EXACT_VARIANCE = 1e-12


def measured_without_error(effects, variances) -> np.ndarray:
    """Whether each row was measured without error: effect exactly 0 and variance within :data:`EXACT_VARIANCE` of
    0 (two models whose per-item scores are identical)."""
    return (np.asarray(effects, dtype=float) == 0) & (np.abs(np.asarray(variances, dtype=float)) <= EXACT_VARIANCE)


def exact_rows_weighed(effects, variances) -> np.ndarray:
    """``variances`` with each row measured without error (:func:`measured_without_error`) given the smallest
    variance of the measured rows: such a row joins the pooled analysis with zero effect and the weight of the
    claim's most precise measured row. Its own inverse-variance weight would be unbounded, making every claim that
    includes it "no difference" whatever the other rows say; left out (before issue 50), the rows that differ lost
    a row to pool with, and often their claim. NaN for every row when none was measured with error (nothing to
    weigh by)."""
    v = np.asarray(variances, dtype=float).copy()
    exact = measured_without_error(effects, v)
    measured = v[~exact]
    v[exact] = measured.min() if measured.size else np.nan
    return v


def between_row_variance(effects, variances, method: str = "dl") -> np.ndarray:
    """τ² of the random-effects model for many sets of row effects at once: ``effects`` [..., k], one set per
    leading index, all with the rows' sampling ``variances`` [k]; truncated at 0 (as :func:`pool_effects`).
    ``"dl"``: DerSimonian & Laird 1986, (Q − (k − 1)) / (Σw − Σw²/Σw) with w = 1/v; ``"pm"``: Paule & Mandel
    1982, the τ² at which the generalised Q, Σ w(τ²)(y − μ̂(τ²))² with w(τ²) = 1/(v + τ²), equals k − 1, found by
    bisection (Q(τ²) decreases in τ²; it is below k − 1 beyond the rows' sample variance, which bounds it).
    The claim test re-estimates τ² in each jackknife replicate with it (:mod:`benchbox.stats.claim_test`)."""
    if method not in METHODS:
        raise BenchboxError(f"unknown pooling method {method!r}: use dl (DerSimonian-Laird) or pm (Paule-Mandel)")
    y, v = np.asarray(effects, dtype=float), np.asarray(variances, dtype=float)
    k = y.shape[-1]
    zero = np.zeros(y.shape[:-1])
    if method == "dl":
        w = 1 / v
        return np.maximum(0.0, (generalised_q(y, v, zero) - (k - 1)) / (w.sum() - (w**2).sum() / w.sum()))
    low, high = zero, np.where(generalised_q(y, v, zero) > k - 1, y.var(axis=-1, ddof=1), 0.0)
    for _ in range(100):  # the bracket halves each step: 2^-100 of the sample variance
        middle = (low + high) / 2
        above = generalised_q(y, v, middle) > k - 1
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return (low + high) / 2


def generalised_q(effects: np.ndarray, variances: np.ndarray, tau2: np.ndarray) -> np.ndarray:
    """Σ w (y − μ̂)² with w = 1/(v + τ²) and μ̂ the w-weighted mean, for effects [..., k] and τ² [...]; at τ² = 0
    Cochran's Q."""
    w = 1 / (variances + tau2[..., None])
    mu = (w * effects).sum(-1, keepdims=True) / w.sum(-1, keepdims=True)
    return (w * (effects - mu) ** 2).sum(-1)


def _inverse_sqrt(matrix: np.ndarray) -> np.ndarray:
    """The symmetric (pseudo-)inverse square root of a symmetric positive semi-definite matrix."""
    values, vectors = np.linalg.eigh(matrix)
    keep = values > max(values.max(), 0.0) * len(values) * np.finfo(float).eps
    scale = np.zeros_like(values)
    scale[keep] = 1 / np.sqrt(values[keep])
    return (vectors * scale) @ vectors.T


def cr2_adjustments(phi, labels) -> list[np.ndarray]:
    """The CR2 adjustment matrices A_j of the intercept-only model weighted by W = Φ⁻¹, Φ = diag(``phi``), one
    per cluster j = 0, 1, ... of the integer ``labels``: A_j = Φ_j^½ B_j^-½ Φ_j^½ with B_j = Φ_j^½ C_j Φ_j^½ and
    C_j = (I − H)_j Φ (I − H)_jᵀ, H = 1 M 1ᵀ W, M = 1/Σw (Pustejovsky & Tipton 2018), so A_j C_j A_jᵀ = Φ_j."""
    phi, labels = np.asarray(phi, dtype=float), np.asarray(labels)
    w = 1 / phi
    residual = np.eye(len(phi)) - np.outer(np.ones(len(phi)), w) / w.sum()  # I − H
    c = residual @ (phi[:, None] * residual.T)
    adjustments = []
    for j in range(int(labels.max()) + 1):
        rows = np.flatnonzero(labels == j)
        root = np.sqrt(phi[rows])
        b = root[:, None] * c[np.ix_(rows, rows)] * root[None, :]
        adjustments.append(root[:, None] * _inverse_sqrt(b) * root[None, :])
    return adjustments


def cr2(effects, phi, labels) -> tuple[float, float, float]:
    """The weighted mean μ̂ = Σwy/Σw (w = 1/``phi``), its CR2 variance M² Σ_j (w_jᵀ A_j e_j)² (e = y − μ̂) and the
    Satterthwaite df (Σ_j g_jᵀΦg_j)² / Σ_i Σ_j (g_iᵀΦg_j)², g_j = M (I − H)_jᵀ A_j w_j, for the clusters given
    by the integer ``labels`` 0, 1, ... (:func:`cr2_adjustments`)."""
    y, phi, labels = np.asarray(effects, dtype=float), np.asarray(phi, dtype=float), np.asarray(labels)
    w = 1 / phi
    bread = 1 / w.sum()  # M
    estimate = float(bread * (w * y).sum())
    e = y - estimate
    residual = np.eye(len(y)) - np.outer(np.ones(len(y)), w) * bread  # I − H
    g = np.zeros((int(labels.max()) + 1, len(y)))
    variance = 0.0
    for j, adjustment in enumerate(cr2_adjustments(phi, labels)):
        rows = np.flatnonzero(labels == j)
        aw = adjustment @ w[rows]  # A_j W_j 1 (A_j is symmetric)
        variance += (bread * aw @ e[rows]) ** 2
        g[j] = bread * residual[rows].T @ aw
    cross = g @ (phi[:, None] * g.T)  # g_iᵀ Φ g_j
    df = float(np.trace(cross) ** 2 / (cross**2).sum())
    return estimate, float(variance), df


@functools.lru_cache(maxsize=8)
def _patterns(m: int, seed: int) -> np.ndarray:
    if m <= SIGN_FLIP_ENUMERATE:
        bits = (np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1  # row r: the binary digits of r
        patterns = 1.0 - 2.0 * bits  # row 0 is the identity (all +1)
    else:
        patterns = 1.0 - 2.0 * np.random.default_rng(seed).integers(0, 2, size=(SIGN_FLIP_DRAWS, m))
        patterns[0] = 1.0
    patterns.flags.writeable = False
    return patterns


def sign_patterns(m: int, *, seed: int = SIGN_FLIP_SEED) -> np.ndarray:
    """The sign patterns of the cluster sign-flip test as a read-only ±1 matrix, one pattern a row, the identity
    (all +1) first: for m ≤ :data:`SIGN_FLIP_ENUMERATE` clusters all 2^m patterns (row r flips the clusters
    whose bit is set in r), else :data:`SIGN_FLIP_DRAWS` patterns with independent fair signs drawn with
    ``seed`` after the identity. Random patterns with the identity included keep the level: under H0 the
    observed pattern is exchangeable with the N − 1 drawn ones, so P(p ≤ α) ≤ α still holds, and p ≥ 1/N."""
    if m < 1:
        raise BenchboxError(f"a sign-flip test needs at least one cluster, got {m}")
    return _patterns(int(m), int(seed))


class ClusterSignFlip:
    """The cluster sign-flip randomization test of H0: μ = μ0 for a weighted mean with fixed weights (Canay,
    Romano & Shaikh 2017, Econometrica 85(3); the wild cluster bootstrap with Rademacher weights, enumerated).

    With weights w_i and the clusters of the integer ``labels`` 0, 1, ..., the cluster sums are
    s_j(μ0) = Σ_{i∈j} w_i (y_i − μ0) = a_j − μ0 b_j (a_j = Σ w y, b_j = Σ w over cluster j). When the clusters
    are independent and each s_j(μ) is symmetric about 0 at the true μ, every sign pattern ε ∈ {±1}^m of
    the sums is equally likely, so p(μ0) = #{ε : |Σ_j ε_j s_j(μ0)| ≥ |Σ_j s_j(μ0)|} / #patterns (a relative
    tolerance of 1e-12 absorbs rounding in the ties) is an exact p-value for every finite m; studentising
    by √Σ s_j² changes nothing, since that does not depend on the signs. Σ_j ε_j s_j = c_ε − μ0 d_ε with
    c = Pa and d = Pb for the pattern matrix P (:func:`sign_patterns`: all 2^m patterns up to 16 clusters,
    else 65,536 seeded random ones with the identity), computed once, so p(μ0) costs one pass over the
    patterns.

    The test is discrete: ε and −ε give the same statistic and the identity is always counted, so the
    smallest attainable p is 2/2^m (m = 3: 0.25; m = 5: 0.0625, so nothing is significant at 5% with five
    clusters or fewer, whatever the data). That is the honest answer with so few independent units, not a
    bug. Each pattern counts on an interval of μ0 that contains μ̂ = Σa/Σb (|d_ε| ≤ Σb, so
    (c_ε − μ0 d_ε)² − (Σa − μ0 Σb)² is a concave quadratic that is ≥ 0 at μ̂): p falls monotonically on
    either side of μ̂, p(μ̂) = 1, and the acceptance set {μ0 : p(μ0) > α} is an interval, found by
    :meth:`interval`. As |μ0| → ∞ every s_j takes the sign of −μ0 and only ±identity stay counted, so when
    2/2^m > α the interval is the whole line."""

    def __init__(self, effects, weights, labels, *, patterns=None):
        y, w, labels = (np.asarray(x) for x in (effects, weights, labels))
        m = int(labels.max()) + 1
        self.a = np.bincount(labels, weights=w * y, minlength=m)
        self.b = np.bincount(labels, weights=w, minlength=m)
        self.patterns = sign_patterns(m) if patterns is None else np.asarray(patterns, dtype=float)
        self.c, self.d = self.patterns @ self.a, self.patterns @ self.b
        self.estimate = float(self.a.sum() / self.b.sum())
        self._size = (float(np.abs(self.a).sum()), float(self.b.sum()))

    def p(self, mu0: float) -> float:
        """The two-sided randomization p of H0: μ = ``mu0``."""
        mu0 = float(mu0)
        observed = abs(self.a.sum() - mu0 * self.b.sum())
        tolerance = 1e-12 * (self._size[0] + abs(mu0) * self._size[1])
        return float(np.mean(np.abs(self.c - mu0 * self.d) >= observed - tolerance))

    def p_limit(self) -> float:
        """p(μ0) as |μ0| → ∞: the share of patterns with |d_ε| = Σb (2/2^m when all are enumerated)."""
        return float(np.mean(np.abs(self.d) >= self._size[1] * (1 - 1e-12)))

    def interval(self, level: float = 0.95, step: float | None = None) -> tuple[float, float]:
        """The test inverted: the ends of {μ0 : p(μ0) > 1 − ``level``}, each by bisection to 1e-10 × ``step``
        after stepping out from μ̂ by 4, 8, 16, ... × ``step`` (the CR2 se in :func:`pool_effects`; the
        fixed-weight se 1/√Σw when not given or not positive) until p ≤ 1 − level; (−∞, ∞) when the test
        cannot reject at that level (:meth:`p_limit` > 1 − level)."""
        alpha = 1 - level
        if self.p_limit() > alpha:
            return -math.inf, math.inf
        scale = step if step is not None and step > 0 else 1 / math.sqrt(self._size[1])
        centre = self.estimate

        def end(direction: float) -> float:
            inside, multiple = centre, 4.0
            outside = centre + direction * multiple * scale
            while self.p(outside) > alpha:
                inside, multiple = outside, multiple * 2
                outside = centre + direction * multiple * scale
                if not math.isfinite(outside):  # pragma: no cover - p_limit <= alpha rules this out
                    return direction * math.inf
            for _ in range(200):
                if abs(outside - inside) <= 1e-10 * scale:
                    break
                middle = (inside + outside) / 2
                if self.p(middle) > alpha:
                    inside = middle
                else:
                    outside = middle
            return (inside + outside) / 2

        return end(-1.0), end(1.0)

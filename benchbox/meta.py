"""Random-effects pooling of per-row differences across tasks: the claim-level effect of ``benchbox compare``.

Per-row differences on a common scale (:func:`benchbox.stats.fisher_z_difference` for correlations,
:func:`benchbox.stats.paired_proportion_difference` for accuracies and recalls) are pooled by a
random-effects meta-analysis, with the between-row variance τ² by DerSimonian & Laird (1986, ``"dl"``) or
Paule & Mandel (1982, ``"pm"``), through ``statsmodels.stats.meta_analysis.combine_effects`` (checked against
R metafor), truncated at τ² = 0 as metafor does (statsmodels returns DerSimonian–Laird's negative values). I² is metafor's: 100·τ²/(τ² + s²) with s² the typical within-row variance (Higgins & Thompson
2002, eq. 9), which equals (Q − df)/Q for DerSimonian–Laird.

Rows that share items are dependent. Rows carry a cluster label (:func:`row_cluster`, :func:`item_clusters`);
when some cluster holds more than one row, the pooled interval and p use the bias-reduced linearisation
cluster-robust variance CR2 (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018, JBES 36(4)) of the
random-effects weighted mean, with working covariance Φ = diag(v + τ²) and weights W = Φ⁻¹, and a t reference
on Satterthwaite degrees of freedom (Pustejovsky & Tipton 2018; Tipton 2015, Psychological Methods 20(3)).
CR2 adjusts each cluster's residuals by A_j with A_j C_j A_jᵀ = Φ_j (C_j the working covariance of the
cluster's residuals), so the variance is exactly unbiased under the working model; balanced clusters with
equal variances give the variance of the cluster means over m and m − 1 df. The Hedges–Tipton–Jackson (2010)
CR1 variance with t on m − 1 df, used before, rejected about 11% at a nominal 5% with the STS clusters of
the 26 semantic rows counted by shared sentences (one cluster holds 11 rows; tests/test_cr2.py): there the Satterthwaite df is about 3, and Tipton (2015) warns that even
CR2 tests can be unreliable when it is below 4 (:attr:`PooledEffect.df` reports it). CR2 is hand-written
(:func:`cr2`): no maintained Python package computes CR2 with Satterthwaite df for meta-analytic weights
(clubSandwich is R; pyfixest, linearmodels, wildboottest and statsmodels have none). Without repeated labels the
interval is the model-based normal one (``df`` = ∞).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as st

from benchbox.errors import BenchboxError

METHODS = {"dl": "dl", "pm": "pm"}

#: STS subsets whose test pairs reappear in the STS-B test set (Cer et al. 2017 drew STS-B from STS
#: 2012–2017). Counted on the SentEval files of ../shared/data by exact match of the lower-cased,
#: whitespace-normalised sentence pair: 1017 of STS-B's 1379 test pairs (MSRpar 127, MSRvid 126,
#: headlines 72 + 69 + 86 + 33, images 135 + 115, answer-answer 254).
STSB_SOURCES = frozenset({
    ("sts12", "MSRpar"), ("sts12", "MSRvid"), ("sts13", "headlines"), ("sts14", "headlines"),
    ("sts14", "images"), ("sts15", "headlines"), ("sts15", "images"), ("sts16", "answer-answer"),
    ("sts16", "headlines"),
})
STSB_TASKS = frozenset({"stsb", "stsb-cosine"})


def row_cluster(task: str, subset: str, kind: str) -> str:
    """The item set a summary row is computed on: the retrieval directions of one task share images and
    captions (one label); any other row is its own subset. See :func:`item_clusters` for STS-B."""
    return task if kind == "ranks" else f"{task}/{subset}"


def item_clusters(tasks, subsets, clusters) -> list[str]:
    """The rows' cluster labels, with the STS-B test row and the STS subsets it shares pairs with
    (:data:`STSB_SOURCES`) merged into one cluster when an STS-B row is among them."""
    tasks, subsets, clusters = list(tasks), [str(s) for s in subsets], list(clusters)
    if not any(t in STSB_TASKS for t in tasks):
        return clusters
    return ["stsb+sources" if t in STSB_TASKS or (t, s) in STSB_SOURCES else c
            for t, s, c in zip(tasks, subsets, clusters)]


@dataclass(frozen=True)
class PooledEffect:
    """A random-effects pooled effect: estimate, standard error, interval, two-sided p, τ², I² (%), Cochran's
    Q, the number of rows and of clusters, whether the robust (clustered) variance was used, the degrees of
    freedom of the t reference (Satterthwaite's on the robust path, ``math.inf`` for the normal one) and the
    variance used (``"CR2"`` or ``"model"``)."""

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
    label repeats the interval and p use the CR2 robust variance with Satterthwaite df (module docstring)."""
    from statsmodels.stats.meta_analysis import combine_effects

    if method not in METHODS:
        raise BenchboxError(f"unknown pooling method {method!r}: use dl (DerSimonian-Laird) or pm (Paule-Mandel)")
    y = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    if y.ndim != 1 or y.shape != v.shape or len(y) < 2:
        raise BenchboxError(f"pooling needs at least two rows of effects and variances, got {y.shape} and {v.shape}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise BenchboxError("pooling needs finite effects and positive finite variances")
    kwds = {"atol": 1e-12, "maxiter": 200} if method == "pm" else {}
    with np.errstate(invalid="ignore"):  # the square roots of a negative DL τ²'s weights, truncated below
        result = combine_effects(y, v, method_re=METHODS[method], alpha=1 - level, **kwds)
    tau2 = float(result.tau2)
    if tau2 > 0:
        estimate, se = float(result.mean_effect_re), float(result.sd_eff_w_re)
    else:  # statsmodels leaves DerSimonian-Laird's (Q − df)/c negative when Q < df; metafor truncates at 0
        tau2, estimate, se = 0.0, float(result.mean_effect_fe), float(result.sd_eff_w_fe)
    w_fe = 1 / v
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
        quantile = float(st.t.ppf(0.5 + level / 2, df))
        p = float(2 * st.t.sf(abs(estimate) / se, df)) if se > 0 else float(estimate == 0)
    else:
        df = math.inf
        quantile = float(st.norm.ppf(0.5 + level / 2))
        p = float(2 * st.norm.sf(abs(estimate) / se))
    return PooledEffect(estimate, se, estimate - quantile * se, estimate + quantile * se, p, tau2, float(i2),
                        float(result.q), len(y), m, method, robust, float(df), "CR2" if robust else "model")


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

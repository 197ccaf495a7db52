"""Random-effects pooling of per-row differences across tasks: the claim-level effect of ``benchbox compare``.

Per-row differences on a common scale (:func:`benchbox.stats.fisher_z_difference` for correlations,
:func:`benchbox.stats.paired_proportion_difference` for accuracies and recalls) are pooled by a
random-effects meta-analysis, with the between-row variance τ² by DerSimonian & Laird (1986, ``"dl"``) or
Paule & Mandel (1982, ``"pm"``), through ``statsmodels.stats.meta_analysis.combine_effects`` (checked against
R metafor), truncated at τ² = 0 as metafor does (statsmodels returns DerSimonian–Laird's negative values). I² is metafor's: 100·τ²/(τ² + s²) with s² the typical within-row variance (Higgins & Thompson
2002, eq. 9), which equals (Q − df)/Q for DerSimonian–Laird.

Rows that share items are dependent. Rows carry a cluster label (:func:`row_cluster`): rows whose items share
a sentence form one cluster (:func:`sentence_clusters`, computed from the items by ``benchbox compare``: e.g.
STS-B test with the STS12–16 subsets it reuses sentences of, the OnWN subsets of STS12–14), and the retrieval
directions of one task form one. When some cluster holds more than one row, the interval of the pooled
effect uses the cluster-robust variance of Hedges, Tipton & Jackson (2010, eq. 6) with the random-effects
weights, its small-sample factor m/(m − 1) and a t reference on m − 1 degrees of freedom (m clusters).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as st

from benchbox.errors import BenchboxError

METHODS = {"dl": "dl", "pm": "pm"}


def row_cluster(task: str, subset: str, kind: str) -> str:
    """The item set a summary row is computed on, before shared sentences are looked at: the retrieval
    directions of one task share images and captions (one label); any other row is its own subset. Rows of
    different subsets whose items share a sentence are merged by :func:`sentence_clusters`."""
    return task if kind == "ranks" else f"{task}/{subset}"


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
    Q, the number of rows and of clusters, and whether the robust (clustered) variance was used."""

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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pool_effects(effects, variances, *, method: str = "dl", clusters=None, level: float = 0.95) -> PooledEffect:
    """Pool per-row ``effects`` with sampling ``variances`` by a random-effects model (τ² by ``method``:
    ``"dl"`` or ``"pm"``). ``clusters``: one label per row; rows with one label are dependent, and when a
    label repeats the interval and p use the Hedges–Tipton–Jackson robust variance (module docstring)."""
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
        w = 1 / (v + tau2)
        per_cluster = np.bincount(labels, weights=w * (y - estimate))
        se = math.sqrt(m / (m - 1) * (per_cluster**2).sum()) / w.sum()
        quantile = float(st.t.ppf(0.5 + level / 2, m - 1))
        p = float(2 * st.t.sf(abs(estimate) / se, m - 1)) if se > 0 else float(estimate == 0)
    else:
        quantile = float(st.norm.ppf(0.5 + level / 2))
        p = float(2 * st.norm.sf(abs(estimate) / se))
    return PooledEffect(estimate, se, estimate - quantile * se, estimate + quantile * se, p, tau2, float(i2),
                        float(result.q), len(y), m, method, robust)

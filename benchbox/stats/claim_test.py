"""One test of a claim ("model A vs model B on these rows") against item and seed variance together (issue 42).

The pooled effect of correlation rows is Δ = Σ_r w_r (z̄_A,r − z̄_B,r), z̄_X,r the mean over X's runs (seeds) of
atanh r(gold, scores) on row r, with the random-effects weights w_r ∝ 1/(v_r + τ²) of the claim's pooled analysis
(:mod:`benchbox.stats.pooling`: v_r the row's sampling variance, τ² by DerSimonian–Laird or Paule–Mandel), so Δ
is the pooled estimate; without variances, fixed weights n_r − 3 (the inverse of Fisher z's variance). τ² is
estimated from the row effects themselves, so the weights are part of the estimator: each jackknife replicate
below re-estimates τ² from its own row effects (the jackknife of the whole estimator, Efron & Tibshirani 1993,
§11.5). Held fixed at the full-data τ², the jackknife misses that variability: on the same 2,500 one-run null
replicates of ``benchmarks/bench_claim_calibration.py`` (two seeds) the claim rejected 5.8% at 5% with the weights
fixed, 5.2% with τ² re-estimated.
Its variance has two parts, estimated apart and added
(the two-stage variance of a nested design: Cochran 1977, Sampling Techniques, §10.2; the "train several seeds,
test on one set" decomposition of Bouthillier et al. 2021, MLSys):

- **items**, V_items: the delete-a-group jackknife of Δ (Efron & Tibshirani 1993, ch. 11; Shao & Tu 1995, §2.3;
  Kott 2001) over sentence groups formed across every row of the claim: two pairs that share a normalised sentence
  — in one row, or one in STS-B and one in STS14 — are in one group (:func:`claim_groups`), and a group is deleted
  from every row and every run at once; each row's correlations are recomputed from per-group sums
  (:func:`benchbox.stats.jackknife.leave_group_out_r`). A model's seeds are scored on the same items and share
  the item error of their common sentences: the jackknife of their mean carries it once;
- **seeds**, V_seeds = s²_A/k_A + s²_B/k_B, s²_X the sample variance of X's per-seed pooled effects
  θ_X,s = Σ_r w_r z_X,s,r. The seeds share the items, so their spread is seed-to-seed variance only; one run of
  a model adds nothing (a single deterministic run counts as fixed).

t = Δ / √(V_items + V_seeds) on Welch–Satterthwaite df (Satterthwaite 1946), combining the jackknife's G − 1 with
each side's k − 1. With one run a side V_seeds = 0 and the test is the cross-row jackknife alone (t on G − 1 df).
The seeds' spread also carries the item × seed part of the noise that the jackknife of the mean carries /k, so
the sum is slightly conservative, never liberal.

The jackknife needs many groups none of which dominates (a Lindeberg condition: Shao & Tu 1995, §2.3; with one
group holding most of the weight its leave-out values are few and skewed, and the per-row jackknife of STS16
plagiarism, one group of 132 of 230 pairs, rejects 7.2% at 5%). With fewer than :data:`MIN_GROUPS` groups or one
holding more than :data:`MAX_GROUP_SHARE` of the weight, the claim falls back to the exact cluster sign-flip test
over the row clusters (:class:`benchbox.stats.pooling.ClusterSignFlip`, Canay, Romano & Shaikh 2017) of the same
per-row differences and weights, with seeds intersected with the seed t-test (Berger 1982: both must reject), and
says so (``method``). Other kinds of rows (:func:`combine`) get the same sum with the pooled analysis' variance
in place of the jackknife's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.stats.jackknife import jackknife_variance, leave_group_out_r, sentence_groups
from benchbox.stats.pooling import between_row_variance

#: fewer sentence groups than this: the claim's p comes from the cluster sign-flip test instead
MIN_GROUPS = 30
#: one group holding more than this share of the pooled weight: the same fallback
MAX_GROUP_SHARE = 0.10
#: ``ClaimTest.method``: the inference that gave p, se, df and the interval
METHODS = ("jackknife", "jackknife + seeds", "sign-flip", "sign-flip ∩ seeds", "model", "model + seeds", "CR2",
           "CR2 + seeds")


@dataclass(frozen=True)
class ClaimTest:
    """The claim's estimate, its standard error (NaN for a sign-flip test: none), df, 95% interval, two-sided p and
    the inference (``method``, one of :data:`METHODS`); the item and seed parts of the variance, the number of
    sentence groups (0 when not grouped) and the largest group's share of the weight."""

    estimate: float
    se: float
    df: float
    ci_low: float
    ci_high: float
    p: float
    method: str
    var_items: float
    var_seeds: float
    groups: int = 0
    largest_share: float = math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return self.ci_low, self.ci_high

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def claim_groups(texts: Sequence[Sequence[Sequence[Any]]], lengths: Sequence[int]) -> list[np.ndarray]:
    """Sentence groups across every row of a claim: ``texts[r]`` holds row r's sentence columns (e.g. its
    ``sentence1`` and ``sentence2``), each of ``lengths[r]`` items; two items of any rows are in one group when
    they share a normalised sentence, directly or through a chain (:func:`benchbox.stats.sentence_groups` over the
    rows' items together). Returns one array of global group ids per row; a row without sentence columns (an empty
    ``texts[r]``) gets a group per item."""
    lengths = [int(n) for n in lengths]
    if len(lengths) != len(texts) or any(len(column) != n for columns, n in zip(texts, lengths) for column in columns):
        raise BenchboxError("claim_groups needs one length per row, equal to each of the row's sentence columns")
    width = max((len(columns) for columns in texts), default=0)
    if width == 0:
        return [np.arange(n) + sum(lengths[:r]) for r, n in enumerate(lengths)]
    stacked = []
    for c in range(width):
        column: list[Any] = []
        for r, columns in enumerate(texts):
            column += list(columns[c]) if c < len(columns) else [None] * lengths[r]
        stacked.append(column)
    labels = sentence_groups(*stacked)
    if any(not columns for columns in texts):  # rows without text: every item its own group
        labels = labels.copy()
        start, fresh = 0, labels.max() + 1 if len(labels) else 0
        for columns, n in zip(texts, lengths):
            if not columns:
                labels[start:start + n] = np.arange(fresh, fresh + n)
                fresh += n
            start += n
    bounds = np.cumsum([0, *lengths])
    return [labels[bounds[r]:bounds[r + 1]] for r in range(len(texts))]


def _runs(scores, n: int) -> np.ndarray:
    x = np.atleast_2d(np.asarray(scores, dtype=float))
    if x.shape[1] != n or not np.all(np.isfinite(x)):
        raise BenchboxError(f"per-item scores of a row need finite [runs, {n}] values, got shape {x.shape}")
    return x


def _fisher(r):
    return np.arctanh(np.clip(r, -1 + 1e-12, 1 - 1e-12))


def joint_test(gold: Sequence[Any], scores_a: Sequence[Any], scores_b: Sequence[Any], groups: Sequence[Any], *,
               variances: Sequence[float] | None = None, pooling: str = "dl", clusters: Sequence[Any] | None = None,
               level: float = 0.95, min_groups: int = MIN_GROUPS, max_share: float = MAX_GROUP_SHARE) -> ClaimTest:
    """The claim test of correlation rows (module docstring) from per-item scores: per row r, ``gold[r]`` (n_r),
    ``scores_a[r]`` and ``scores_b[r]`` ([runs, n_r], or n_r for one run) and ``groups[r]`` (n_r global group ids:
    one id in two rows is one group, :func:`claim_groups`). ``variances``: the rows' sampling variances of the
    pooled analysis, giving the random-effects weights 1/(v_r + τ²) with τ² by ``pooling`` (``"dl"``, ``"pm"``)
    re-estimated in every jackknife replicate; without them, fixed weights n_r − 3. ``clusters``: one label per row
    for the sign-flip fallback (default: rows linked by a shared group); ``min_groups``, ``max_share``: when it
    falls back. Returns a :class:`ClaimTest` on the Δz scale."""
    if len(gold) < 1 or not (len(gold) == len(scores_a) == len(scores_b) == len(groups)):
        raise BenchboxError("a claim test needs gold, scores_a, scores_b and groups for the same rows")
    g = [np.asarray(x, dtype=float) for x in gold]
    n = np.array([len(x) for x in g])
    if (n <= 3).any():
        raise BenchboxError("every row of a claim test needs more than 3 items")
    a, b = ([_runs(s, len(x)) for s, x in zip(side, g)] for side in (scores_a, scores_b))
    if len({x.shape[0] for x in a}) != 1 or len({x.shape[0] for x in b}) != 1:
        raise BenchboxError("every row of a claim test needs the same runs of each model")
    labels_all, flat = np.unique(np.concatenate([np.asarray(x) for x in groups]), return_inverse=True)
    bounds = np.cumsum([0, *n])
    count = len(labels_all)
    if variances is None:
        v = None
    else:
        v = np.asarray(variances, dtype=float)
        if v.shape != (len(g),) or not (np.all(np.isfinite(v)) and np.all(v > 0)):
            raise BenchboxError(f"a claim test needs one positive finite variance per row ({len(g)}), got {v.shape}")
    # row_effects[r] and left_out[g, r]: row r's Δz on all items and with group g deleted from every row
    row_effects, left_out = np.zeros(len(g)), np.zeros((count, len(g)))
    z_runs: dict[str, list[np.ndarray]] = {"a": [], "b": []}  # per row, the runs' Fisher z on all items
    sizes_of: list[tuple[np.ndarray, np.ndarray]] = []  # per row, its groups and their sizes
    for r in range(len(g)):
        local, present = pd.factorize(flat[bounds[r]:bounds[r + 1]])
        sizes = np.bincount(local).astype(float)
        full, loo = {}, {}
        for side, runs in (("a", a[r]), ("b", b[r])):
            fits = [leave_group_out_r(g[r], run, local, sizes, n[r]) for run in runs]
            z_runs[side].append(_fisher(np.array([f[0] for f in fits])))
            full[side], loo[side] = z_runs[side][-1].mean(), _fisher(np.array([f[1] for f in fits])).mean(axis=0)
        if not np.all(np.isfinite(loo["a"] - loo["b"])):
            raise BenchboxError("a correlation of a claim's row is undefined with a sentence group left out "
                                "(constant scores)")
        row_effects[r] = full["a"] - full["b"]
        left_out[:, r] = row_effects[r]
        left_out[present, r] = loo["a"] - loo["b"]
        sizes_of.append((present, sizes))
    w = (n - 3.0) if v is None else 1 / (v + float(between_row_variance(row_effects, v, pooling)))
    w = w / w.sum()
    estimate = float(row_effects @ w)
    if v is None:
        theta = left_out @ w
    else:  # the weights are part of the estimator: each replicate's τ² from its own row effects
        replicate = 1 / (v + between_row_variance(left_out, v, pooling)[:, None])
        theta = (left_out * replicate).sum(axis=1) / replicate.sum(axis=1)
    share = np.zeros(count)
    for r, (present, sizes) in enumerate(sizes_of):
        share[present] += w[r] * sizes / n[r]
    seeds_a, seeds_b = (sum(w[r] * z[r] for r in range(len(g))) for z in (z_runs["a"], z_runs["b"]))
    largest = float(share.max())
    if count < min_groups or largest > max_share:
        if clusters is None:
            clusters = _linked_rows(flat, bounds)
        return _sign_flip(row_effects, w, clusters, seeds_a, seeds_b, count, largest, level)
    return combine(estimate, jackknife_variance(theta), count - 1, seeds_a, seeds_b, "jackknife", level=level,
                   groups=count, largest_share=largest)


def _linked_rows(flat: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Row cluster ids: rows that share a group, directly or through other rows."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    k = len(bounds) - 1
    graph = coo_matrix((np.ones(len(flat)), (rows, k + flat)), shape=(k + flat.max() + 1, k + flat.max() + 1))
    return connected_components(graph, directed=False)[1][:k]


def _sign_flip(effects, weights, clusters, seeds_a, seeds_b, groups: int, largest: float,
               level: float) -> ClaimTest:
    """The fallback: the cluster sign-flip test of the weighted mean of the rows' effects (weights fixed), its
    inverted interval; with seeds, p = max(its p, the seed t-test's) (Berger 1982)."""
    from benchbox.stats.pooling import ClusterSignFlip
    from benchbox.stats.seeds import seed_test

    labels = pd.factorize(np.asarray(clusters))[0]
    test = ClusterSignFlip(effects, weights, labels)
    scale = float(np.std(effects)) or 1.0
    low, high = test.interval(level, scale)
    p, method = test.p(0.0), "sign-flip"
    if max(len(seeds_a), len(seeds_b)) > 1:
        p, method = max(p, seed_test(seeds_a, seeds_b).p), "sign-flip ∩ seeds"
    return ClaimTest(test.estimate, math.nan, math.nan, float(low), float(high), float(p), method, math.nan,
                     _seed_variance(seeds_a) + _seed_variance(seeds_b), groups, largest)


def _seed_variance(scores) -> float:
    """s²/k of one model's per-seed scores; 0 for a single run (fixed)."""
    x = np.asarray(scores, dtype=float)
    return float(x.var(ddof=1) / len(x)) if len(x) > 1 else 0.0


def combine(estimate: float, var_items: float, df_items: float, seeds_a, seeds_b, items: str, *,
            level: float = 0.95, groups: int = 0, largest_share: float = math.nan) -> ClaimTest:
    """t = estimate / √(V_items + s²_A/k_A + s²_B/k_B) on Welch–Satterthwaite df
    (V²/(V_items²/df_items + Σ (s²/k)²/(k − 1)); ``df_items`` may be ∞), two-sided, with its interval.
    ``seeds_a``/``seeds_b``: each model's per-seed scores on the estimate's scale; ``items``: how V_items was
    estimated (``"jackknife"``, ``"model"``, ``"CR2"``); the method is it, ``+ seeds`` when some side has two runs."""
    from scipy import stats as st

    parts = [_seed_variance(seeds_a), _seed_variance(seeds_b)]
    seeded = max(len(seeds_a), len(seeds_b)) > 1
    variance = var_items + sum(parts)
    denominator = (var_items**2 / df_items if math.isfinite(df_items) else 0.0) + sum(
        v**2 / (len(x) - 1) for v, x in zip(parts, (seeds_a, seeds_b)) if len(x) > 1)
    df = variance**2 / denominator if denominator > 0 else math.inf
    se = math.sqrt(variance)
    if se > 0:
        t = estimate / se
    else:
        t = 0.0 if estimate == 0 else math.copysign(math.inf, estimate)
    reference = st.norm if math.isinf(df) else st.t(df)
    p = float(2 * reference.sf(abs(t)))
    half = float(reference.ppf(0.5 + level / 2)) * se
    return ClaimTest(float(estimate), se, float(df), estimate - half, estimate + half, p,
                     f"{items} + seeds" if seeded else items, float(var_items), float(sum(parts)), groups,
                     largest_share)


def pooled_claim(pooled: Any, seeds_a, seeds_b, level: float = 0.95) -> ClaimTest:
    """The claim test of rows without per-item scores to resample together (every kind but Pearson rows): the
    pooled analysis' (:func:`benchbox.stats.pooling.pool_effects`) estimate with its variance and df as the item
    part, the per-seed scores' spread added (:func:`combine`); where the pooled p came from the cluster sign-flip
    test, that test, intersected with the seed t-test when some side has two runs (the sign-flip test has no
    standard error or df: NaN)."""
    from benchbox.stats.seeds import seed_test

    if pooled.variance != "sign-flip":
        return combine(pooled.estimate, pooled.se**2, pooled.df, seeds_a, seeds_b, pooled.variance, level=level)
    p, method = pooled.p, "sign-flip"
    if max(len(seeds_a), len(seeds_b)) > 1:
        p, method = max(p, seed_test(seeds_a, seeds_b).p), "sign-flip ∩ seeds"
    return ClaimTest(pooled.estimate, math.nan, math.nan, pooled.ci_low, pooled.ci_high, float(p), method, math.nan,
                     _seed_variance(seeds_a) + _seed_variance(seeds_b))

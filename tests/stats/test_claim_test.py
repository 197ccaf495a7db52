"""benchbox.stats.claim_test: one test of a claim against item and seed variance together (issue 42), checked
against values computed by brute force (every group deleted by hand, every correlation recomputed by numpy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from benchbox.errors import BenchboxError
from benchbox.stats import grouped_jackknife_test
from benchbox.stats.claim_test import MIN_GROUPS, claim_groups, combine, joint_test


def _z(gold, score):
    return np.arctanh(np.corrcoef(gold, score)[0, 1])


def test_two_rows_with_a_group_shared_across_them_by_hand():
    """Row 1: 6 pairs, row 2: 5 pairs; group 0 holds pair 0 of row 1 and pair 0 of row 2 (a shared sentence), the
    others are single pairs: 10 groups. Δ = w1 Δz1 + w2 Δz2 with w ∝ n − 3 = (3, 2)/5; deleting group 0 removes a
    pair from both rows at once. V = (G − 1)/G Σ (θ_(g) − θ̄)², t on G − 1 = 9 df."""
    gold = [np.array([1.0, 2, 3, 4, 5, 6]), np.array([2.0, 1, 4, 3, 5])]
    a = [np.array([1.1, 2.3, 2.8, 4.4, 4.9, 6.5]), np.array([2.2, 1.1, 3.5, 3.6, 5.2])]
    b = [np.array([0.7, 2.9, 3.4, 3.6, 5.8, 5.5]), np.array([1.5, 1.8, 4.1, 2.7, 4.4])]
    groups = [np.array([0, 1, 2, 3, 4, 5]), np.array([0, 6, 7, 8, 9])]
    w = np.array([3.0, 2.0]) / 5

    def delta(drop):
        total = 0.0
        for r in range(2):
            keep = groups[r] != drop
            total += w[r] * (_z(gold[r][keep], a[r][keep]) - _z(gold[r][keep], b[r][keep]))
        return total

    estimate = delta(-1)
    left_out = np.array([delta(g) for g in range(10)])
    variance = 9 / 10 * ((left_out - left_out.mean()) ** 2).sum()
    result = joint_test(gold, a, b, groups, clusters=["x", "y"])
    assert result.method == "sign-flip"  # 10 groups < MIN_GROUPS: the fallback, said so
    assert MIN_GROUPS > 10
    result = joint_test(gold, a, b, groups, min_groups=2, max_share=1.0)  # the jackknife itself, by hand
    assert result.method == "jackknife" and result.groups == 10 and result.df == 9
    assert result.estimate == pytest.approx(estimate, rel=1e-12)
    assert result.var_items == pytest.approx(variance, rel=1e-10) and result.var_seeds == 0
    t = estimate / math.sqrt(variance)
    assert result.p == pytest.approx(2 * st.t.sf(abs(t), 9), rel=1e-10)
    half = st.t.ppf(0.975, 9) * math.sqrt(variance)
    assert (result.ci_low, result.ci_high) == pytest.approx((estimate - half, estimate + half), rel=1e-10)
    # the largest group's share of the weight: group 0 holds 1/6 of row 1 and 1/5 of row 2
    assert result.largest_share == pytest.approx(0.6 / 6 + 0.4 / 5)


def test_one_row_one_run_a_side_is_the_per_row_jackknife():
    """The reduction: one row and one run a side give the grouped jackknife of that row (same Δz, variance, df, p)."""
    rng = np.random.default_rng(0)
    n = 400
    groups = rng.integers(0, 120, n)
    gold = rng.normal(size=n)
    a, b = gold + rng.normal(size=n), gold + 1.1 * rng.normal(size=n)
    result = joint_test([gold], [a], [b], [groups])
    reference = grouped_jackknife_test(gold, a, b, groups)
    # df: the Welch–Satterthwaite V²/Σ(V_i²/df_i) of one term is df up to a few ulp of rounding (not bit for bit)
    assert result.method == "jackknife" and result.df == pytest.approx(reference.df, rel=1e-12)
    assert result.estimate == pytest.approx(reference.diff_z, rel=1e-12)
    assert result.var_items == pytest.approx(reference.var_z, rel=1e-10)
    assert result.p == pytest.approx(reference.p, rel=1e-8)


def test_seeds_add_their_spread_with_welch_satterthwaite_df():
    """k = 4 seeds of A, 2 of B on two rows: Δ is the mean over seeds; V_seeds = s²_A/4 + s²_B/2 of the per-seed
    pooled effects, the item part the jackknife of the seed-mean; df by Welch–Satterthwaite."""
    rng = np.random.default_rng(1)
    n = (300, 200)
    gold = [rng.normal(size=m) for m in n]
    groups = [np.arange(300), np.arange(300, 500)]
    a = [np.array([g + rng.normal(size=len(g)) for _ in range(4)]) for g in gold]
    b = [np.array([g + rng.normal(size=len(g)) for _ in range(2)]) for g in gold]
    w = (np.array(n) - 3) / (sum(n) - 6)
    per_seed_a = np.array([sum(w[r] * _z(gold[r], a[r][s]) for r in range(2)) for s in range(4)])
    per_seed_b = np.array([sum(w[r] * _z(gold[r], b[r][s]) for r in range(2)) for s in range(2)])
    result = joint_test(gold, a, b, groups)
    assert result.method == "jackknife + seeds"
    assert result.estimate == pytest.approx(per_seed_a.mean() - per_seed_b.mean(), rel=1e-12)
    v_seeds = per_seed_a.var(ddof=1) / 4 + per_seed_b.var(ddof=1) / 2
    assert result.var_seeds == pytest.approx(v_seeds, rel=1e-10)
    v = result.var_items + v_seeds
    df = v**2 / (result.var_items**2 / 499 + (per_seed_a.var(ddof=1) / 4) ** 2 / 3 + (per_seed_b.var(ddof=1) / 2) ** 2)
    assert result.df == pytest.approx(df, rel=1e-10) and result.se == pytest.approx(math.sqrt(v))
    assert result.p == pytest.approx(2 * st.t.sf(abs(result.estimate) / math.sqrt(v), df), rel=1e-8)


def test_combine_by_hand_and_a_single_run_counts_as_fixed():
    # items only (one run a side), model-based df = ∞: the normal test
    one = combine(0.1, 0.0025, math.inf, [0.3], [0.2], "model")
    assert one.method == "model" and one.df == math.inf and one.p == pytest.approx(2 * st.norm.sf(2.0))
    # three seeds against one deterministic run: only A's spread enters
    seeded = combine(0.1, 0.0025, 10, [0.1, 0.2, 0.3], [0.0], "CR2")
    s2 = 0.01 / 3
    df = (0.0025 + s2) ** 2 / (0.0025**2 / 10 + s2**2 / 2)
    assert seeded.method == "CR2 + seeds" and seeded.var_seeds == pytest.approx(s2)
    assert seeded.df == pytest.approx(df) and seeded.p == pytest.approx(2 * st.t.sf(0.1 / math.sqrt(0.0025 + s2), df))


def test_claim_groups_link_rows_by_shared_sentences():
    texts = [[["A cat.", "a dog."], ["x", "y"]], [["a  cat.", "z"], ["w", "v"]], []]
    groups = claim_groups([texts[0], texts[1]], [2, 2])
    assert groups[0][0] == groups[1][0] and len({*groups[0], *groups[1]}) == 3
    with_plain = claim_groups([texts[0], [[1, 2, 3]]], [2, 3])
    assert len(set(with_plain[1])) == 3 and not set(with_plain[1]) & set(with_plain[0])
    with pytest.raises(BenchboxError, match="one length per row"):
        claim_groups([texts[0]], [3])


def test_rows_without_sentences_get_a_group_per_item():
    """A row without sentence columns (a plugin's Pearson task scoring items that are not sentences) holds one
    group per item, beside rows with sentences (grouped) and alone: the claim test has units to delete (it had
    none, and compare stopped with numpy's "zero-size array" on a claim over such rows)."""
    mixed = claim_groups([[["A cat.", "a dog."], ["x", "a  cat."]], []], [2, 4])  # the two pairs share "a cat."
    assert mixed[0][0] == mixed[0][1] and len(set(mixed[1])) == 4 and not set(mixed[1]) & set(mixed[0])
    alone = claim_groups([[], []], [3, 5])
    assert [len(x) for x in alone] == [3, 5] and len({*alone[0], *alone[1]}) == 8


def test_a_dominant_group_falls_back_to_the_sign_flip_test():
    """One group holding half of a row's pairs (as STS16 plagiarism's 132 of 230): the exact cluster sign-flip test
    over the rows' clusters, no se or df (it has none), and with seeds intersected with the seed t-test."""
    rng = np.random.default_rng(2)
    gold = [rng.normal(size=200) for _ in range(6)]
    groups = [np.r_[np.zeros(100, int), np.arange(1, 101)] + 1000 * r for r in range(6)]
    groups[0][:150] = 0
    a = [g + rng.normal(size=200) for g in gold]
    b = [g + rng.normal(size=200) for g in gold]
    result = joint_test(gold, a, b, groups)
    assert result.method == "sign-flip" and math.isnan(result.se) and math.isnan(result.df)
    assert result.largest_share > 0.1 and 0 < result.p <= 1
    seeded = joint_test(gold, [np.array([x, x + rng.normal(size=200)]) for x in a], b, groups)
    assert seeded.method == "sign-flip ∩ seeds"


def test_bad_input_is_refused():
    with pytest.raises(BenchboxError, match="same rows"):
        joint_test([np.arange(5.0)], [], [], [])
    with pytest.raises(BenchboxError, match="more than 3 items"):
        joint_test([np.arange(3.0)], [np.arange(3.0)], [np.arange(3.0)], [np.arange(3)])


@pytest.mark.slow
def test_size_with_seeds_that_share_item_error():
    """A null in which each model's seeds share one item-level error (tied to sentence groups of 1–3 pairs) and
    differ by their own per-item seed noise, 3 vs 3 seeds on four rows: the joint test rejects 3–7.5% at 5% over
    1,000 replicates (the seed t-test alone, which misses the shared error, is what the intersection–union rule
    leaned on)."""
    rng = np.random.default_rng(42)
    n = [120, 150, 90, 200]
    groups = [rng.integers(0, m // 2, m) + 1000 * r for r, m in enumerate(n)]
    rejected = 0
    for _ in range(1000):
        gold = [rng.normal(size=m) for m in n]
        sides = []
        for _model in range(2):
            shared = [rng.normal(size=m // 2)[g - 1000 * r] * 0.8 + 0.3 * rng.normal(size=m)
                      for r, (g, m) in enumerate(zip(groups, n))]
            sides.append([np.array([gold[r] + shared[r] + 0.5 * rng.normal(size=m) for _ in range(3)])
                          for r, m in enumerate(n)])
        rejected += joint_test(gold, sides[0], sides[1], groups, min_groups=2, max_share=1.0).p < 0.05
    assert 0.03 <= rejected / 1000 <= 0.075, rejected / 1000


@pytest.mark.parametrize("pooling", ["dl", "pm"])
def test_random_effects_weights_are_re_estimated_in_every_replicate_by_hand(pooling):
    """Three heterogeneous rows of 40 single-pair groups each, with the pooled analysis' variances: Δ is the
    random-effects estimate (weights 1/(v_r + τ²)), and each delete-a-group replicate is the random-effects
    estimate of its own row effects, τ² re-estimated (pool_effects on the leave-out effects, by hand). Holding
    the full-data weights fixed gives another variance (the test of before the change)."""
    from benchbox.stats.pooling import pool_effects

    rng = np.random.default_rng(42)
    gold = [rng.normal(size=40) for _ in range(3)]
    a = [x + rng.normal(scale=s, size=40) for x, s in zip(gold, (0.5, 1.5, 0.8))]
    b = [x + rng.normal(scale=s, size=40) for x, s in zip(gold, (1.2, 0.6, 0.9))]
    groups = [np.arange(40) + 40 * r for r in range(3)]
    v = np.array([0.004, 0.006, 0.005])

    def effects(drop):
        return np.array([_z(gold[r][groups[r] != drop], a[r][groups[r] != drop])
                         - _z(gold[r][groups[r] != drop], b[r][groups[r] != drop]) for r in range(3)])

    full = pool_effects(effects(-1), v, method=pooling)
    assert full.tau2 > 0  # heterogeneous rows: the weights depend on the effects
    left_out = np.array([pool_effects(effects(g), v, method=pooling).estimate for g in range(120)])
    variance = 119 / 120 * ((left_out - left_out.mean()) ** 2).sum()
    result = joint_test(gold, a, b, groups, variances=v, pooling=pooling, min_groups=2, max_share=1.0)
    assert result.estimate == pytest.approx(full.estimate, rel=1e-9)
    assert result.var_items == pytest.approx(variance, rel=1e-6)
    w = 1 / (v + full.tau2)
    fixed = np.array([effects(g) @ w / w.sum() for g in range(120)])
    assert 119 / 120 * ((fixed - fixed.mean()) ** 2).sum() != pytest.approx(variance, rel=1e-4)

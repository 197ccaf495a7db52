"""benchbox.stats.pooling (random-effects pooling) and benchbox.stats.seeds (seed-aware tests), with a calibration and power
simulation of the claim-level tests against the per-row vote count."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as st
from statsmodels.stats.meta_analysis import combine_effects

from benchbox.errors import BenchboxError
from benchbox.task_contract.paired_tests import KINDS
from benchbox.stats.pooling import between_row_variance, pool_effects, sentence_clusters
from benchbox.stats.seeds import aso, per_seed_scores, seed_test
from benchbox.stats import fisher_z_difference, paired_proportion_difference, steiger_test

# Kacker (2004) example, R metafor rma(y, v, method = "PM" / "DL", control = list(tol = 1e-9)), as recorded in
# statsmodels/stats/tests/results/results_meta.py (exk1_metafor, exk1_dl)
KACKER_Y = [61.0, 61.4, 62.21, 62.3, 62.34, 62.6, 62.7, 62.84, 65.9]
KACKER_V = [0.2025, 1.21, 0.09, 0.2025, 0.3844, 0.5625, 0.0676, 0.0225, 1.8225]
METAFOR = {
    "pm": {"estimate": 62.4076199113286, "se": 0.338030602684471, "ci_low": 61.7450921043947,
           "ci_high": 63.0701477182625, "tau2": 0.705395309224248, "i2": 83.7218626490482, "q": 24.801897741835},
    "dl": {"estimate": 62.3901386044504, "se": 0.245749668040304, "ci_low": 61.9084781058787,
           "ci_high": 62.8717991030221, "tau2": 0.288049246973751, "i2": 67.744403741711, "q": 24.801897741835},
}


@pytest.mark.parametrize("method", ["pm", "dl"])
def test_pooling_reproduces_metafor_on_kacker_2004(method):
    pooled = pool_effects(KACKER_Y, KACKER_V, method=method)
    for key, value in METAFOR[method].items():
        assert getattr(pooled, key) == pytest.approx(value, abs=1e-6), key
    assert not pooled.robust and pooled.k == pooled.clusters == 9
    assert pooled.df == np.inf and pooled.variance == "model"


def test_dersimonian_laird_pooling_equals_statsmodels():
    """(Paule–Mandel is checked against metafor and its own equation: statsmodels' is wrong on these rows, below.)"""
    rng = np.random.default_rng(3)
    y, v = rng.normal(0.1, 0.05, 26), rng.uniform(0.0005, 0.004, 26)
    pooled = pool_effects(y, v, method="dl")
    reference = combine_effects(y, v, method_re="dl")
    low, high = reference.conf_int()[1]  # (fixed, random, fixed WLS, random WLS): the random-effects interval
    assert pooled.estimate == pytest.approx(reference.mean_effect_re, abs=1e-12)
    assert pooled.se == pytest.approx(reference.sd_eff_w_re, abs=1e-12)
    assert (pooled.ci_low, pooled.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert pooled.tau2 == pytest.approx(reference.tau2, abs=1e-12)
    assert pooled.p == pytest.approx(2 * st.norm.sf(abs(reference.mean_effect_re / reference.sd_eff_w_re)))


def test_paule_mandel_solves_its_equation_on_heterogeneous_rows():
    """Four rows far more spread than their variances (Q(0) = 20.4 > k − 1 = 3): Paule–Mandel's τ² is the root of
    Q(τ²) = Σ w(y − μ̂)² = k − 1 with w = 1/(v + τ²). benchbox bisects the monotone Q, so the root is found on every
    CPU (statsmodels' Newton iteration stops at 0 or elsewhere on these rows, depending on the floating-point path:
    not used, and not asserted here)."""
    y, v = np.array([0.07, 0.16, 0.07, -0.26]), np.array([0.004, 0.005, 0.008, 0.005])

    def q(tau2, y=y, v=v):
        w = 1 / (v + tau2)
        return float(w @ (y - w @ y / w.sum()) ** 2)

    assert q(0.0) == pytest.approx(20.427, abs=1e-3)
    pooled = pool_effects(y, v, method="pm")
    assert q(pooled.tau2) == pytest.approx(3.0, abs=1e-9)
    assert pooled.tau2 == pytest.approx(0.0291385, abs=1e-6)
    w = 1 / (v + pooled.tau2)
    assert pooled.estimate == pytest.approx(w @ y / w.sum()) and pooled.se == pytest.approx(w.sum() ** -0.5)
    assert between_row_variance(np.stack([y, y[::-1]]), v, "pm")[0] == pytest.approx(pooled.tau2)
    # the 26 rows of the DerSimonian–Laird check above: Q(0) = 38.1 > 25, so τ² > 0 and Q(τ²) = 25
    rng = np.random.default_rng(3)
    y, v = rng.normal(0.1, 0.05, 26), rng.uniform(0.0005, 0.004, 26)
    assert q(0.0, y, v) == pytest.approx(38.1, abs=0.05)
    tau2 = pool_effects(y, v, method="pm").tau2
    assert tau2 > 0 and q(tau2, y, v) == pytest.approx(25.0, abs=1e-9)


def test_paule_mandel_agrees_with_statsmodels_where_its_iteration_converges():
    """On Kacker (2004)'s rows statsmodels' iteration converges (Q(τ²) = k − 1 at its answer, metafor's value): the
    two τ² agree to the bisection's tolerance, and so do the pooled estimates."""
    y, v = np.array(KACKER_Y), np.array(KACKER_V)
    reference = combine_effects(y, v, method_re="pm", atol=1e-12, maxiter=200)
    w = 1 / (v + reference.tau2)
    assert float(w @ (y - w @ y / w.sum()) ** 2) == pytest.approx(len(y) - 1, abs=1e-6)  # it converged
    pooled = pool_effects(y, v, method="pm")
    assert pooled.tau2 == pytest.approx(reference.tau2, rel=1e-6)
    assert pooled.estimate == pytest.approx(reference.mean_effect_re, abs=1e-8)
    assert pooled.se == pytest.approx(reference.sd_eff_w_re, rel=1e-6)


def test_negative_dersimonian_laird_tau2_is_truncated_at_zero():
    """Rows more alike than their variances allow (Q < df): τ² = 0 and the fixed-effect estimate, as metafor."""
    y, v = np.array([0.100, 0.101, 0.099, 0.100]), np.array([0.01, 0.02, 0.01, 0.03])
    with np.errstate(invalid="ignore"):  # statsmodels takes square roots of the negative τ²'s weights
        reference = combine_effects(y, v, method_re="dl")
    assert reference.tau2 < 0  # what statsmodels leaves
    pooled = pool_effects(y, v, method="dl")
    assert pooled.tau2 == 0 and pooled.i2 == 0
    assert pooled.estimate == pytest.approx(reference.mean_effect_fe) and pooled.se == pytest.approx(reference.sd_eff_w_fe)


def test_robust_variance_by_hand():
    """CR2 with Satterthwaite df (Pustejovsky & Tipton 2018) with the RE weights: three clusters, one of them two
    rows; the df fall below 4, so the p and interval are the sign-flip test's (all sums positive: p = 2/2³). Singleton clusters get A_i = (1 − M w_i)^-½ (HC2); the pair's A = Φ^½ B^-½ Φ^½ uses the closed-form square
    root of a 2×2 matrix, √S = (S + √det S · I)/√(tr S + 2√det S), not an eigendecomposition."""
    y, v, clusters = np.array([0.1, 0.3, 0.2, 0.5]), np.array([0.01, 0.02, 0.01, 0.04]), ["a", "a", "b", "c"]
    pooled = pool_effects(y, v, method="dl", clusters=clusters)
    phi = v + pooled.tau2
    w = 1 / phi
    bread = 1 / w.sum()
    mean = bread * (w * y).sum()
    e = y - mean
    root = np.sqrt(phi[:2])
    b = root[:, None] * (np.diag(phi[:2]) - bread) * root[None, :]  # Φ½ (Φ_j − M 11ᵀ) Φ½
    sqrt_det = np.sqrt(np.linalg.det(b))
    b_root = (b + sqrt_det * np.eye(2)) / np.sqrt(np.trace(b) + 2 * sqrt_det)
    a_pair = root[:, None] * np.linalg.inv(b_root) * root[None, :]
    a_single = 1 / np.sqrt(1 - bread * w[2:])
    variance = bread**2 * ((w[:2] @ a_pair @ e[:2]) ** 2 + ((w[2:] * a_single * e[2:]) ** 2).sum())
    residual = np.eye(4) - np.outer(np.ones(4), w) * bread
    g = [bread * residual[:2].T @ a_pair @ w[:2]] + [bread * residual[i] * a_single[i - 2] * w[i] for i in (2, 3)]
    cross = np.array([[gi @ (phi * gj) for gj in g] for gi in g])
    df = np.trace(cross) ** 2 / (cross**2).sum()
    assert pooled.tau2 > 0 and pooled.robust and pooled.clusters == 3 and pooled.estimate == pytest.approx(mean)
    assert pooled.df == pytest.approx(df, rel=1e-10) and 1 < df < 2
    assert pooled.se == pytest.approx(np.sqrt(variance), rel=1e-10)
    # df < 4: p and interval come from the cluster sign-flip test (Canay, Romano & Shaikh 2017); with three
    # clusters its 8 patterns give p >= 2/8, so the 95% interval is the whole line
    sums = np.array([(w[:2] * y[:2]).sum(), w[2] * y[2], w[3] * y[3]])
    flips = [abs(np.dot(signs, sums)) >= abs(sums.sum()) - 1e-12 for signs in itertools.product((1, -1), repeat=3)]
    assert pooled.variance == "sign-flip" and pooled.p == pytest.approx(np.mean(flips), abs=1e-12)
    assert pooled.p == 0.25 and (pooled.ci_low, pooled.ci_high) == (-np.inf, np.inf)


def test_pooling_refuses_bad_input():
    with pytest.raises(BenchboxError, match="dl .*pm"):
        pool_effects([0.1, 0.2], [0.01, 0.01], method="reml")
    with pytest.raises(BenchboxError, match="positive"):
        pool_effects([0.1, 0.2], [0.01, 0.0])
    with pytest.raises(BenchboxError, match="independent clusters"):
        pool_effects([0.1, 0.2], [0.01, 0.01], clusters=["x", "x"])


def test_rows_sharing_items_share_a_cluster():
    assert KINDS["ranks"].cluster("retrieval", "i2t") == KINDS["ranks"].cluster("retrieval", "t2i")
    texts = {("sts14", "images"): ["a dog runs", "a cat"], ("sts14", "deft-forum"): ["why?"],
             ("sts12", "MSRpar"): ["stocks fell", "x"]}
    base = sentence_clusters(texts)
    assert base == {key: KINDS["correlation"].cluster(*key) for key in texts}  # no shared sentence: own subsets
    with_stsb = sentence_clusters({**texts, ("stsb", "test"): ["A dog  runs", "Stocks fell"]})
    # STS-B test reuses a sentence of images and one of MSRpar: one cluster, named by its first row
    assert with_stsb[("sts14", "images")] == with_stsb[("sts12", "MSRpar")] == with_stsb[("stsb", "test")] == \
        "sts12/MSRpar+2"
    assert with_stsb[("sts14", "deft-forum")] == "sts14/deft-forum"


def test_common_scale_effects():
    diff, var = fisher_z_difference(0.6, 0.5, 0.7, 200)
    z, _ = steiger_test(0.6, 0.5, 0.7, 200)
    assert diff == pytest.approx(np.arctanh(0.6) - np.arctanh(0.5))
    assert diff / np.sqrt(var) == pytest.approx(z)  # Steiger's Z is the Fisher-z difference over its SE
    a = np.array([1, 1, 1, 0, 0, 1, 0, 1, 1, 1], bool)
    b = np.array([1, 0, 0, 0, 1, 1, 0, 0, 1, 1], bool)  # b = 3 (A only), c = 1 (B only), n = 10
    diff, var = paired_proportion_difference(a, b)
    assert diff == pytest.approx(0.2) and var == pytest.approx((0.4 - 0.04) / 10)


def test_seed_test_is_students_t():
    a, b = [0.51, 0.55, 0.53], [0.47, 0.50, 0.46, 0.49]
    result = seed_test(a, b)
    reference = st.ttest_ind(a, b)
    assert result.t == pytest.approx(reference.statistic) and result.p == pytest.approx(reference.pvalue)
    assert result.df == 5
    one = seed_test(a, [0.50])  # a deterministic baseline: one-sample t
    assert one.p == pytest.approx(st.ttest_1samp(a, 0.50).pvalue) and one.df == 2
    with pytest.raises(BenchboxError, match="two runs"):
        seed_test([0.5], [0.4])


def test_aso_sees_dominance():
    rng = np.random.default_rng(0)
    better, worse = rng.normal(0.6, 0.01, 5), rng.normal(0.5, 0.01, 5)
    assert aso(better, worse, n_boot=200) < 0.1
    assert aso(worse, better, n_boot=200) > 0.9


# ---- calibration and power, row-level simulation (the claim's statistics, not the items) ----------------
ROWS = 26
ALPHA = 0.05


def _simulate(reps: int, seeds: int, shift_r: float, seed_shift_sd: float, seed_row_sd: float, seed: int):
    """Rejection rates of the pooled test (DL), the seed-aware test, the claim (both) and the vote count
    (any row significant after Holm over the 26 rows: Holm rejects some row iff min p < α/26).

    26 rows with n in [250, 1500] items and r in [.4, .8] to gold; every run (seed) of a model has Fisher-z
    scores μ_r + shift + u_s + η_{s,r} + ε_{s,r}: u_s a seed shift common to all rows, η_{s,r} row-level seed
    noise, ε_{s,r} the run's item-sampling error (variance v_r/2, v_r = Steiger's variance of one run-pair
    difference at r(a, b) = .8). Both models draw from one distribution; model A adds ``shift_r`` (a Δr at
    r = .6, turned into Δz)."""
    rng = np.random.default_rng(seed)
    n = rng.integers(250, 1500, ROWS)
    mu = np.arctanh(rng.uniform(0.4, 0.8, ROWS))
    v = 2 * (1 - 0.8) / (n - 3)
    shift = shift_r / (1 - 0.6**2)

    def runs(offset: float) -> np.ndarray:
        return (mu + offset + rng.normal(0, seed_shift_sd, (seeds, 1)) + rng.normal(0, seed_row_sd, (seeds, ROWS))
                + rng.normal(0, np.sqrt(v / 2), (seeds, ROWS)))

    rejected = np.zeros(4)
    for _ in range(reps):
        a, b = runs(shift), runs(0.0)
        pooled = pool_effects(a.mean(0) - b.mean(0), v, method="dl")
        seed_p = np.nan
        if seeds > 1:
            w = 1 / (v + pooled.tau2)
            seed_p = seed_test(per_seed_scores(a, w), per_seed_scores(b, w)).p
        vote = np.min(2 * st.norm.sf(np.abs(a[0] - b[0]) / np.sqrt(v))) < ALPHA / ROWS
        rejected += [pooled.p < ALPHA, seed_p < ALPHA, pooled.p < ALPHA and seed_p < ALPHA, vote]
    return dict(zip(("pooled", "seed", "claim", "vote"), rejected / reps))


def test_calibration_pooled_test_under_row_level_seed_noise():
    """One run a model, row-level seed noise (sd .02 in z) on top of item sampling: the pooled test holds 5%,
    the vote count (one row significant after Holm) rejects most of the time."""
    rates = _simulate(2000, 1, 0.0, 0.0, 0.02, seed=1)
    assert 0.035 <= rates["pooled"] <= 0.065, rates
    assert rates["vote"] > 0.5, rates


def test_calibration_seed_aware_test_under_a_common_seed_shift():
    """Three seeds a model and a seed shift common to all rows (sd .01) that no per-row or pooled test over
    items can tell from an effect: the seed-aware test holds 5%, the claim (pooled and seed-aware) at most 5%,
    while the pooled test and the vote count over-reject."""
    rates = _simulate(2000, 3, 0.0, 0.01, 0.02, seed=2)
    assert 0.035 <= rates["seed"] <= 0.065, rates
    assert rates["claim"] <= 0.065, rates
    assert rates["pooled"] > 0.2 and rates["vote"] > 0.5, rates


def test_power_for_a_pooled_delta_r_of_003():
    single = _simulate(300, 1, 0.03, 0.0, 0.02, seed=3)
    assert single["pooled"] >= 0.8, single
    seeded = _simulate(300, 3, 0.03, 0.01, 0.02, seed=4)
    assert seeded["claim"] >= 0.8, seeded


@pytest.mark.parametrize("rounded", [0.0, -5.767392335715099e-18, 1.7302177007145296e-17])
def test_a_row_measured_without_error_weighs_as_the_most_precise_measured_row(rounded):
    """Issue 50: Fisher z rows of identical scores have variance (2 − 2c)/(n − 3) with c = 1 up to rounding: 0, a
    few ulps below 0 (the row was dropped) or above (its weight 1/v was unbounded and the pooled effect 0 whatever
    the other rows said). Each becomes the smallest measured variance; a zero effect with a real variance and a
    non-zero effect are left as they are."""
    from benchbox.stats.pooling import exact_rows_weighed

    effects, variances = [0.0, 0.2, -0.1, 0.0], [rounded, 0.01, 0.004, 0.02]
    assert exact_rows_weighed(effects, variances).tolist() == [0.004, 0.01, 0.004, 0.02]
    pooled = pool_effects(effects, exact_rows_weighed(effects, variances))
    assert pooled.tau2 > 0 and abs(pooled.estimate) > 1e-3  # the other rows still speak
    assert np.isnan(exact_rows_weighed([0.0, 0.0], [rounded, 0.0])).all()  # nothing measured with error

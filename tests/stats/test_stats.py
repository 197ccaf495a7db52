"""benchbox.stats against worked examples from the literature, the Merkx & Frank supplement, and a simulated
null hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st
from statsmodels.stats.proportion import proportion_confint

from benchbox.data import comparators
from benchbox.errors import BenchboxError
from benchbox.stats import (
    adjust_pvalues,
    feasible_r_ab,
    fisher_ci,
    mcnemar_test,
    paired_bootstrap,
    steiger_test,
    unknown_r_ab_test,
    weighted_mean,
    wilcoxon_test,
    williams_test,
    wilson_ci,
    zou_ci,
)

# Scored pair counts per subset (docs/protocols.md#sts-subsets), STS-B test 1379, SICK test 4927 (docs/protocols.md#relatedness)
PAIR_COUNTS = {
    ("sts12", s): n for s, n in zip(("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
                                    (750, 750, 459, 750, 399))
} | {("sts13", s): n for s, n in zip(("FNWN", "headlines", "OnWN"), (189, 750, 561))} | {
    ("sts14", s): n for s, n in zip(("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
                                    (450, 300, 750, 750, 750, 750))
} | {
    ("sts15", s): n for s, n in zip(("answers-forums", "answers-students", "belief", "headlines", "images"),
                                    (375, 750, 375, 750, 750))
} | {
    ("sts16", s): n for s, n in zip(("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
                                    (254, 249, 230, 244, 209))
} | {("stsb", "test"): 1379, ("sickr", "test"): 4927}


# --- cocor (Diedenhofen & Musch 2015) documented test values -------------------------------------------

def test_williams_matches_cocor_depcor_example():
    # cocor tests: Silver, Hittner & May (2006) depcor, (.3, .4, .5, n=100) → t = -1.0767, p = .2843
    t, p = williams_test(.3, .4, .5, 100)
    assert round(t, 4) == -1.0767
    assert round(p, 4) == 0.2843


def test_steiger_matches_steiger_1980_case_a_and_depcor():
    # Steiger (1980) p. 249 case A, as computed by cocor: -0.8887185
    z, _ = steiger_test(r_ga=.4, r_gb=.5, r_ab=.1, n=103)
    assert round(z, 7) == -0.8887185
    z, p = steiger_test(.3, .4, .5, 100)
    assert (round(z, 4), round(p, 4)) == (-1.0718, 0.2838)


def test_zou_interval_matches_zou_2007_example():
    # Zou (2007) p. 409 / cocor: (.396, .179, .088, n=66) → (-.093, .517)
    low, high = zou_ci(.396, .179, .088, 66)
    assert (round(low, 3), round(high, 3)) == (-0.093, 0.517)


def test_dependent_tests_are_vectorised_and_antisymmetric():
    r_ga, r_gb, r_ab = np.array([.3, .5, .7]), np.array([.4, .2, .7]), np.array([.5, .3, .9])
    t, p = williams_test(r_ga, r_gb, r_ab, 100)
    assert t.shape == (3,) and t[2] == 0 and p[2] == pytest.approx(1)
    assert t[0] == pytest.approx(williams_test(.3, .4, .5, 100)[0])
    assert williams_test(.4, .3, .5, 100)[0] == pytest.approx(-t[0])
    low, high = zou_ci(r_ga, r_gb, r_ab, 100)
    assert np.all(low < r_ga - r_gb) and np.all(r_ga - r_gb < high)


@pytest.mark.parametrize("args", [(1.2, .3, .5, 100), (.3, .4, -1.01, 100), (.3, .4, .5, 3), (np.nan, .4, .5, 50),
                                  (.9, .9, -.5, 100), ([.3, .4], [.3, .4, .5], .5, 100)])
def test_bad_correlation_input_is_refused(args):
    with pytest.raises(BenchboxError):
        williams_test(*args)
    with pytest.raises(BenchboxError):
        steiger_test(*args)
    with pytest.raises(BenchboxError):
        zou_ci(*args)


# --- the Merkx & Frank (2019) supplement ----------------------------------------------------------------

def test_all_208_supplement_bounds_recomputed_from_r_and_n():
    table = comparators.supplement()
    assert len(table) == 26 * 4
    mapped = [comparators.SUBSETS[(t, d)] for t, d in zip(table["task"], table["dataset"])]
    n = np.array([PAIR_COUNTS[m] for m in mapped])
    assert np.array_equal(n, table["n_pairs_assumed"].to_numpy())
    low, high = fisher_ci(table["pearson_r_x100"].to_numpy() / 100, n)
    bounds = np.concatenate([low, high]) * 100
    published_bounds = np.concatenate([table["ci_low_x100"], table["ci_high_x100"]])
    assert len(bounds) == 208
    # published to one decimal: every bound agrees to that rounding
    assert np.array_equal(np.round(bounds, 1), published_bounds), np.abs(bounds - published_bounds).max()
    assert np.allclose(table["pearson_r_x100"] + table["ci_plus"], table["ci_high_x100"], atol=0.1 + 1e-9)
    assert np.allclose(table["pearson_r_x100"] - table["ci_minus"], table["ci_low_x100"], atol=0.1 + 1e-9)


def test_published_comparators_map_the_26_rows():
    for name in [n for n in comparators.COMPARATORS if n.startswith("paper:merkx2019/")]:
        metrics = comparators.paper_result(name).metrics
        assert len(metrics) == 26 and set(metrics["metric"]) == {"pearson"}
        assert set(zip(metrics["task"], metrics["subset"])) == set(PAIR_COUNTS)
        assert metrics["value"].between(-1, 1).all()
    gru = comparators.paper_result("paper:merkx2019/char-gru-coco").metrics.set_index(["task", "subset"])
    assert gru.loc[("sickr", "test"), "value"] == pytest.approx(0.827)
    with pytest.raises(BenchboxError, match="available"):
        comparators.paper_result("paper:merkx2019/nope")


def test_spearman_interval_uses_the_larger_standard_error():
    low, high = fisher_ci(0.5, 100, spearman=True)
    z = np.arctanh(0.5)
    assert high == pytest.approx(np.tanh(z + 1.959964 * np.sqrt(1.06 / 97)), abs=1e-6)


# --- Wilson, McNemar, Wilcoxon, corrections -------------------------------------------------------------

def test_wilson_matches_statsmodels():
    k, n = np.array([0, 3, 50, 99]), np.array([10, 20, 100, 100])
    low, high = wilson_ci(k, n)
    ref_low, ref_high = proportion_confint(k, n, method="wilson")
    assert np.allclose(low, ref_low) and np.allclose(high, ref_high)


def test_mcnemar_exact_on_known_tables():
    # b = 0 discordant one way, c = 6 the other: exact two-sided p = 2 · 0.5^6 = 0.03125
    a = np.array([1] * 4 + [0] * 6 + [0] * 5, dtype=bool)
    b = np.array([1] * 4 + [1] * 6 + [0] * 5, dtype=bool)
    assert mcnemar_test(a, b) == (0.0, pytest.approx(0.03125))
    # Agresti (1990) presidential approval table [[794, 150], [86, 570]]: b = 150, c = 86
    a = np.repeat([1, 1, 0, 0], [794, 150, 86, 570]).astype(bool)
    b = np.repeat([1, 0, 1, 0], [794, 150, 86, 570]).astype(bool)
    statistic, p = mcnemar_test(a, b)
    assert statistic == 86
    assert p == pytest.approx(2 * st.binom.cdf(86, 236, 0.5))
    assert 1e-5 < p < 1e-4
    assert mcnemar_test(a, a) == (0.0, 1.0)
    with pytest.raises(BenchboxError):
        mcnemar_test(a, b[:-1])


def test_wilcoxon_and_adjustment():
    rng = np.random.default_rng(0)
    ranks_a = rng.integers(1, 50, 200)
    ranks_b = ranks_a + rng.integers(0, 3, 200)
    statistic, p = wilcoxon_test(ranks_a, ranks_b)
    assert p < 1e-10
    assert wilcoxon_test(ranks_a, ranks_a) == (0.0, 1.0)
    p = np.array([0.01, 0.04, 0.03, np.nan])
    holm = adjust_pvalues(p, "holm")
    assert np.allclose(holm[:3], [0.03, 0.06, 0.06]) and np.isnan(holm[3])
    assert np.allclose(adjust_pvalues(p, "fdr_bh")[:3], [0.03, 0.04, 0.04])
    with pytest.raises(BenchboxError):
        adjust_pvalues(p, "bonferroni-ish")


# --- paired bootstrap -------------------------------------------------------------------------------------

def _correlated(rng, n, rho_a, rho_b, size=()):
    gold = rng.standard_normal((*size, n))
    a = rho_a * gold + np.sqrt(1 - rho_a**2) * rng.standard_normal((*size, n))
    b = rho_b * gold + np.sqrt(1 - rho_b**2) * rng.standard_normal((*size, n))
    return gold, a, b


def test_bootstrap_aggregates_match_direct_computation():
    rng = np.random.default_rng(1)
    gold, a, b = _correlated(rng, 300, 0.6, 0.3)
    strata = np.repeat(["x", "y", "z"], [50, 100, 150])
    per = {s: (st.pearsonr(a[strata == s], gold[strata == s])[0] - st.pearsonr(b[strata == s], gold[strata == s])[0])
           for s in "xyz"}
    mean = paired_bootstrap(gold, a, b, strata=strata, aggregate="mean", n_boot=200)
    assert mean.diff == pytest.approx(np.mean(list(per.values())))
    wmean = paired_bootstrap(gold, a, b, strata=strata, aggregate="wmean", n_boot=200)
    assert wmean.diff == pytest.approx((50 * per["x"] + 100 * per["y"] + 150 * per["z"]) / 300)
    pooled = paired_bootstrap(gold, a, b, strata=strata, aggregate="pooled", statistic="spearman", n_boot=200)
    assert pooled.diff == pytest.approx(st.spearmanr(a, gold)[0] - st.spearmanr(b, gold)[0])
    assert pooled.ci_low < pooled.diff < pooled.ci_high and pooled.p < 0.01
    again = paired_bootstrap(gold, a, b, strata=strata, aggregate="pooled", statistic="spearman", n_boot=200)
    assert again == pooled  # seeded
    ranks = paired_bootstrap(None, np.arange(10.0), np.arange(10.0) + 1, statistic=weighted_mean, n_boot=100)
    assert ranks.diff == pytest.approx(-1) and ranks.ci == pytest.approx((-1, -1))


def test_bootstrap_refuses_bad_input():
    with pytest.raises(BenchboxError, match="one length"):
        paired_bootstrap([1, 2, 3], [1, 2, 3], [1, 2])
    with pytest.raises(BenchboxError, match="statistic"):
        paired_bootstrap([1, 2, 3], [1, 2, 3], [3, 2, 1], statistic="kendall")
    with pytest.raises(BenchboxError, match="aggregate"):
        paired_bootstrap([1, 2, 3], [1, 2, 3], [3, 2, 1], aggregate="median")


# --- unknown r(A, B): published numbers -----------------------------------------------------------------

@pytest.mark.parametrize("r_ga, r_gb, n", [(0.62, 0.55, 750), (0.3, -0.2, 189), (0.9, 0.85, 300)])
def test_worst_case_test_is_never_more_significant_than_any_feasible_r_ab(r_ga, r_gb, n):
    z, p, low, high = unknown_r_ab_test(r_ga, r_gb, n)
    lo, hi = feasible_r_ab(r_ga, r_gb)
    grid = np.linspace(lo, hi, 2001)
    _, p_grid = steiger_test(r_ga, r_gb, grid, n)
    assert p >= p_grid.max() - 1e-9
    low_grid, high_grid = zou_ci(r_ga, r_gb, grid, n)
    assert p == pytest.approx(p_grid.max(), rel=1e-6)
    assert low == pytest.approx(low_grid.min(), abs=1e-6) and high == pytest.approx(high_grid.max(), abs=1e-6)
    # a far bigger difference is still detected
    assert unknown_r_ab_test(0.80, 0.60, 750)[1] < 1e-6


# --- simulated null: two equally good encoders --------------------------------------------------------

def test_williams_false_positive_rate_under_the_null():
    rng = np.random.default_rng(2024)
    sims, n = 2000, 150
    def rows_r(x, y):
        x = x - x.mean(axis=1, keepdims=True)
        y = y - y.mean(axis=1, keepdims=True)
        return (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))

    # both encoders correlate .5 with gold and share noise (as real encoders do): r(A, B) = .25 + .75 · .7
    gold2, a2, e = _correlated(rng, n, 0.5, 0.0, size=(sims,))
    b2 = 0.5 * gold2 + np.sqrt(0.75) * (0.7 * (a2 - 0.5 * gold2) / np.sqrt(0.75) + np.sqrt(1 - 0.49) * e)
    _, p = williams_test(rows_r(gold2, a2), rows_r(gold2, b2), rows_r(a2, b2), n)
    rate = np.mean(p < 0.05)
    se = np.sqrt(0.05 * 0.95 / sims)
    assert rate <= 0.05 + 3 * se, rate
    _, p_steiger = steiger_test(rows_r(gold2, a2), rows_r(gold2, b2), rows_r(a2, b2), n)
    assert np.mean(p_steiger < 0.05) <= 0.05 + 3 * se
    # and the test has power when one encoder is better
    gold3, a3, b3 = _correlated(rng, n, 0.65, 0.35, size=(sims,))
    assert np.mean(williams_test(rows_r(gold3, a3), rows_r(gold3, b3), rows_r(a3, b3), n)[1] < 0.05) > 0.9


def test_bootstrap_false_positive_rate_under_the_null():
    rng = np.random.default_rng(7)
    sims, n = 300, 250  # STS subsets have 189 to 750 pairs
    rejections = 0
    for _ in range(sims):
        gold, a, b = _correlated(rng, n, 0.5, 0.5)
        rejections += paired_bootstrap(gold, a, b, n_boot=300, seed=int(rng.integers(1 << 31))).p < 0.05
    se = np.sqrt(0.05 * 0.95 / sims)
    assert rejections / sims <= 0.05 + 3 * se, rejections / sims

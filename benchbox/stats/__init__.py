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

The modules: :mod:`~benchbox.stats.intervals`, :mod:`~benchbox.stats.correlations`,
:mod:`~benchbox.stats.jackknife`, :mod:`~benchbox.stats.paired_outcomes`, :mod:`~benchbox.stats.bootstrap`,
:mod:`~benchbox.stats.corrections` (their public names are importable from ``benchbox.stats``), and the
machinery behind claims: :mod:`~benchbox.stats.resampling` (every bootstrap's draws), :mod:`~benchbox.stats.pooling`
(random-effects pooling of per-row effects), :mod:`~benchbox.stats.seeds` (tests over training seeds),
:mod:`~benchbox.stats.claim_test` (one test of a claim against item and seed variance together).

Bad input (|r| > 1, n ≤ 3, mismatched lengths) raises :class:`~benchbox.errors.BenchboxError`.

scipy.stats and statsmodels (about 1 s to import) are imported inside the functions that use them: every task
module imports this package, and a command that only checks (``benchbox study --check``, a study's start) never
computes a test (``tests/study/test_study_warmup.py``; the study's warm-up imports them while its cells run).
"""

from benchbox.stats.bootstrap import (
    AGGREGATES, STATISTICS, BootstrapResult, WeightedStatistic, paired_bootstrap, paired_bootstrap_rows, weighted_mean,
    weighted_median,
)
from benchbox.stats.corrections import CORRECTIONS, adjust_pvalues
from benchbox.stats.correlations import (
    feasible_r_ab, fisher_z_difference, steiger_test, unknown_r_ab_test, williams_test, zou_ci,
)
from benchbox.stats.intervals import fisher_ci, wilson_ci
from benchbox.stats.jackknife import JackknifeResult, grouped_jackknife_test, normalise_sentence, sentence_groups
from benchbox.stats.paired_outcomes import mcnemar_test, paired_proportion_difference, wilcoxon_test

__all__ = [
    "AGGREGATES",
    "BootstrapResult",
    "CORRECTIONS",
    "JackknifeResult",
    "STATISTICS",
    "WeightedStatistic",
    "adjust_pvalues",
    "feasible_r_ab",
    "fisher_ci",
    "fisher_z_difference",
    "grouped_jackknife_test",
    "mcnemar_test",
    "normalise_sentence",
    "paired_bootstrap",
    "paired_bootstrap_rows",
    "paired_proportion_difference",
    "sentence_groups",
    "steiger_test",
    "unknown_r_ab_test",
    "weighted_mean",
    "weighted_median",
    "wilcoxon_test",
    "williams_test",
    "wilson_ci",
    "zou_ci",
]

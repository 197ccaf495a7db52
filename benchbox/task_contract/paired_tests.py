"""The kinds of paired test that ``benchbox compare`` runs on two models' per-item scores
(docs/protocols.md#paired-tests). Each kind is one class that declares, once, everything the rest of benchbox
derives from it:

- ``columns``: the per-item columns its tests read (``eval`` refuses items that lack them,
  :mod:`benchbox.task_contract.item_checks`), and ``varying``: those of them that must vary within a subset;
- :meth:`PairedKind.test`: the implementation — for one row (task × subset × metric) of two models, the test's
  name, statistic, p, the 95% interval of the difference and, for a summary metric, its effect on the claims'
  common scale with its variance;
- :meth:`PairedKind.scale`: the name of that common scale for a metric (None: the kind's rows join no claim),
  :meth:`PairedKind.on_scale`: one run's score on it (the per-seed scores of a claim), ``noun``: how a claim
  names its rows, and :meth:`PairedKind.cluster`: the item set a row is computed on;
- ``keys``: the columns that must be among the task's ``item_keys`` (two runs' rows are joined on the item keys
  and every other column is suffixed ``_a``/``_b``, so a column the test selects rows by must be one; refused
  where the task is registered and by :func:`benchbox.testing.check_task`), and ``subset``: the column whose
  values are the subsets of the kind's rows (``subset``; ``direction`` for retrieval);
- for the leaderboard (:mod:`benchbox.comparison.leaderboard`): :meth:`PairedKind.strata` and
  :meth:`PairedKind.clusters`, what its items are drawn by, and :meth:`PairedKind.resampled_subset`, one run's
  score of a metric under each row of a bootstrap weight matrix ``W`` [B, items] (how many times each item was
  drawn, :func:`benchbox.stats.ranking.cluster_weights`): the metric's own statistic, weighted.

A main score recorded per subset with no headline subset is, under the weights, the unweighted mean of its
per-subset scores (:meth:`PairedKind.resampled`; correlation aggregates compute their own).

A :class:`~benchbox.task_contract.protocol.MetricSpec` names its kind (``kind="correlation"``); a metric whose kind has a scale
joins the claims when it is a summary metric (:mod:`benchbox.comparison.claims`), a plugin's metric included.
Adding a kind is one subclass of :class:`PairedKind` that implements :meth:`~PairedKind.test` and
:meth:`~PairedKind.resampled_subset`: it registers itself in :data:`KINDS` under its ``name``. Nothing outside
the kinds branches on a kind's name.

The built-in kinds:

- ``correlation`` (items ``gold``, ``score``): Pearson/Spearman per subset by Williams' t (default) or Steiger's
  Z with Zou's (2007) interval of the difference (Spearman: the same on ranks); a subset whose pairs share a
  sentence (items with ``sentence1``/``sentence2``) by the delete-a-group jackknife over its sentence groups
  unless the items are declared independent; the per-year aggregates (subset ``all``:
  ``<method>_<mean|wmean|pooled>``) by a paired bootstrap stratified by subset; without per-item scores on one
  side (published numbers), Pearson rows by the worst case over the unknown r(A, B), flagged approximate.
  Common scale: the Fisher-z difference of Pearson rows (Δz). Resampled: Pearson per subset (Spearman: Pearson
  of the ranks of the full subset, ranked once as the sentence-group jackknife does), ``_mean`` the unweighted
  mean over subsets, ``_wmean`` weighted by subset size, ``_pooled`` one correlation over every item
  (SentEval's aggregates); within a subset the sentence groups of pairs that share a sentence are drawn whole.
- ``classification`` (items ``correct``): accuracy by McNemar's exact test, interval by a paired bootstrap;
  common scale: the difference of paired proportions (Δacc). Resampled: the proportion correct.
- ``ranks`` (items ``direction``, ``rank``; key ``direction``; the subset is the direction): ``r<K>`` by McNemar
  on hit@K, ``medr`` and ``meanr`` by Wilcoxon's signed-rank test, ``mrr`` by a paired bootstrap of the mean
  reciprocal rank; intervals by a paired bootstrap with folds as strata; common scale of ``r<K>``: the difference
  of paired proportions (ΔR@K). The directions of one task share its items: one cluster per task. Resampled
  (strata: direction and fold): ``r<K>`` the proportion of queries with rank ≤ K, ``mrr``, ``meanr``; ``medr``
  has none.
- ``mean`` (items ``metric``, ``value``; key ``metric``): a paired bootstrap of the mean of the per-item values
  of that metric (e.g. the per-image E_intra / E_inter of the structure tasks); common scale: the difference
  itself. Resampled: the mean of the metric's per-item values.
- ``bootstrap`` (any per-item columns): a paired bootstrap of the task's own ``statistic(rows)``; common scale:
  the difference itself. Resampled: the statistic on the resampled rows (one call per replicate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.errors import BenchboxError

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

if TYPE_CHECKING:
    from benchbox.stats import BootstrapResult
    from benchbox.task_contract.protocol import MetricSpec

#: the test of two dependent correlations, by its ``--test`` name
CORRELATION_TESTS = ("williams", "steiger")
#: how the per-subset correlation rows treat pairs that share a sentence: ``sentence-groups`` (the grouped
#: jackknife when some pairs share one) or ``independent`` (Williams/Steiger on every row, the reference)
ITEM_DEPENDENCE = ("sentence-groups", "independent")
#: the ``test`` of a correlation row tested by the delete-a-group jackknife over sentence groups
JACKKNIFE = "jackknife (sentence groups)"
#: per-item columns holding the sentences of an item, for sentence groups and row clusters
TEXT_COLUMNS = ("sentence1", "sentence2", "sentence")


@dataclass(frozen=True)
class RowTest:
    """The paired test of one row: the test's name, its statistic and two-sided p, the 95% interval of the
    difference A − B, and (summary metrics of a kind with a common scale) the effect on that scale with its
    sampling variance."""

    test: str
    statistic: float
    p: float
    ci: tuple[float, float]
    effect: tuple[float, float] | None = None
    approximate: bool = False


@dataclass
class PairSettings:
    """What every test of one comparison shares: the bootstrap's resamples and seed, the test of two dependent
    correlations, how pairs that share a sentence are treated (those of its
    :class:`~benchbox.comparison.settings.CompareSettings`, :meth:`~benchbox.comparison.settings.CompareSettings.pair`),
    and the sentence groups already found."""

    n_boot: int
    seed: int
    correlation_test: str
    item_dependence: str
    #: (task, subset) → its sentence groups (:meth:`sentence_groups`), found once for Pearson and Spearman
    groups: dict[tuple[str, str], np.ndarray | None] = field(default_factory=dict)

    def bootstrap(self, gold: Any, score_a: Any, score_b: Any, **kwargs: Any) -> BootstrapResult:
        from benchbox import stats

        return stats.paired_bootstrap(gold, score_a, score_b, n_boot=self.n_boot, seed=self.seed, **kwargs)

    def sentence_groups(self, task: str, subset: str, part: pd.DataFrame) -> np.ndarray | None:
        """Group ids of the subset's pairs (connected components of shared sentences,
        :func:`benchbox.stats.sentence_groups`), or None when items are taken as independent: with
        ``item_dependence="independent"``, without sentence text, or when no two pairs share a sentence."""
        from benchbox import stats

        key = (task, subset)
        if key not in self.groups:
            texts = sentence_columns(part)
            groups = None if self.item_dependence == "independent" or not texts else stats.sentence_groups(*texts)
            self.groups[key] = groups if groups is not None and len(groups) and groups.max() + 1 < len(groups) else None
        return self.groups[key]


def sentence_columns(frame: pd.DataFrame) -> list[pd.Series]:
    """The sentence columns of per-item rows (:data:`TEXT_COLUMNS`), unsuffixed or, in two runs' joined rows,
    one side's."""
    found = []
    for column in TEXT_COLUMNS:
        name = next((c for c in (column, f"{column}_a", f"{column}_b") if c in frame.columns), None)
        if name is not None:
            found.append(frame[name])
    return found


def one_side(joined: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """One run's per-item rows out of two runs' joined rows: its suffixed columns unsuffixed, plus the shared
    ones."""
    other = "_b" if suffix == "_a" else "_a"
    columns = {c: c.removesuffix(suffix) for c in joined.columns if not c.endswith(other)}
    return joined[list(columns)].rename(columns=columns).reset_index(drop=True)


#: every kind, by name, in the order claims list them
KINDS: dict[str, PairedKind] = {}


class PairedKind:
    """One kind of paired test (see the module docstring); subclasses register themselves in :data:`KINDS` and
    implement :meth:`test` and :meth:`resampled_subset`."""

    name: ClassVar[str]
    #: the per-item columns the kind's tests read, and those of them that must vary within a subset
    columns: ClassVar[tuple[str, ...]] = ()
    varying: ClassVar[tuple[str, ...]] = ()
    #: the columns that must be among the task's ``item_keys`` (its tests select rows by them after the join)
    keys: ClassVar[tuple[str, ...]] = ()
    #: the column whose values are the subsets of the kind's rows
    subset: ClassVar[str] = "subset"
    #: how a claim names the rows it pools ("26 correlation rows"), and the difference in the metric's own units
    #: it gives beside the pooled effect (None: none)
    noun: ClassVar[str] = ""
    natural: ClassVar[str | None] = None
    #: the tests, in words (``benchbox describe``)
    description: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        lacking = [m for m in ("test", "resampled_subset") if getattr(cls, m) is getattr(PairedKind, m)]
        if lacking:
            raise BenchboxError(f"paired-test kind {getattr(cls, 'name', cls.__name__)!r} does not implement "
                                f"{' and '.join(lacking)}: a kind declares its test and its resampled statistic "
                                "(docs/plugins.md, \"A kind of paired test\")")
        KINDS[cls.name] = cls()

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """The test of ``spec`` on ``subset`` of ``task`` from two runs' per-item rows joined on the task's item
        keys (columns suffixed ``_a`` and ``_b``); None when the subset has no rows to pair."""
        raise NotImplementedError

    def test_without_items(self, value_a: pd.Series, value_b: pd.Series, spec: MetricSpec) -> RowTest | None:
        """A row of two metric records when one side has no per-item scores (published numbers): None, not
        tested, unless the kind has a test that needs no items."""
        return None

    def scale(self, metric: str) -> str | None:
        """The name of the common scale on which summary rows of ``metric`` are pooled into a claim; None: they
        join no claim."""
        return None

    def on_scale(self, value: float, spec: MetricSpec) -> float:
        """One run's score of a row on the common scale (the per-seed scores of a claim)."""
        return value

    def cluster(self, task: str, subset: str) -> str:
        """The item set the row is computed on, before shared sentences are looked at: its own subset."""
        return f"{task}/{subset}"

    def missing_keys(self, item_keys: tuple[str, ...] | list[str]) -> list[str]:
        """The columns of :attr:`keys` that ``item_keys`` lacks."""
        return [key for key in self.keys if key not in item_keys]

    def strata(self, items: pd.DataFrame) -> pd.Series:
        """The stratum of each of one run's per-item rows, which the leaderboard's bootstrap draws within: its
        ``subset`` (one stratum when there is none)."""
        return items["subset"].astype(str) if "subset" in items else pd.Series("", index=items.index)

    def clusters(self, items: pd.DataFrame, strata: pd.Series) -> np.ndarray:
        """The cluster of each per-item row, drawn whole: each item its own."""
        return np.arange(len(items)).astype(str)

    def resampled(self, spec: MetricSpec, subset: str | None, items: pd.DataFrame,
                  weights: np.ndarray) -> np.ndarray | None:
        """[B] the metric ``spec`` of one run under each row of ``weights``: on ``subset`` (the rows whose
        :attr:`subset` column holds it), or, ``subset=None``, the unweighted mean over the subsets it is recorded
        on. None: the metric has no resampled statistic."""
        names = items[self.subset].astype(str)
        if subset is not None:
            mask = (names == subset).to_numpy()
            return self.resampled_subset(spec, items[mask].reset_index(drop=True), weights[:, mask])
        per = [self.resampled(spec, name, items, weights) for name in dict.fromkeys(names)]
        return None if not per or any(p is None for p in per) else np.mean(per, axis=0)

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """[B] the metric ``spec`` on one subset's per-item rows of one run under each row of ``weights``
        [B, len(items)] (how many times each item was drawn): the metric's own statistic, weighted; None when the
        metric has none."""
        raise NotImplementedError


def weighted_mean(values: Any, weights: np.ndarray) -> np.ndarray:
    """[B] the mean of ``values`` under each row of ``weights`` [B, n]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return weights @ np.asarray(values, float) / weights.sum(axis=1)


def weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[B] Pearson's r of ``x`` and ``y`` under each row of ``w`` [B, n]."""
    total = w.sum(axis=1)
    mx, my = w @ x / total, w @ y / total
    cov = w @ (x * y) / total - mx * my
    vx, vy = w @ (x * x) / total - mx**2, w @ (y * y) / total - my**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(vx * vy)


def _proportion(value: float, spec: MetricSpec) -> float:
    """A percentage as a proportion (the scale of :func:`benchbox.stats.paired_proportion_difference`)."""
    return value / 100.0 if spec.unit == "%" else value


class Correlation(PairedKind):
    name = "correlation"
    columns = ("gold", "score")
    varying = ("gold", "score")
    noun = "correlation"
    natural = "Δr"
    description = ("Williams' t (or Steiger's Z) with Zou's interval per subset, the sentence-group jackknife where "
                   "pairs share sentences; aggregates by a paired bootstrap stratified by subset")

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """``pearson``/``spearman`` per subset; ``<method>_<aggregate>`` on subset ``all`` by a paired bootstrap
        stratified by subset.

        A subset whose pairs share sentences (``sentence1``/``sentence2``: some sentence in two pairs) is tested
        by the delete-a-group jackknife over its sentence groups (:func:`benchbox.stats.grouped_jackknife_test`):
        t on G − 1 degrees of freedom, the jackknife interval of the difference, and the jackknife variance of
        the Fisher-z difference as the effect's variance. Spearman: the subset is ranked once, then the same
        jackknife runs on the ranks (the left-out groups are not re-ranked). Independent pairs (every group one
        pair), no sentence text, or ``item_dependence="independent"``: Williams' t or Steiger's Z with Zou's
        interval."""
        from scipy.stats import rankdata

        from benchbox import stats

        method, _, aggregate = spec.name.partition("_")
        if method not in ("pearson", "spearman") or (aggregate and aggregate not in stats.AGGREGATES):
            raise BenchboxError(f"{task}: metric {spec.name!r} is declared kind='correlation', which tests pearson, "
                                f"spearman and their {', '.join(stats.AGGREGATES)} aggregates only")
        if aggregate:
            if subset != "all":
                return None
            result = pair.bootstrap(rows["gold_a"], rows["score_a"], rows["score_b"], strata=rows["subset"],
                                    statistic=method, aggregate=aggregate)
            return RowTest("bootstrap (strata)", result.z, result.p, result.ci)
        part = rows[rows["subset"] == subset]
        if part.empty:
            return None
        g, a, b = (part[c].to_numpy(float) for c in ("gold_a", "score_a", "score_b"))
        if method == "spearman":
            g, a, b = rankdata(g), rankdata(a), rankdata(b)
        pooled = spec.summary and method == "pearson"
        groups = pair.sentence_groups(task, subset, part)
        if groups is not None:
            jk = stats.grouped_jackknife_test(g, a, b, groups)
            return RowTest(JACKKNIFE, jk.t, jk.p, jk.ci, effect=(jk.diff_z, jk.var_z) if pooled else None)
        r_ga, r_gb, r_ab = (float(np.clip(np.nan_to_num(np.corrcoef(x, y)[0, 1]), -1, 1))
                            for x, y in ((g, a), (g, b), (a, b)))
        test = {"williams": stats.williams_test, "steiger": stats.steiger_test}[pair.correlation_test]
        statistic, p = test(r_ga, r_gb, r_ab, len(g))
        effect = stats.fisher_z_difference(r_ga, r_gb, r_ab, len(g)) if pooled else None
        return RowTest(pair.correlation_test, statistic, p, stats.zou_ci(r_ga, r_gb, r_ab, len(g)), effect=effect)

    def test_without_items(self, value_a: pd.Series, value_b: pd.Series, spec: MetricSpec) -> RowTest | None:
        """Pearson rows of published numbers (a Pearson r over the row's n items: per subset, or pooled over a
        year's subsets): Steiger's Z at the worst case over the unknown r(A, B)."""
        from benchbox import stats

        n = int(value_a["n"])
        if spec.name not in ("pearson", "pearson_pooled") or n != int(value_b["n"]) or n <= 3:
            return None
        z, p, low, high = stats.unknown_r_ab_test(float(value_a["value"]), float(value_b["value"]), n)
        return RowTest("steiger-worst-case", z, p, (low, high), approximate=True)

    def scale(self, metric: str) -> str | None:
        return "Δz" if metric == "pearson" else None

    def on_scale(self, value: float, spec: MetricSpec) -> float:
        return float(np.arctanh(np.clip(value, -1 + 1e-12, 1 - 1e-12)))

    def clusters(self, items: pd.DataFrame, strata: pd.Series) -> np.ndarray:
        """Within each stratum (subset), the sentence groups of pairs that share a sentence
        (:func:`benchbox.stats.sentence_groups`); each item its own without sentence text."""
        from benchbox import stats

        clusters = super().clusters(items, strata).astype(object)
        if sentence_columns(items):
            for stratum in dict.fromkeys(strata):
                inside = np.flatnonzero((strata == stratum).to_numpy())
                groups = stats.sentence_groups(*sentence_columns(items.iloc[inside]))
                clusters[inside] = [f"{stratum}#{g}" for g in groups]
        return np.asarray([str(c) for c in clusters])

    def resampled(self, spec: MetricSpec, subset: str | None, items: pd.DataFrame,
                  weights: np.ndarray) -> np.ndarray | None:
        """Pearson or Spearman on ``subset``; ``_pooled`` over every item, ``_mean`` (and a per-subset metric with
        no subset, or subset ``all``) the unweighted mean over subsets, ``_wmean`` weighted by subset size."""
        aggregate = spec.name.partition("_")[2]
        subsets = items["subset"].astype(str).to_numpy()
        if aggregate == "pooled":
            return self.resampled_subset(spec, items, weights)
        if not aggregate and subset not in (None, "all"):
            return super().resampled(spec, subset, items, weights)
        names = list(dict.fromkeys(subsets))
        per = np.stack([super(Correlation, self).resampled(spec, name, items, weights) for name in names])
        if aggregate == "wmean":
            sizes = np.array([(subsets == name).sum() for name in names], float)
            return sizes @ per / sizes.sum()
        return per.mean(axis=0)

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """Pearson's r under the weights (Spearman: of the ranks of the whole subset, ranked once)."""
        from scipy.stats import rankdata

        g, s = items["gold"].to_numpy(float), items["score"].to_numpy(float)
        if spec.name.startswith("spearman"):
            g, s = rankdata(g), rankdata(s)
        return weighted_pearson(g, s, weights)


class Classification(PairedKind):
    name = "classification"
    columns = ("correct",)
    noun = "classification"
    description = "McNemar's exact test on the items each model classifies correctly; interval by a paired bootstrap"

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """McNemar's exact test on ``correct``; interval: paired bootstrap of the accuracy difference (in the
        metric's unit)."""
        from benchbox import stats

        part = rows[rows["subset"] == subset]
        if part.empty:
            return None  # e.g. the dev accuracy of a k-fold task: no per-item predictions to pair
        ca, cb = part["correct_a"].to_numpy(bool), part["correct_b"].to_numpy(bool)
        unit = 100.0 if spec.unit == "%" else 1.0
        statistic, p = stats.mcnemar_test(ca, cb)
        result = pair.bootstrap(None, unit * ca, unit * cb, statistic=stats.weighted_mean)
        effect = stats.paired_proportion_difference(ca, cb) if spec.summary else None
        return RowTest("mcnemar", statistic, p, result.ci, effect=effect)

    def scale(self, metric: str) -> str | None:
        return "Δacc"

    def on_scale(self, value: float, spec: MetricSpec) -> float:
        return _proportion(value, spec)

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """The proportion correct (× 100 for a percentage)."""
        unit = 100.0 if spec.unit == "%" else 1.0
        return unit * weighted_mean(items["correct"].to_numpy(float), weights)


class Ranks(PairedKind):
    name = "ranks"
    columns = ("direction", "rank")
    keys = ("direction",)
    subset = "direction"
    noun = "retrieval"
    description = ("McNemar's exact test on hit@K for r<K>, Wilcoxon's signed-rank test for medr and meanr, a paired "
                   "bootstrap for mrr; intervals by a paired bootstrap with folds as strata")

    @staticmethod
    def recall_at(metric: str) -> int | None:
        """K of a recall metric ``r<K>``, else None."""
        return int(metric[1:]) if metric.startswith("r") and metric[1:].isdigit() else None

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """``r<K>`` by McNemar on hit@K, ``medr``/``meanr`` by Wilcoxon, ``mrr`` by a paired bootstrap of the
        mean reciprocal rank (the subset is the direction; folds are the bootstrap's strata)."""
        from benchbox import stats

        part = rows[rows[self.subset] == subset]
        if part.empty:
            return None
        ra, rb, folds = part["rank_a"].to_numpy(float), part["rank_b"].to_numpy(float), part["subset"]
        k = self.recall_at(spec.name)
        if k is not None:
            statistic, p = stats.mcnemar_test(ra <= k, rb <= k)
            result = pair.bootstrap(None, 100.0 * (ra <= k), 100.0 * (rb <= k), strata=folds,
                                    statistic=stats.weighted_mean)
            effect = stats.paired_proportion_difference(ra <= k, rb <= k) if spec.summary else None
            return RowTest("mcnemar", statistic, p, result.ci, effect=effect)
        if spec.name in ("medr", "meanr"):
            statistic, p = stats.wilcoxon_test(ra, rb)
            kind = stats.weighted_median if spec.name == "medr" else stats.weighted_mean
            return RowTest("wilcoxon", statistic, p, pair.bootstrap(None, ra, rb, strata=folds, statistic=kind).ci)
        if spec.name == "mrr":
            result = pair.bootstrap(None, 1.0 / ra, 1.0 / rb, strata=folds, statistic=stats.weighted_mean)
            effect = (result.diff, result.se**2) if spec.summary else None
            return RowTest("bootstrap", result.z, result.p, result.ci, effect=effect)
        raise BenchboxError(f"{task}: metric {spec.name!r} is declared kind='ranks', which tests r<K>, medr, meanr "
                            "and mrr only")

    def scale(self, metric: str) -> str | None:
        k = self.recall_at(metric)
        return f"ΔR@{k}" if k is not None else "Δmrr" if metric == "mrr" else None

    def on_scale(self, value: float, spec: MetricSpec) -> float:
        return _proportion(value, spec)

    def cluster(self, task: str, subset: str) -> str:
        """The directions of one retrieval task rank the same images and captions: one item set."""
        return task

    def strata(self, items: pd.DataFrame) -> pd.Series:
        """Direction and fold: each direction's queries are drawn within their fold."""
        folds = super().strata(items)
        return items["direction"].astype(str) + "/" + folds if "direction" in items else folds

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """``r<K>``: the proportion of queries with rank ≤ K (× 100 for a percentage); ``mrr``: the mean reciprocal
        rank; ``meanr``: the mean rank; ``medr``: none."""
        rank = items["rank"].to_numpy(float)
        k = self.recall_at(spec.name)
        if k is not None:
            return (100.0 if spec.unit == "%" else 1.0) * weighted_mean((rank <= k).astype(float), weights)
        values = {"mrr": 1.0 / rank, "meanr": rank}.get(spec.name)
        return None if values is None else weighted_mean(values, weights)


class Mean(PairedKind):
    name = "mean"
    columns = ("metric", "value")
    keys = ("metric",)
    noun = "per-item mean"
    description = "a paired bootstrap of the mean of the per-item values"

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """A paired bootstrap of the mean of the per-item values of this metric."""
        from benchbox import stats

        part = rows[(rows["subset"] == subset) & (rows["metric"] == spec.name)]
        if part.empty:
            return None
        result = pair.bootstrap(None, part["value_a"], part["value_b"], statistic=stats.weighted_mean)
        return RowTest("bootstrap", result.z, result.p, result.ci,
                       effect=(result.diff, result.se**2) if spec.summary else None)

    def scale(self, metric: str) -> str | None:
        return f"Δ{metric}"

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """The mean of the per-item values of this metric."""
        mask = (items["metric"] == spec.name).to_numpy()
        return weighted_mean(items["value"].to_numpy(float)[mask], weights[:, mask])


class Bootstrap(PairedKind):
    name = "bootstrap"
    noun = "bootstrapped"
    description = "a paired bootstrap of the task's own statistic over the per-item rows"

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        """A paired bootstrap of the task's own statistic over the subset's per-item rows. A metric read back
        from a run manifest has no statistic: not tested."""
        from benchbox import stats

        part = rows[rows["subset"] == subset]
        if part.empty or spec.statistic is None:
            return None
        result = stats.paired_bootstrap_rows(one_side(part, "_a"), one_side(part, "_b"), spec.statistic,
                                             n_boot=pair.n_boot, seed=pair.seed)
        return RowTest("bootstrap", result.z, result.p, result.ci,
                       effect=(result.diff, result.se**2) if spec.summary else None)

    def scale(self, metric: str) -> str | None:
        return f"Δ{metric}"

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        """The task's own statistic on the rows drawn (each repeated as often as drawn), one call per replicate; a
        metric read back from a run manifest has no statistic: none."""
        if spec.statistic is None:
            return None
        return np.array([spec.statistic(items.iloc[np.repeat(np.arange(len(items)), row)])
                         for row in weights.astype(int)])

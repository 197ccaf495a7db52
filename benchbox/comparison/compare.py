"""Compare encoders with confidence intervals and significance tests (docs/protocols.md#statistics): ``benchbox compare``.

Sources are run folders, encoder names or trained-model folders (evaluated on demand through the embedding
cache and saved as runs, or given a matching run already under the runs folder, :mod:`benchbox.reuse`) or
published comparators (``paper:merkx2019/...``, :mod:`benchbox.data.comparators`), each optionally labelled
``LABEL=SOURCE`` (:mod:`benchbox.labels`). Every source is opened or loaded before anything is evaluated.
Every pair of sources is compared on every task × subset × metric both have, paired item by item on the
task's ``item_keys`` — ``(subset, item)`` for pair and classification items, ``(subset, direction, query)`` for
retrieval queries. The test is the one the task's :class:`~benchbox.task.MetricSpec` of that metric declares
(``test``; the direction of "better" is its ``higher_is_better``, the summary units its ``summary`` metrics).
The metadata comes from the installed task of that name, else from what the run recorded of it (so runs of a
task that is no longer installed still compare), else — runs written before metadata was recorded — from
:func:`legacy_tests`, which reads today's conventions off the per-item columns:

- correlations (items with ``gold`` and ``score``): per subset, Pearson/Spearman by Williams' t (default)
  or Steiger's Z, difference interval by Zou (2007) (Spearman: the same on ranks) — tests that assume
  independent pairs. STS reuses sentences (a sentence in several pairs, e.g. most sentence slots of
  SMTeuroparl), which makes those pairs dependent and Williams' t liberal; so by default
  (``item_dependence="sentence-groups"``) a subset whose pairs share a sentence (items with ``sentence1`` /
  ``sentence2``) is tested by the delete-a-group jackknife over its sentence groups, the connected components
  of pairs linked by a shared sentence (:func:`benchbox.stats.grouped_jackknife_test`: t on G − 1 df, the
  jackknife interval of the difference); a subset of independent pairs keeps Williams/Steiger and Zou, and
  ``item_dependence="independent"`` keeps them everywhere (the published reference); per-year aggregates
  (subset ``all``: ``*_mean``, ``*_wmean``, ``*_pooled``) by a paired bootstrap stratified by subset; ``mse``
  by a paired bootstrap;
- ranks (items with ``direction`` and ``rank``): R@K by McNemar's exact test on hit@K (interval: paired
  bootstrap of the recall difference), median and mean rank by Wilcoxon's signed-rank test (interval: paired
  bootstrap of the median/mean, folds as strata — the median is the lower median, not VSE++'s floor);
- classification (items with ``correct``): accuracy by McNemar's exact test (interval: paired bootstrap);
- means of per-item values (items with ``metric`` and ``value``, e.g. the per-image E_intra / E_inter of the
  structure tasks): the metric of that name by a paired bootstrap of the mean difference (not a summary unit);
- a task's own statistic (``test="bootstrap"``, e.g. a plugin's AUC, or the MSE of the relatedness tasks): a
  paired bootstrap of statistic(rows of A) − statistic(rows of B) (:func:`benchbox.stats.paired_bootstrap_rows`);
- no per-item scores on one side (published numbers): Pearson rows by the worst case over the unknown
  r(A, B) (:func:`benchbox.stats.unknown_r_ab_test`), flagged ``approximate``.

The ``test`` column names the test: ``williams``, ``steiger``, ``jackknife (sentence groups)`` (statistic = t
on G − 1 df), ``bootstrap``, ``bootstrap (strata)``
(``statistic`` = difference / bootstrap SE), ``mcnemar`` (statistic = the smaller discordant count),
``wilcoxon``, ``steiger-worst-case``. Rows without a paired test (e.g. ``rsum``, dev scores, F1) are left out. p-values are adjusted over all rows
of all pairs (``family="all"``, the default: the family-wise error of the whole comparison) or of each pair
(``family="pair"``) (Holm 1979; Benjamini & Hochberg 1995); the verdict uses the chosen correction at 5%.
With ``baseline``, every other model is compared with the baseline only (A = the model, B = the baseline).

Summary rows also carry their difference on a common scale (``effect``, ``effect_var``: Fisher-z difference
for Pearson rows, with the jackknife variance where the row was tested by the jackknife; difference of paired
proportions for accuracy and R@10) and the cluster of rows whose items they share (``cluster``): rows whose
items share a normalised sentence, directly or through other rows, get one label computed from the items
(:func:`row_clusters`, :func:`benchbox.stats.pooling.sentence_clusters`; e.g. STS-B test with the STS12–16 subsets its
sentences come from), the retrieval directions of one task one label (:func:`benchbox.stats.pooling.row_cluster`),
any other row its own: the inputs of the claim-level statistics
(:mod:`benchbox.comparison.claims`). Two runs whose tasks recorded different protocol switches (the ``protocol_key`` of
the task's options: e.g. ``--text raw`` vs ``senteval``, the STS-B label encoding), or whose tasks read a data
file with different contents (the sha256 each run recorded), are refused, or with ``allow_protocol_mismatch``
compared and the mismatch recorded.

Summary rows (Merkx & Frank 2019 count them as their 26 "tasks"): one per subset of a correlation task with
its Pearson r (24 STS subsets + STS-B + SICK-R = the paper's 26 semantic tasks; year aggregates excluded), one
per retrieval direction with R@10, one per classification subset with accuracy. The summary line of a pair
counts them, and the compact compare table shows them (the others with ``--wide``).

Seed variance: runs of one configuration (same encoder name, configuration and evaluation options except
seeds, different fingerprints) get mean ± sd across seeds in :attr:`Comparison.seeds`, beside the
resampling intervals of the single runs.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from benchbox import stats
from benchbox.stats.pooling import METHODS as POOLING_METHODS, row_cluster, sentence_clusters
from benchbox.storage.atomic import atomic_path
from benchbox.comparison.claims import ALPHA, claims, headline
from benchbox.errors import BenchboxError
from benchbox.reuse import EMBEDDED_PREFIX
from benchbox.comparison.sources import Source, is_run_collection, not_seeds, origin, resolve_sources, seed_groups
from benchbox.task import TESTS, MetricSpec, TaskOptions, protocol_switches, resolve_tasks, task_class

COLUMNS = ["task", "subset", "metric", "model_a", "model_b", "value_a", "ci_low_a", "ci_high_a", "value_b",
           "ci_low_b", "ci_high_b", "diff", "diff_ci_low", "diff_ci_high", "test", "statistic", "p", "p_holm",
           "p_bh", "verdict", "approximate", "unit", "effect", "effect_var", "cluster"]
SEED_COLUMNS = ["model", "task", "subset", "metric", "n_seeds", "mean", "sd", "ci_low_mean", "ci_high_mean", "runs"]
VERDICTS = ("better", "worse", "no significant difference")
CORRELATION_TESTS = {"williams": stats.williams_test, "steiger": stats.steiger_test}
#: the families a correction may run over, as the report states them
FAMILIES = {"all": "every row of every pair compared", "pair": "the rows of each pair of models apart"}
#: how the per-subset correlation rows treat pairs that share a sentence: ``sentence-groups`` (the grouped
#: jackknife when some pairs share one) or ``independent`` (Williams/Steiger on every row, the reference)
ITEM_DEPENDENCE = ("sentence-groups", "independent")
#: the ``test`` of a correlation row tested by the delete-a-group jackknife over sentence groups
JACKKNIFE = "jackknife (sentence groups)"
#: per-item columns holding the sentences of an item, for sentence groups and row clusters
TEXT_COLUMNS = ("sentence1", "sentence2", "sentence")


@dataclass(frozen=True)
class TaskTests:
    """What compare needs to know of a task: its metric specs, the columns that pair items, the protocol keys
    that must agree."""

    metrics: dict[str, MetricSpec]
    item_keys: tuple[str, ...]
    switches: tuple[str, ...]


def _mse(rows: pd.DataFrame) -> float:
    return float(np.mean((rows["score"].to_numpy(float) - rows["gold"].to_numpy(float)) ** 2))


def legacy_tests(items: pd.DataFrame | None) -> TaskTests:
    """The tests of a task that is not installed, from a run that recorded no metadata (written before task
    metadata existed): read off the per-item columns as benchbox did then — ``direction``/``query``/``rank``:
    retrieval ranks; ``gold``/``score``/``item``: correlations (and ``mse``); ``correct``/``item``: accuracy;
    ``metric``/``value``/``item``: means of per-item values. No items: Pearson rows only (approximate test)."""
    columns = set(items.columns) if items is not None else set()
    keys: tuple[str, ...] = ("subset", "item")
    switches = ("text", "labels", "split", "scheme", "medr", "ties", "features", "dataset", "folds")
    specs: list[MetricSpec] = []
    if items is None or items.empty:
        specs = [MetricSpec("pearson", "correlation", unit="r", scale=100, summary=True)]
    elif {"direction", "query", "rank"} <= columns:
        keys = ("subset", "direction", "query")
        specs = [MetricSpec(m, "ranks", unit="%", summary=m == "r10") for m in ("r1", "r5", "r10")]
        specs += [MetricSpec(m, "ranks", higher_is_better=False, unit="rank") for m in ("medr", "meanr")]
    elif {"gold", "score", "item"} <= columns:
        specs = [MetricSpec(m, "correlation", unit="r", scale=100, summary=m == "pearson") for m in ("pearson", "spearman")]
        specs += [MetricSpec(f"{m}_{a}", "correlation", unit="r", scale=100)
                  for m in ("pearson", "spearman") for a in stats.AGGREGATES]
        specs.append(MetricSpec("mse", "bootstrap", higher_is_better=False, unit="mse", statistic=_mse))
    elif {"correct", "item"} <= columns:
        specs = [MetricSpec("accuracy", "accuracy", unit="%", summary=True)]
    elif {"metric", "value", "item"} <= columns:
        keys = ("subset", "metric", "item")
        specs = [MetricSpec(m, "mean", higher_is_better=m != "e_inter") for m in dict.fromkeys(items["metric"])]
    else:
        raise BenchboxError(f"per-item scores with columns {sorted(columns)} match no known convention")
    return TaskTests({m.name: m for m in specs}, keys, switches)


def task_tests(task: str, a: Source, b: Source) -> TaskTests:
    """The tests of ``task``: from the installed task, else the metadata a run recorded, else
    :func:`legacy_tests`."""
    installed = task_class(task)
    if installed is not None:
        return TaskTests({m.name: m for m in installed.metrics}, tuple(installed.item_keys),
                         tuple(protocol_switches(installed)))
    recorded = a.recorded.get(task) or b.recorded.get(task)
    if recorded and isinstance(recorded.get("metrics"), list):
        specs = [MetricSpec.from_plain(m) for m in recorded["metrics"] if isinstance(m, dict) and "name" in m]
        return TaskTests({m.name: m for m in specs}, tuple(recorded.get("item_keys") or ("subset", "item")),
                         tuple(recorded.get("protocol_switches") or ()))
    items = a.items(task)
    return legacy_tests(items if items is not None and not items.empty else b.items(task))


def _texts(frame: pd.DataFrame) -> list[pd.Series]:
    """The sentence columns of per-item rows (:data:`TEXT_COLUMNS`), unsuffixed or, in joined rows, one side's."""
    found = []
    for column in TEXT_COLUMNS:
        name = next((c for c in (column, f"{column}_a", f"{column}_b") if c in frame.columns), None)
        if name is not None:
            found.append(frame[name])
    return found


def row_clusters(items: dict[str, pd.DataFrame | None],
                 item_keys: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], str]:
    """Cluster labels of the (task, subset) rows whose items carry sentences (:data:`TEXT_COLUMNS`): rows that
    share a normalised sentence, directly or through other rows, get one label
    (:func:`benchbox.stats.pooling.sentence_clusters`).
    ``items``: task → per-item rows (either run's: both scored the same items); tasks whose items have no
    sentences, and retrieval tasks (keyed by ``direction``, one cluster per task already), are left out."""
    texts: dict[tuple[str, str], list[Any]] = {}
    for task, frame in items.items():
        if frame is None or frame.empty or "subset" not in frame.columns or "direction" in item_keys.get(task, ()):
            continue
        if not _texts(frame):
            continue
        for subset, part in frame.groupby(frame["subset"].astype(str), sort=False):
            texts[(task, subset)] = [t for column in _texts(part) for t in column.tolist()]
    return sentence_clusters(texts)


def _pair_items(a: Source, ia: pd.DataFrame, b: Source, ib: pd.DataFrame, keys: list[str], task: str) -> pd.DataFrame:
    """Per-item rows of two runs joined on their keys (never by position): a key column or a key missing from
    either run, a key twice in one run, or different gold scores for one key is an error that names the runs."""
    for source, items in ((a, ia), (b, ib)):
        where = source.path or source.label
        lacking = [k for k in keys if k not in items.columns]
        if lacking:
            raise BenchboxError(f"{where}: the per-item file of {task} lacks the key column(s) {', '.join(lacking)}; "
                                "restore the file or re-run the evaluation")
        twice = items.duplicated(keys, keep=False)
        if twice.any():
            first = items.loc[twice, keys].iloc[0].tolist()
            raise BenchboxError(f"{where}: the per-item file of {task} holds {int(twice.sum())} rows with a repeated "
                                f"key ({', '.join(keys)} = {first}); restore the file or re-run the evaluation")
    merged = ia.merge(ib, on=keys, suffixes=("_a", "_b"), validate="one_to_one")
    if not (len(merged) == len(ia) == len(ib)):
        raise BenchboxError(f"{task}: {a.path or a.label} and {b.path or b.label} scored different items "
                            f"({len(ia)} vs {len(ib)}, {len(merged)} shared): were they evaluated on the same data "
                            "and protocol?")
    if "gold_a" in merged and not np.allclose(merged["gold_a"], merged["gold_b"]):
        raise BenchboxError(f"{task}: {a.path or a.label} and {b.path or b.label} have different gold scores for "
                            "the same items")
    return merged


@dataclass
class _Pair:
    a: Source
    b: Source
    test: str
    n_boot: int
    seed: int
    item_dependence: str = "sentence-groups"
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: (task, subset) → cluster label from shared sentences (:func:`row_clusters`), set by :meth:`compare`
    clusters: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (task, subset) → its sentence groups (:meth:`sentence_groups`), computed once for Pearson and Spearman
    groups: dict[tuple[str, str], np.ndarray | None] = field(default_factory=dict)
    #: per row: whether lower values are better (the row's MetricSpec)
    lower: list[bool] = field(default_factory=list)

    def add(self, task: str, subset: str, spec: MetricSpec, test: str, statistic: float, p: float,
            diff_ci: tuple[float, float], *, approximate: bool = False,
            effect: tuple[float, float] | None = None, kind: str = "correlation") -> None:
        metric = spec.name
        ra, rb = self.a.value(task, subset, metric), self.b.value(task, subset, metric)
        self.rows.append({
            "task": task, "subset": subset, "metric": metric, "model_a": self.a.label, "model_b": self.b.label,
            "value_a": float(ra["value"]), "ci_low_a": float(ra["ci_low"]), "ci_high_a": float(ra["ci_high"]),
            "value_b": float(rb["value"]), "ci_low_b": float(rb["ci_low"]), "ci_high_b": float(rb["ci_high"]),
            "diff": float(ra["value"]) - float(rb["value"]), "diff_ci_low": float(diff_ci[0]),
            "diff_ci_high": float(diff_ci[1]), "test": test, "statistic": float(statistic), "p": float(p),
            "approximate": approximate, "unit": spec.summary, "effect": float(effect[0]) if effect else math.nan,
            "effect_var": float(effect[1]) if effect else math.nan,
            "cluster": self.cluster(task, subset, kind),
        })
        self.lower.append(not spec.higher_is_better)

    def cluster(self, task: str, subset: str, kind: str) -> str:
        """The row's cluster: shared sentences (:attr:`clusters`), else :func:`benchbox.stats.pooling.row_cluster`."""
        if kind != "ranks" and (task, str(subset)) in self.clusters:
            return self.clusters[(task, str(subset))]
        return row_cluster(task, subset, kind)

    def bootstrap(self, gold, score_a, score_b, **kwargs: Any) -> stats.BootstrapResult:
        return stats.paired_bootstrap(gold, score_a, score_b, n_boot=self.n_boot, seed=self.seed, **kwargs)

    def shared_rows(self, task: str) -> list[tuple[str, str]]:
        ma = self.a.metrics[self.a.metrics["task"] == task]
        mb = self.b.metrics[self.b.metrics["task"] == task]
        keys_b = set(zip(mb["subset"].astype(str), mb["metric"]))
        return [k for k in zip(ma["subset"].astype(str), ma["metric"]) if k in keys_b]

    def sentence_groups(self, task: str, subset: str, part: pd.DataFrame) -> np.ndarray | None:
        """Group ids of the subset's pairs (connected components of shared sentences,
        :func:`benchbox.stats.sentence_groups`), or None when items are taken as independent: with
        ``item_dependence="independent"``, without sentence text, or when no two pairs share a sentence."""
        key = (task, subset)
        if key not in self.groups:
            texts = _texts(part)
            groups = None if self.item_dependence == "independent" or not texts else stats.sentence_groups(*texts)
            self.groups[key] = groups if groups is not None and len(groups) and groups.max() + 1 < len(groups) else None
        return self.groups[key]

    def correlation(self, task: str, subset: str, spec: MetricSpec, merged: pd.DataFrame) -> None:
        """``pearson``/``spearman`` per subset; ``<method>_<aggregate>`` on subset ``all`` by a paired bootstrap
        stratified by subset.

        A subset whose pairs share sentences (``sentence1``/``sentence2``: some sentence in two pairs) is tested
        by the delete-a-group jackknife over its sentence groups (:func:`benchbox.stats.grouped_jackknife_test`):
        t on G − 1 degrees of freedom, the jackknife interval of the difference, and the jackknife variance of
        the Fisher-z difference as ``effect_var``. Spearman: the subset is ranked once, then the same jackknife
        runs on the ranks (the left-out groups are not re-ranked). Independent pairs (every group one pair), no
        sentence text, or ``item_dependence="independent"``: Williams' t or Steiger's Z with Zou's interval."""
        method, _, aggregate = spec.name.partition("_")
        if method not in ("pearson", "spearman") or (aggregate and aggregate not in stats.AGGREGATES):
            raise BenchboxError(f"{task}: metric {spec.name!r} is declared test='correlation', which tests pearson, "
                                f"spearman and their {', '.join(stats.AGGREGATES)} aggregates only")
        if not aggregate:
            part = merged[merged["subset"] == subset]
            if part.empty:
                return
            g, a, b = (part[c].to_numpy(float) for c in ("gold_a", "score_a", "score_b"))
            if method == "spearman":
                g, a, b = rankdata(g), rankdata(a), rankdata(b)
            groups = self.sentence_groups(task, subset, part)
            if groups is not None:
                jk = stats.grouped_jackknife_test(g, a, b, groups)
                effect = (jk.diff_z, jk.var_z) if spec.summary and method == "pearson" else None
                self.add(task, subset, spec, JACKKNIFE, jk.t, jk.p, jk.ci, effect=effect)
                return
            r_ga, r_gb, r_ab = (float(np.clip(np.nan_to_num(np.corrcoef(x, y)[0, 1]), -1, 1))
                                for x, y in ((g, a), (g, b), (a, b)))
            statistic, p = CORRELATION_TESTS[self.test](r_ga, r_gb, r_ab, len(g))
            effect = stats.fisher_z_difference(r_ga, r_gb, r_ab, len(g)) if spec.summary and method == "pearson" else None
            self.add(task, subset, spec, self.test, statistic, p, stats.zou_ci(r_ga, r_gb, r_ab, len(g)), effect=effect)
        elif subset == "all":
            result = self.bootstrap(merged["gold_a"], merged["score_a"], merged["score_b"],
                                    strata=merged["subset"], statistic=method, aggregate=aggregate)
            self.add(task, subset, spec, "bootstrap (strata)", result.z, result.p, result.ci)

    def ranks(self, task: str, subset: str, spec: MetricSpec, merged: pd.DataFrame) -> None:
        """``r<K>`` by McNemar on hit@K, ``medr``/``meanr`` by Wilcoxon (the subset is the direction)."""
        part = merged[merged["direction"] == subset]
        if part.empty:
            return
        ra, rb, folds = part["rank_a"].to_numpy(float), part["rank_b"].to_numpy(float), part["subset"]
        metric = spec.name
        if metric.startswith("r") and metric[1:].isdigit():
            k = int(metric[1:])
            statistic, p = stats.mcnemar_test(ra <= k, rb <= k)
            result = self.bootstrap(None, 100.0 * (ra <= k), 100.0 * (rb <= k), strata=folds,
                                    statistic=stats.weighted_mean)
            effect = stats.paired_proportion_difference(ra <= k, rb <= k) if spec.summary else None
            self.add(task, subset, spec, "mcnemar", statistic, p, result.ci, kind="ranks", effect=effect)
        elif metric in ("medr", "meanr"):
            statistic, p = stats.wilcoxon_test(ra, rb)
            kind = stats.weighted_median if metric == "medr" else stats.weighted_mean
            result = self.bootstrap(None, ra, rb, strata=folds, statistic=kind)
            self.add(task, subset, spec, "wilcoxon", statistic, p, result.ci, kind="ranks")
        else:
            raise BenchboxError(f"{task}: metric {metric!r} is declared test='ranks', which tests r<K>, medr and "
                                "meanr only")

    def accuracy(self, task: str, subset: str, spec: MetricSpec, merged: pd.DataFrame) -> None:
        """McNemar's exact test on ``correct``; interval: paired bootstrap of the accuracy difference."""
        if subset not in set(merged["subset"]):
            return  # e.g. the dev accuracy of a k-fold task: no per-item predictions to pair
        part = merged[merged["subset"] == subset]
        ca, cb = part["correct_a"].to_numpy(bool), part["correct_b"].to_numpy(bool)
        value = float(self.a.value(task, subset, spec.name)["value"])
        scale = 100.0 if value > 1.0 else 1.0
        statistic, p = stats.mcnemar_test(ca, cb)
        result = self.bootstrap(None, scale * ca, scale * cb, statistic=stats.weighted_mean)
        effect = stats.paired_proportion_difference(ca, cb) if spec.summary else None
        self.add(task, subset, spec, "mcnemar", statistic, p, result.ci, kind="classification", effect=effect)

    def mean(self, task: str, subset: str, spec: MetricSpec, merged: pd.DataFrame) -> None:
        """A paired bootstrap of the mean of the per-item values of this metric."""
        part = merged[(merged["subset"] == subset) & (merged["metric"] == spec.name)]
        if not part.empty:
            result = self.bootstrap(None, part["value_a"], part["value_b"], statistic=stats.weighted_mean)
            self.add(task, subset, spec, "bootstrap", result.z, result.p, result.ci)

    def bootstrap_statistic(self, task: str, subset: str, spec: MetricSpec, merged: pd.DataFrame) -> None:
        """A paired bootstrap of the task's own statistic over the subset's per-item rows. A metric read back
        from a run manifest has no statistic: not tested."""
        part = merged[merged["subset"] == subset]
        if part.empty or spec.statistic is None:
            return
        result = stats.paired_bootstrap_rows(_side(part, "_a"), _side(part, "_b"), spec.statistic,
                                             n_boot=self.n_boot, seed=self.seed)
        self.add(task, subset, spec, "bootstrap", result.z, result.p, result.ci)

    def approximate(self, task: str, tests: TaskTests) -> None:
        """No per-item scores on one side: per-subset Pearson rows by the worst case over the unknown r(A, B)."""
        for subset, metric in self.shared_rows(task):
            spec = tests.metrics.get(metric)
            if spec is None or spec.test != "correlation" or metric != "pearson":
                continue
            ra, rb = self.a.value(task, subset, metric), self.b.value(task, subset, metric)
            if int(ra["n"]) != int(rb["n"]) or int(ra["n"]) <= 3:
                continue
            z, p, low, high = stats.unknown_r_ab_test(float(ra["value"]), float(rb["value"]), int(ra["n"]))
            self.add(task, subset, spec, "steiger-worst-case", z, p, (low, high), approximate=True)

    def compare(self, tasks: Iterable[str]) -> tuple[pd.DataFrame, pd.Series]:
        """The rows of every tested metric of ``tasks``, and per row whether lower values are better. The rows'
        clusters come first, from the sentences of either run's items (a published comparator has none)."""
        tasks = list(tasks)
        found = {task: (task_tests(task, self.a, self.b), self.a.items(task), self.b.items(task)) for task in tasks}
        self.clusters = row_clusters(
            {task: ia if ia is not None and not ia.empty and _texts(ia) else ib for task, (_, ia, ib) in found.items()},
            {task: tests.item_keys for task, (tests, _, _) in found.items()})
        for task in tasks:
            tests, ia, ib = found[task]
            if ia is None or ib is None or ia.empty or ib.empty:
                self.approximate(task, tests)
                continue
            merged = _pair_items(self.a, ia, self.b, ib, list(tests.item_keys), task)
            for subset, metric in self.shared_rows(task):
                spec = tests.metrics.get(metric)
                if spec is None or spec.test is None:
                    continue
                lacking = [c for c in TESTS[spec.test].columns if c not in ia.columns or c not in ib.columns]
                if lacking:
                    raise BenchboxError(f"{task}: metric {metric} is tested by {spec.test!r}, which needs the per-item "
                                        f"column(s) {', '.join(lacking)}; the runs' per-item files lack them")
                method = "bootstrap_statistic" if spec.test == "bootstrap" else spec.test
                getattr(self, method)(task, subset, spec, merged)
        return pd.DataFrame(self.rows, columns=COLUMNS), pd.Series(self.lower, dtype=bool)


def _side(merged: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """One run's per-item rows out of the joined rows: its suffixed columns unsuffixed, plus the shared ones."""
    other = "_b" if suffix == "_a" else "_a"
    columns = {c: c.removesuffix(suffix) for c in merged.columns if not c.endswith(other)}
    return merged[list(columns)].rename(columns=columns).reset_index(drop=True)


def _verdicts(table: pd.DataFrame, correction: str, lower: pd.Series) -> pd.Series:
    """better / worse / no significant difference at 5%; ``lower``: per row, whether lower values are better."""
    p = table["p_holm" if correction == "holm" else "p_bh"]
    lower = lower.to_numpy(bool)
    a_better = np.where(lower, table["diff"] < 0, table["diff"] > 0)
    verdict = np.where(a_better, "better", "worse")
    return pd.Series(np.where(p < ALPHA, verdict, VERDICTS[2]), index=table.index)


def seed_variance(sources: list[Source]) -> pd.DataFrame:
    """Mean ± sd across the runs of each configuration that has at least two distinct fingerprints."""
    frames = []
    for model, members in seed_groups(sources).items():
        both = pd.concat([m.metrics.assign(run=m.label) for m in members], ignore_index=True)
        both["subset"] = both["subset"].astype(str)
        agg = both.groupby(["task", "subset", "metric"], sort=False).agg(
            n_seeds=("value", "size"), mean=("value", "mean"), sd=("value", "std"),
            ci_low_mean=("ci_low", "mean"), ci_high_mean=("ci_high", "mean"),
            runs=("run", lambda r: ", ".join(r))).reset_index()
        frames.append(agg.assign(model=model))
    return pd.concat(frames, ignore_index=True)[SEED_COLUMNS] if frames else pd.DataFrame(columns=SEED_COLUMNS)


@dataclass
class Comparison:
    """All pairwise comparisons: :attr:`table` (one row per pair × task × subset × metric, see ``COLUMNS``),
    :attr:`seeds` (seed variance per configuration), the model labels and the correction the verdicts use."""

    table: pd.DataFrame
    models: list[str]
    correction: str = "holm"
    seeds: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SEED_COLUMNS))
    #: one row per claim (model × model × kind of row), see :data:`benchbox.comparison.claims.CLAIM_COLUMNS`
    claims: pd.DataFrame | None = None
    family: str = "all"
    #: protocol differences compared anyway (``allow_protocol_mismatch``), one line each
    protocol_mismatches: list[str] = field(default_factory=list)
    #: the per-row effects each claim pooled and the per-seed scores (:func:`benchbox.comparison.claims.claims`)
    claim_rows: pd.DataFrame | None = None
    claim_seeds: pd.DataFrame | None = None
    #: why a pair has no claim on a kind of row it has (published numbers: approximate rows), one line each
    claim_notes: list[str] = field(default_factory=list)
    #: how correlation rows treat pairs that share a sentence (:data:`ITEM_DEPENDENCE`)
    item_dependence: str = "sentence-groups"

    def headlines(self) -> list[str]:
        """One sentence per claim (:func:`benchbox.comparison.claims.headline`)."""
        return [] if self.claims is None else [headline(row) for _, row in self.claims.iterrows()]

    def pairs(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys(zip(self.table["model_a"], self.table["model_b"])))

    def summary_lines(self) -> list[str]:
        """One line per pair: better / worse / no significant difference over the summary units."""
        lines = []
        for a, b in self.pairs():
            rows = self.table[(self.table["model_a"] == a) & (self.table["model_b"] == b) & self.table["unit"]]
            counts = rows["verdict"].value_counts()
            note = " (approximate: published numbers, no per-item scores)" if rows["approximate"].any() else ""
            lines.append(
                f"{a} significantly better than {b} on {counts.get('better', 0)} of {len(rows)} summary rows, "
                f"worse on {counts.get('worse', 0)}, no significant difference on "
                f"{counts.get(VERDICTS[2], 0)} ({self.correction}-corrected, 5%){note}"
            )
        return lines

    def to_csv(self, path: str | os.PathLike) -> None:
        """The comparison table as CSV at ``path`` (claims beside it, :func:`claims_csv_path`), or the table alone
        on stdout for ``-``."""
        if os.fspath(path) == "-":
            self.table.to_csv(sys.stdout, index=False)
            return
        with atomic_path(path) as tmp:
            self.table.to_csv(tmp, index=False)
        if self.claims is not None and not self.claims.empty:
            with atomic_path(claims_csv_path(path)) as tmp:
                self.claims.to_csv(tmp, index=False)

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the comparison as strict JSON (docs/schema.md, "Compare JSON") to ``path``, or to stdout for ``-``."""
        from benchbox.storage.jsonio import SCHEMA_VERSION, frame_records, write_json

        payload = {"schema_version": SCHEMA_VERSION, "models": self.models, "correction": self.correction,
                   "family": self.family, "item_dependence": self.item_dependence, "alpha": ALPHA,
                   "headlines": self.headlines(), "claim_notes": self.claim_notes,
                   "claims": frame_records(self.claims), "protocol_mismatches": self.protocol_mismatches,
                   "claim_rows": frame_records(self.claim_rows), "claim_seeds": frame_records(self.claim_seeds),
                   "summary": self.summary_lines(), "comparisons": frame_records(self.table),
                   "seeds": frame_records(self.seeds)}
        write_json(path, payload)


def claims_csv_path(path: str | os.PathLike) -> Path:
    """Where :meth:`Comparison.to_csv` writes the claims beside the table: ``cmp.csv`` → ``cmp.claims.csv``."""
    path = Path(path)
    return path.with_name(f"{path.stem}.claims{path.suffix or '.csv'}")


def _pairs(resolved: list[Source], baseline: str | None) -> list[tuple[Source, Source]]:
    """Every pair in order, or with ``baseline`` (a label, a run folder or an encoder name) (model, baseline)."""
    if baseline is None:
        return list(itertools.combinations(resolved, 2))
    chosen = [s for s in resolved if baseline in (s.label, s.name, str(s.path) if s.path else None)
              or (s.path is not None and Path(baseline).resolve() == s.path.resolve())]
    if not chosen:
        raise BenchboxError(f"--baseline {baseline!r} names none of the compared models: "
                            f"{', '.join(s.label for s in resolved)}")
    others = [s for s in resolved if s not in chosen]
    if not others:
        raise BenchboxError(f"--baseline {baseline!r} names every compared model: nothing to compare it with")
    return [(a, b) for a in others for b in chosen]


def protocol_mismatches(a: Source, b: Source, tasks: list[str]) -> list[str]:
    """One line per task where the two runs recorded different protocol switches (the protocol keys of the
    task's options, :func:`task_tests`), and one where they read a data file with different contents."""
    lines = []
    for task in tasks:
        pa, pb = a.protocols.get(task), b.protocols.get(task)
        if pa is None or pb is None:
            continue
        switches = task_tests(task, a, b).switches
        pa, pb = ({k: v for k, v in p.items() if k in switches} for p in (pa, pb))
        differ = sorted(k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k))
        if differ:
            lines.append(f"{task}: {a.label} vs {b.label} differ in "
                         + ", ".join(f"{k} ({pa.get(k)!r} vs {pb.get(k)!r})" for k in differ))
        files = data_mismatches(a.checksums.get(task, {}), b.checksums.get(task, {}))
        if files:
            lines.append(f"{task}: {a.label} vs {b.label} read different data: {', '.join(files)} "
                         "(its sha256 differs)")
    return lines


def data_mismatches(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """The data files both runs read (the embedded copy counts as the file it copies) with different sha256."""
    a, b = ({label.removeprefix(EMBEDDED_PREFIX): sha for label, sha in x.items()} for x in (a, b))
    return sorted(label for label in set(a) & set(b) if a[label] != b[label])


def _check_settings(test: str, correction: str, family: str, pooling: str, item_dependence: str) -> None:
    if test not in CORRELATION_TESTS:
        raise BenchboxError(f"unknown correlation test {test!r}: use williams or steiger")
    if correction not in ("holm", "bh"):
        raise BenchboxError(f"unknown correction {correction!r}: use holm or bh")
    if family not in FAMILIES:
        raise BenchboxError(f"unknown --family {family!r}: use all (every row of every pair) or pair")
    if pooling not in POOLING_METHODS:
        raise BenchboxError(f"unknown --pooling {pooling!r}: use dl (DerSimonian-Laird) or pm (Paule-Mandel)")
    if item_dependence not in ITEM_DEPENDENCE:
        raise BenchboxError(f"unknown --item-dependence {item_dependence!r}: use sentence-groups (pairs sharing a "
                            "sentence tested together) or independent (Williams/Steiger on every row)")


def compare_sources(
    resolved: list[Source],
    tasks: list[str] | None = None,
    *,
    test: str = "williams",
    correction: str = "holm",
    n_boot: int = 1000,
    seed: int = 1111,
    family: str = "all",
    baseline: str | None = None,
    allow_protocol_mismatch: bool = False,
    pooling: str = "dl",
    seeds: dict[str, list[str]] | None = None,
    item_dependence: str = "sentence-groups",
) -> Comparison:
    """Compare every pair of ``resolved`` sources (:func:`benchbox.comparison.sources.resolve_sources`) on ``tasks``
    (task names; default: every task the pair shares), reading nothing but the sources. ``test``: ``williams``
    or ``steiger`` for correlations; ``correction``: ``holm`` or ``bh`` for the verdicts, over ``family``
    ``"all"`` rows of the comparison or each ``"pair"``; ``baseline``: compare every other model with it only
    (a label, a run folder or an encoder name); ``pooling``: τ² of the claims' random-effects pooling, ``"dl"``
    or ``"pm"`` (:mod:`benchbox.comparison.claims`); ``seeds``: model name → the sources (as given, or their labels) that
    are seeds of it, for runs whose recorded configurations cannot tell (e.g. trained models, whose eval runs
    record the training folder, not the training seed); ``item_dependence``: ``"sentence-groups"`` (default:
    correlation rows whose pairs share sentences by the grouped jackknife over sentence groups, the others by
    ``test``) or ``"independent"`` (every correlation row by ``test``, the reference that assumes independent
    pairs)."""
    _check_settings(test, correction, family, pooling, item_dependence)
    if len(resolved) < 2:
        raise BenchboxError("compare needs at least two runs, encoders or comparators")
    frames, lowers, mismatches = [], [], []
    for a, b in _pairs(resolved, baseline):
        shared = [t for t in dict.fromkeys(a.metrics["task"]) if t in set(b.metrics["task"])]
        chosen = [t for t in shared if tasks is None or t in tasks]
        if not chosen:
            raise BenchboxError(f"{a.label} and {b.label} share no task" + (f" among {', '.join(tasks)}" if tasks else ""))
        differ = protocol_mismatches(a, b, chosen)
        if differ and not allow_protocol_mismatch:
            raise BenchboxError(f"different protocols: {differ[0]}; evaluate both the same way, or pass "
                                "--allow-protocol-mismatch to compare them anyway (recorded)")
        mismatches += differ
        table, lower = _Pair(a, b, test, n_boot, seed, item_dependence).compare(chosen)
        lowers.append(lower)
        if family == "pair":
            table["p_holm"] = stats.adjust_pvalues(table["p"], "holm")
            table["p_bh"] = stats.adjust_pvalues(table["p"], "fdr_bh")
        frames.append(table)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    if family == "all":
        table["p_holm"] = stats.adjust_pvalues(table["p"], "holm")
        table["p_bh"] = stats.adjust_pvalues(table["p"], "fdr_bh")
    lower = pd.concat(lowers, ignore_index=True) if lowers else pd.Series([], dtype=bool)
    table["verdict"] = _verdicts(table, correction, lower)
    claim_table, claim_rows, claim_seeds, claim_notes = claims(
        table, resolved, correction=correction, family=family, pooling=pooling, seed=seed,
        declared=_declared_seeds(seeds or {}, resolved))
    return Comparison(table, [s.label for s in resolved], correction, seed_variance(resolved), claim_table, family,
                      mismatches, claim_rows, claim_seeds, claim_notes, item_dependence)


def _declared_seeds(seeds: dict[str, list[str]], resolved: list[Source]) -> dict[str, list[str]]:
    """``--seeds`` groups as labels: each spec names a source by what named it, its run folder or its label."""

    def source(spec: str) -> Source | None:
        named = origin(spec)
        return next((s for s in resolved
                     if named in (s.origin, str(s.path.resolve()) if s.path else None) or spec == s.label), None)

    declared = {}
    for model, specs in seeds.items():
        found = {spec: source(spec) for spec in specs}
        unknown = [spec for spec, s in found.items() if s is None]
        if unknown:
            raise BenchboxError(f"--seeds {model}: {', '.join(unknown)} is not among the compared models")
        declared[model] = [found[spec].label for spec in specs]
    return declared


def compare(
    sources: list[str],
    tasks: list[str] | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    runs_dir: str | os.PathLike = "runs",
    test: str = "williams",
    correction: str = "holm",
    n_boot: int = 1000,
    seed: int = 1111,
    options: TaskOptions | None = None,
    cache: bool = True,
    log: Callable[[str], None] = lambda message: None,
    family: str = "all",
    baseline: str | None = None,
    allow_protocol_mismatch: bool = False,
    pooling: str = "dl",
    seeds: dict[str, list[str]] | None = None,
    rerun: bool = False,
    labels: list[str | None] | None = None,
    item_dependence: str = "sentence-groups",
) -> Comparison:
    """Resolve ``sources`` (run folders or folders of runs, encoder names, ``module:attribute``, model folders,
    ``paper:...``; :func:`benchbox.comparison.sources.resolve_sources`, with ``options``, ``runs_dir``, ``rerun``,
    ``labels``) and compare them on ``tasks`` (names or groups) with :func:`compare_sources` (the other
    keywords). Settings are checked before anything is evaluated."""
    _check_settings(test, correction, family, pooling, item_dependence)
    if len(sources) < 2 and not any(is_run_collection(spec) for spec in sources):
        raise BenchboxError("compare needs at least two runs, encoders or comparators")
    names = [t.name for t in resolve_tasks(tasks)] if tasks else None
    resolved = resolve_sources(sources, names, data_dir=data_dir, runs_dir=runs_dir, options=options,
                               cache=cache, log=log, rerun=rerun, labels=labels)
    for line in not_seeds(resolved):
        log(line)
    return compare_sources(resolved, names, test=test, correction=correction, n_boot=n_boot, seed=seed,
                           family=family, baseline=baseline, allow_protocol_mismatch=allow_protocol_mismatch,
                           pooling=pooling, seeds=seeds, item_dependence=item_dependence)

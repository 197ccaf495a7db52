"""Compare encoders with confidence intervals and significance tests (docs/protocols.md#statistics): ``benchbox compare``.

Sources are run folders, encoder names or trained-model folders (evaluated on demand through the embedding
cache and saved as runs, or given a matching run already under the runs folder, :mod:`benchbox.reuse`) or
published comparators (``paper:merkx2019/...``, :mod:`benchbox.data.comparators`), each optionally labelled
``LABEL=SOURCE`` (:mod:`benchbox.labels`). Every source is opened or loaded before anything is evaluated.
Every pair of sources is compared on every task × subset × metric both have, paired item by item on the
task's ``item_keys`` (:mod:`benchbox.comparison.pairing`). The test is the one of the kind the metric's
:class:`~benchbox.task_contract.protocol.MetricSpec` declares (:mod:`benchbox.task_contract.paired_tests`: correlations by Williams' t, Steiger's Z
or the sentence-group jackknife, accuracy and recalls by McNemar, ranks by Wilcoxon, means and a task's own
statistic by a paired bootstrap); the direction of "better" is its ``higher_is_better``, the summary rows its
``summary`` metrics. What is known of a task comes from the installed task, else from what a run recorded of
it, else from the conventions read off its per-item columns (:mod:`benchbox.task_contract.metadata`). Published numbers
have no per-item scores: their Pearson rows are tested at the worst case over the unknown r(A, B), flagged
``approximate``.

The ``test`` column names the test: ``williams``, ``steiger``, ``jackknife (sentence groups)`` (statistic = t
on G − 1 df), ``bootstrap``, ``bootstrap (strata)`` (``statistic`` = difference / bootstrap SE), ``mcnemar``
(statistic = the smaller discordant count), ``wilcoxon``, ``steiger-worst-case``. Rows without a paired test
(e.g. ``rsum``, dev scores, F1) are left out. p-values are adjusted by every correction
(:mod:`benchbox.stats.corrections`: Holm 1979; Benjamini & Hochberg 1995; one column each, ``p_holm``, ``p_bh``)
over all rows of all pairs (``family="all"``, the default: the family-wise error of the whole comparison) or of
each pair (``family="pair"``); the verdict uses the chosen correction at 5%. How a comparison tests and corrects
is one :class:`~benchbox.comparison.settings.CompareSettings`. With ``baseline``, every other model
is compared with the baseline only (A = the model, B = the baseline).

Summary rows also carry their difference on their kind's common scale (``effect``, ``effect_var``: e.g. the
Fisher-z difference of a Pearson row, with the jackknife variance where the row was tested by the jackknife; the
difference of paired proportions of accuracy and R@10) and the cluster of rows whose items they share
(``cluster``: rows whose items share a normalised sentence, directly or through other rows, get one label
computed from the items, :func:`benchbox.comparison.pairing.row_clusters`; otherwise the kind's item set, e.g.
one per retrieval task): the inputs of the claim-level statistics (:mod:`benchbox.comparison.claims`). Two runs
whose tasks recorded different protocol switches (the ``protocol_key`` of the task's options: e.g. ``text=raw``
vs ``senteval``, the STS-B label encoding), or whose tasks read a data file with different contents (the sha256
each run recorded), are refused, or with ``allow_protocol_mismatch`` compared and the mismatch recorded. Runs
computed by different versions (benchbox's, a task's declared version, a plugin task's package) are compared, and
each difference named and recorded (:mod:`benchbox.comparison.versions`).

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchbox.comparison.claims import ALPHA, claims, headline, verdicts
from benchbox.comparison.on_demand import OnDemand
from benchbox.comparison.pairing import pair_items, row_clusters
from benchbox.comparison.seed_declarations import declared_seeds
from benchbox.comparison.sources import Source, is_run_collection, not_seeds, resolve_sources, seed_groups
from benchbox.comparison.versions import version_differences, version_lines
from benchbox.comparison.settings import CompareSettings
from benchbox.errors import BenchboxError
from benchbox.task_contract.paired_tests import KINDS, PairedKind, PairSettings, RowTest, sentence_columns
from benchbox.data.root import EMBEDDED_PREFIX
from benchbox.stats.corrections import CORRECTIONS
from benchbox.stats.resampling import require_bootstrap_memory
from benchbox.task_contract.protocol import MetricSpec, resolve_tasks
from benchbox.task_contract.options import TaskOptions
from benchbox.task_contract.metadata import KnownTasks, TaskMetadata, task_metadata

#: the comparison table's columns: after the raw ``p``, the p adjusted by each correction (``p_holm``, ``p_bh``)
COLUMNS = ["task", "subset", "metric", "model_a", "model_b", "value_a", "ci_low_a", "ci_high_a", "value_b",
           "ci_low_b", "ci_high_b", "diff", "diff_ci_low", "diff_ci_high", "test", "statistic", "p",
           *(c.p_column for c in CORRECTIONS.values()), "verdict", "approximate", "summary", "effect", "effect_var",
           "cluster"]
SEED_COLUMNS = ["model", "task", "subset", "metric", "n_seeds", "mean", "sd", "ci_low_mean", "ci_high_mean", "runs"]
VERDICTS = ("better", "worse", "no significant difference")


def compared_task(task: str, a: Source, b: Source) -> TaskMetadata:
    """What is known of ``task`` for comparing ``a`` with ``b`` (:func:`benchbox.task_contract.metadata.task_metadata`):
    the installed task, else what either run recorded, else the conventions of either run's per-item rows (none:
    published numbers, compared on Pearson rows only)."""

    def items() -> pd.DataFrame | None:
        found = a.items(task)
        return found if found is not None and not found.empty else b.items(task)

    return task_metadata(task, a.recorded.get(task) or b.recorded.get(task), items)


def _shared_rows(a: Source, b: Source, task: str) -> list[tuple[str, str]]:
    """The (subset, metric) rows of ``task`` both sources have, in ``a``'s order."""
    ma, mb = (s.metrics[s.metrics["task"] == task] for s in (a, b))
    keys_b = set(zip(mb["subset"].astype(str), mb["metric"]))
    return [k for k in zip(ma["subset"].astype(str), ma["metric"]) if k in keys_b]


def _row(a: Source, b: Source, task: str, subset: str, spec: MetricSpec, result: RowTest,
         cluster: str) -> dict[str, Any]:
    """One row of the comparison table: both records, the difference and its test."""
    ra, rb = a.value(task, subset, spec.name), b.value(task, subset, spec.name)
    effect = result.effect
    return {
        "task": task, "subset": subset, "metric": spec.name, "model_a": a.label, "model_b": b.label,
        "value_a": float(ra["value"]), "ci_low_a": float(ra["ci_low"]), "ci_high_a": float(ra["ci_high"]),
        "value_b": float(rb["value"]), "ci_low_b": float(rb["ci_low"]), "ci_high_b": float(rb["ci_high"]),
        "diff": float(ra["value"]) - float(rb["value"]), "diff_ci_low": float(result.ci[0]),
        "diff_ci_high": float(result.ci[1]), "test": result.test, "statistic": float(result.statistic),
        "p": float(result.p), "approximate": result.approximate, "summary": spec.summary,
        "effect": float(effect[0]) if effect else math.nan, "effect_var": float(effect[1]) if effect else math.nan,
        "cluster": cluster,
    }


def compare_pair(a: Source, b: Source, tasks: list[str], known: dict[str, TaskMetadata],
                 settings: PairSettings) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    """The rows of every tested metric of ``tasks`` between ``a`` and ``b``, per row whether lower values are
    better, and one line per metric whose kind is not installed here (its rows untested, never dropped). The
    rows' clusters come first, from the sentences of either run's items (a published comparator has none)."""
    found = {task: (a.items(task), b.items(task)) for task in tasks}
    texts = {task: ia if ia is not None and not ia.empty and sentence_columns(ia) else ib
             for task, (ia, ib) in found.items()}
    clusters = row_clusters(texts, {task for task in tasks if any(
        spec.kind in KINDS and KINDS[spec.kind].subset != "subset" for spec in known[task].metrics.values())})
    rows, lower, untested = [], [], {}
    for task in tasks:
        ia, ib = found[task]
        paired = None
        if not (ia is None or ib is None or ia.empty or ib.empty):
            paired = pair_items(a, ia, b, ib, list(known[task].item_keys), task)
            require_bootstrap_memory(settings.n_boot, len(paired), option="--test-resamples")
        for subset, metric in _shared_rows(a, b, task):
            spec = known[task].metrics.get(metric)
            if spec is None or spec.kind is None:
                continue
            kind = KINDS.get(spec.kind)
            if kind is None:
                untested.setdefault((task, metric, spec.kind), []).append(subset)
                continue
            if paired is None:
                result = kind.test_without_items(a.value(task, subset, metric), b.value(task, subset, metric), spec)
            else:
                lacking = [c for c in kind.columns if c not in ia.columns or c not in ib.columns]
                if lacking:
                    raise BenchboxError(f"{task}: metric {metric} is tested by {spec.kind!r}, which needs the per-item "
                                        f"column(s) {', '.join(lacking)}; the runs' per-item files lack them")
                result = _tested(kind, settings, task, subset, spec, paired)
            if result is not None:
                rows.append(_row(a, b, task, subset, spec, result,
                                 clusters.get((task, subset)) or kind.cluster(task, subset)))
                lower.append(not spec.higher_is_better)
    lines = [f"{task} {metric} ({', '.join(subsets)}): not tested, its kind of paired test {kind!r} is not "
             "installed here; install the plugin that declares it" for (task, metric, kind), subsets in untested.items()]
    return pd.DataFrame(rows, columns=COLUMNS), pd.Series(lower, dtype=bool), lines


def _tested(kind: PairedKind, settings: PairSettings, task: str, subset: str, spec: MetricSpec,
            paired: pd.DataFrame) -> RowTest | None:
    """``kind``'s test of one row; anything it raises (a plugin's code) is one line naming the kind and task."""
    try:
        return kind.test(settings, task, subset, spec, paired)
    except BenchboxError:
        raise
    except Exception as exc:  # a kind's own code, a plugin's included: contained as one line
        raise BenchboxError(f"{task}: the {kind.name!r} test of metric {spec.name} on subset {subset} failed: "
                            f"{type(exc).__name__}: {exc}; fix the kind, or report it to its provider") from exc


def _adjusted(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the p-values of its rows adjusted by every correction (its ``p_<name>`` columns)."""
    for correction in CORRECTIONS.values():
        table[correction.p_column] = correction.adjust(table["p"])
    return table


def _verdicts(table: pd.DataFrame, p_column: str, lower: pd.Series) -> pd.Series:
    """better / worse / no significant difference at 5% by the adjusted p of ``p_column``; ``lower``: per row,
    whether lower values are better."""
    p = table[p_column]
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


@dataclass(kw_only=True)
class Comparison:
    """All pairwise comparisons: :attr:`table` (one row per pair × task × subset × metric, see ``COLUMNS``),
    :attr:`seeds` (seed variance per configuration), the model labels and the settings it was made with."""

    table: pd.DataFrame
    models: list[str]
    #: how it tested and corrected: the correction the verdicts use, over which family, ...
    settings: CompareSettings = field(default_factory=CompareSettings)
    seeds: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SEED_COLUMNS))
    #: one row per claim (model × model × kind of row), see :data:`benchbox.comparison.claims.CLAIM_COLUMNS`
    claims: pd.DataFrame | None = None
    #: protocol differences compared anyway (``allow_protocol_mismatch``), one line each
    protocol_mismatches: list[str] = field(default_factory=list)
    #: the per-row effects each claim pooled and the per-seed scores (:func:`benchbox.comparison.claims.claims`)
    claim_rows: pd.DataFrame | None = None
    claim_seeds: pd.DataFrame | None = None
    #: why a pair has no claim on a kind of row it has (published numbers: approximate rows), one line each
    claim_notes: list[str] = field(default_factory=list)
    #: what is known of each task compared: how its metrics are tested and shown
    tasks: KnownTasks = field(default_factory=KnownTasks)
    #: the versions the runs of each pair differ in (:func:`benchbox.comparison.versions.version_differences`)
    versions: list[dict[str, Any]] = field(default_factory=list)

    def version_lines(self) -> list[str]:
        """One line per pair of models whose runs were computed by different versions."""
        return version_lines(self.versions)

    def verdicts(self) -> list[str]:
        """One plain sentence per claim, the better model first (:func:`benchbox.comparison.claims.verdict`)."""
        return verdicts(self.claims)

    def headlines(self) -> list[str]:
        """One sentence per claim (:func:`benchbox.comparison.claims.headline`)."""
        return [] if self.claims is None else [headline(row) for _, row in self.claims.iterrows()]

    def pairs(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys(zip(self.table["model_a"], self.table["model_b"])))

    def summary_lines(self) -> list[str]:
        """One line per pair: better / worse / no significant difference over the summary units."""
        lines = []
        for a, b in self.pairs():
            rows = self.table[(self.table["model_a"] == a) & (self.table["model_b"] == b) & self.table["summary"]]
            counts = rows["verdict"].value_counts()
            note = " (approximate: published numbers, no per-item scores)" if rows["approximate"].any() else ""
            lines.append(
                f"{a} significantly better than {b} on {counts.get('better', 0)} of {len(rows)} summary rows, "
                f"worse on {counts.get('worse', 0)}, no significant difference on "
                f"{counts.get(VERDICTS[2], 0)} ({self.settings.correction}-corrected, 5%){note}"
            )
        return lines


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


def protocol_mismatches(a: Source, b: Source, known: dict[str, TaskMetadata]) -> list[str]:
    """One line per task of ``known`` (what is known of each task compared, :func:`compared_task`) where the two
    runs recorded different protocol switches (the protocol keys of the task's options), and one where they read
    a data file with different contents."""
    lines = []
    for task, metadata in known.items():
        pa, pb = a.protocols.get(task), b.protocols.get(task)
        if pa is None or pb is None:
            continue
        switches = metadata.switches
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


def compare_sources(
    resolved: list[Source],
    tasks: list[str] | None = None,
    *,
    settings: CompareSettings | None = None,
    baseline: str | None = None,
    allow_protocol_mismatch: bool = False,
    seeds: dict[str, list[str]] | None = None,
) -> Comparison:
    """Compare every pair of ``resolved`` sources (:func:`benchbox.comparison.sources.resolve_sources`) on ``tasks``
    (task names; default: every task the pair shares), reading nothing but the sources. ``settings``: how it
    tests and corrects (:class:`~benchbox.comparison.settings.CompareSettings`: the test of two correlations,
    the correction of the verdicts and its family, the treatment of pairs that share a sentence, the claims'
    pooling, the resamples and seed of the bootstrap; default: every default); ``baseline``: compare every other
    model with it only (a label, a run folder or an encoder name); ``seeds``: model name → the sources (as given,
    or their labels) that are seeds of it, for runs whose recorded configurations cannot tell (e.g. a plugin
    encoder without ``seed_option``), checked before any test (:mod:`benchbox.comparison.seed_declarations`)."""
    settings = settings or CompareSettings()
    if len(resolved) < 2:
        raise BenchboxError("compare needs at least two runs, encoders or comparators")
    declared = declared_seeds(seeds or {}, resolved)  # a wrong declaration fails now, not after the tests
    frames, lowers, mismatches, versions, untested, known = [], [], [], [], [], KnownTasks()
    for a, b in _pairs(resolved, baseline):
        shared = [t for t in dict.fromkeys(a.metrics["task"]) if t in set(b.metrics["task"])]
        chosen = [t for t in shared if tasks is None or t in tasks]
        if not chosen:
            raise BenchboxError(f"{a.label} and {b.label} share no task" + (f" among {', '.join(tasks)}" if tasks else ""))
        pair_known = {task: compared_task(task, a, b) for task in chosen}
        differ = protocol_mismatches(a, b, pair_known)
        if differ and not allow_protocol_mismatch:
            raise BenchboxError(f"different protocols: {differ[0]}; evaluate both the same way, or pass "
                                "--allow-protocol-mismatch to compare them anyway (recorded)")
        mismatches += differ
        versions += version_differences(a, b, chosen)
        # the sentence groups are the pair's own: runs compared under another protocol may hold other sentences
        table, lower, lines = compare_pair(a, b, chosen, pair_known, settings.pair())
        untested += lines
        known.update({task: metadata for task, metadata in pair_known.items() if task not in known})
        lowers.append(lower)
        frames.append(_adjusted(table) if settings.family == "pair" else table)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    if table.empty:
        raise BenchboxError(_nothing_compared(resolved, tasks))
    if settings.family == "all":
        table = _adjusted(table)
    lower = pd.concat(lowers, ignore_index=True) if lowers else pd.Series([], dtype=bool)
    table["verdict"] = _verdicts(table, settings.p_column, lower)
    claim_table, claim_rows, claim_seeds, claim_notes = claims(table, resolved, known, settings=settings,
                                                               declared=declared)
    return Comparison(table=table, models=[s.label for s in resolved], settings=settings,
                      seeds=seed_variance(resolved), claims=claim_table, protocol_mismatches=mismatches,
                      claim_rows=claim_rows, claim_seeds=claim_seeds,
                      claim_notes=list(dict.fromkeys(untested)) + claim_notes, tasks=known,
                      versions=versions)


def _nothing_compared(resolved: list[Source], tasks: list[str] | None) -> str:
    """Why a comparison whose models share tasks has no row: every shared row lacks a test."""
    published = [s.label for s in resolved if s.is_reference]
    why = (f"{', '.join(published)} publish(es) numbers without per-item scores, which are tested only on a "
           "Pearson r over the same number of items (Steiger's test at the worst case)" if published
           else "no shared metric has a paired test")
    return (f"nothing to compare{' on ' + ', '.join(tasks) if tasks else ''}: the models share no testable row; "
            f"{why}; choose a task whose metrics both report (`benchbox describe TASK` lists its metrics and their tests)")


def compare(
    sources: list[str],
    tasks: list[str] | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    runs_dir: str | os.PathLike = "runs",
    settings: CompareSettings | None = None,
    options: TaskOptions | None = None,
    cache: bool = True,
    log: Callable[[str], None] = lambda message: None,
    baseline: str | None = None,
    allow_protocol_mismatch: bool = False,
    seeds: dict[str, list[str]] | None = None,
    rerun: bool = False,
    labels: list[str | None] | None = None,
    allow_data_mismatch: bool | None = None,
    published: list[Source] | None = None,
) -> Comparison:
    """Resolve ``sources`` (run folders or folders of runs, encoder names, ``module:attribute``, model folders,
    ``paper:...``; :func:`benchbox.comparison.sources.resolve_sources`, with ``options``, ``runs_dir``, ``rerun``,
    ``labels``, ``allow_data_mismatch``) and compare them on ``tasks`` (names or groups) with :func:`compare_sources` (the other
    keywords), and ``published``: published numbers not named by a spec (a comparators file,
    :func:`benchbox.comparison.sources.comparator_sources`), compared as unpaired rows. The settings were checked
    when they were made, before anything is evaluated."""
    if len(sources) + len(published or []) < 2 and not any(is_run_collection(spec) for spec in sources):
        raise BenchboxError("compare needs at least two runs, encoders or comparators")
    names = [t.name for t in resolve_tasks(tasks)] if tasks else None
    on_demand = OnDemand(data_dir, runs_dir, options or TaskOptions(), cache, rerun, allow_data_mismatch)
    resolved = resolve_sources(sources, names, on_demand=on_demand, log=log, labels=labels) + (published or [])
    for line in not_seeds(resolved):
        log(line)
    return compare_sources(resolved, names, settings=settings, baseline=baseline,
                           allow_protocol_mismatch=allow_protocol_mismatch, seeds=seeds)

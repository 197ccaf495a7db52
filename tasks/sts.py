"""STS12–16, unsupervised (docs/protocols.md#sts; SentEval ``senteval/sts.py``, Conneau & Kiela 2018).

Each pair is scored by the cosine of its two sentence embeddings (NaN → 0, as SentEval's
``np.nan_to_num(cosine(...))``); no training. Gold lines that are empty mean "not scored" and drop the pair.
Per subset: Pearson r and Spearman ρ against gold with Fisher-z 95% intervals (Spearman SE √(1.06/(n−3))),
and n. Per year (subset ``all``): ``mean`` (unweighted over subsets), ``wmean`` (weighted by n) — SentEval's
aggregates — and ``pooled`` (one correlation over all pairs of the year, as SimCSE and MTEB report).
Intervals of ``mean``/``wmean`` come from a bootstrap stratified by subset; of ``pooled``, from Fisher z.

Text: ``senteval`` (default) reads SentEval's Moses-tokenised, lower-cased files under
``senteval/downstream/STS``; ``raw`` reads the original release files under ``sts-raw/STS`` (STS16's raw
inputs carry two extra columns of source attribution, ignored here).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.stats.resampling import (
    aggregate_strata,
    percentile_interval,
    row_dots,
    stratified_counts,
    weighted_pearson,
    weighted_spearman,
)
from benchbox.stats import fisher_ci
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskGroup, TaskResult
from benchbox.task_contract.options import TaskOption, TaskOptions
from benchbox.tasks.senteval_data import SENTEVAL_BIBTEX, text_lines

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

TEXT_VARIANTS = ("senteval", "raw")
#: Pearson and Spearman per subset (Williams/Steiger; Pearson per subset is a summary unit)
CORRELATIONS = (
    MetricSpec("pearson", "correlation", unit="r", scale=100, decimals=1, summary=True, description="Pearson r vs gold"),
    MetricSpec("spearman", "correlation", unit="r", scale=100, decimals=1, description="Spearman rho vs gold"),
)
#: the per-year aggregates on subset ``all`` (paired bootstrap stratified by subset)
YEAR_AGGREGATES = tuple(
    MetricSpec(f"{method}_{aggregate}", "correlation", unit="r", scale=100, decimals=1,
               description=f"{method} {aggregate} over the year's subsets")
    for method in ("pearson", "spearman") for aggregate in ("mean", "wmean", "pooled")
)
TEXT_OPTION = TaskOption("text", str, "senteval", "STS text: senteval (tokenised, lower-cased) or raw (original files)",
                         choices=TEXT_VARIANTS, flag="text", protocol_key="text")
SEMANTIC_GROUP = "semantic similarity"
AGIRRE_BIBTEX = """@inproceedings{agirre2012semeval,
  title = {{SemEval-2012} Task 6: A Pilot on Semantic Textual Similarity},
  author = {Agirre, Eneko and Cer, Daniel and Diab, Mona and Gonzalez-Agirre, Aitor},
  booktitle = {Proceedings of *SEM 2012 / SemEval 2012},
  pages = {385--393}, year = {2012}
}
""" + SENTEVAL_BIBTEX


@dataclass(frozen=True)
class StsSubset:
    """The scored pairs of one subset, in file order."""

    name: str
    sentences1: list[str]
    sentences2: list[str]
    gold: np.ndarray
    files: tuple[Path, Path]


def read_sts_subset(name: str, input_path: Path, gold_path: Path, *, raw: bool = False) -> StsSubset:
    """Read ``STS.input`` (two tab-separated sentences per line; raw STS16: four columns) and ``STS.gs``
    (one score 0–5 per line, empty = not scored), keeping the scored pairs as SentEval's ``loadFile``."""
    lines, gold_lines = text_lines(input_path), text_lines(gold_path)
    if len(lines) != len(gold_lines):
        raise BenchboxError(
            f"{gold_path} has {len(gold_lines)} lines but {input_path} has {len(lines)}: every input line "
            "needs a gold line (an empty gold line marks an unscored pair)"
        )
    allowed = (2, 4) if raw else (2,)
    s1, s2, gold = [], [], []
    for lineno, (line, score) in enumerate(zip(lines, gold_lines), 1):
        fields = line.split("\t")
        if len(fields) not in allowed:
            raise BenchboxError(
                f"{input_path}:{lineno}: expected {' or '.join(map(str, allowed))} tab-separated columns, "
                f"found {len(fields)}"
            )
        if score.strip() == "":
            continue
        try:
            value = float(score)
        except ValueError:
            raise BenchboxError(f"{gold_path}:{lineno}: gold score {score!r} is not a number") from None
        if not (math.isfinite(value) and 0.0 <= value <= 5.0):
            raise BenchboxError(f"{gold_path}:{lineno}: gold score {value} is outside [0, 5]")
        if not fields[0].strip() or not fields[1].strip():
            raise BenchboxError(f"{input_path}:{lineno}: empty sentence in a scored pair")
        s1.append(fields[0])
        s2.append(fields[1])
        gold.append(value)
    if len(gold) < 4:
        raise BenchboxError(f"{gold_path}: {len(gold)} scored pairs; a correlation with an interval needs at least 4")
    return StsSubset(name, s1, s2, np.asarray(gold), (input_path, gold_path))


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine with SentEval's exact arithmetic: ``np.dot(u, v) / (‖u‖ ‖v‖)`` per pair in the
    embeddings' own precision (float32 for float32 embeddings), NaN (zero vectors) → 0. Computing in
    float64 instead changes which near-identical pairs tie, and so Spearman's ρ (by ~1e-5 on STS12).
    Every pair's three dot products are taken at once by :func:`~benchbox.stats.resampling.row_dots`, the BLAS
    dot routine of ``np.dot`` and ``np.linalg.norm`` (√(u·u)) per pair: the same numbers as SentEval's loop, bit
    for bit."""
    a, b = np.nan_to_num(np.asarray(a)), np.nan_to_num(np.asarray(b))
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = row_dots(a, b) / (np.sqrt(row_dots(a, a)) * np.sqrt(row_dots(b, b)))
    return np.nan_to_num(cosine.astype(np.float64))


def correlation_records(task: str, subset: str, gold: np.ndarray, score: np.ndarray) -> list[MetricRecord]:
    """Pearson and Spearman of ``score`` against ``gold`` with Fisher-z 95% intervals (NaN for a constant
    side, which the run's item checks then refuse in one line: :mod:`benchbox.task_contract.item_checks`)."""
    from scipy import stats as st

    n = len(gold)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.ConstantInputWarning)
        pearson = float(st.pearsonr(score, gold)[0])
        spearman = float(st.spearmanr(score, gold)[0])
    return [
        MetricRecord(task, subset, "pearson", pearson, *fisher_ci(pearson, n), n),
        MetricRecord(task, subset, "spearman", spearman, *fisher_ci(spearman, n, spearman=True), n),
    ]


def bootstrap_year_ci(
    subsets: list[tuple[np.ndarray, np.ndarray]], n_boot: int, seed: int, level: float = 0.95
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the per-year ``mean`` and ``wmean`` of Pearson and Spearman, resampling
    pairs with replacement within each subset (stratified bootstrap; Efron & Tibshirani 1993).
    ``n_boot=0`` skips the bootstrap: the intervals are NaN."""
    if n_boot == 0:
        return {f"{m}_{a}": (math.nan, math.nan) for m in ("pearson", "spearman") for a in ("mean", "wmean")}
    sizes = np.array([len(g) for g, _ in subsets], dtype=float)
    per_subset: dict[str, list[np.ndarray]] = {"pearson": [], "spearman": []}
    draws = stratified_counts(np.random.default_rng(seed), [len(g) for g, _ in subsets], n_boot)
    for (gold, score), w in zip(subsets, draws):
        per_subset["pearson"].append(weighted_pearson(w, score, gold))
        per_subset["spearman"].append(weighted_spearman(w, score, gold))
    intervals = {}
    for method, rows in per_subset.items():
        matrix = np.nan_to_num(np.vstack(rows))  # [subsets, n_boot]
        for agg in ("mean", "wmean"):
            intervals[f"{method}_{agg}"] = percentile_interval(aggregate_strata(matrix, sizes, agg), level)
    return intervals


class StsYear(Task):
    """One STS year: all its subsets, scored by cosine similarity."""

    year: ClassVar[int]
    subsets: ClassVar[tuple[str, ...]]
    #: the year's score (subset ``all``): Pearson r averaged over its subsets, SentEval's ``all`` ``mean``
    main_score = "pearson_mean"
    metrics = CORRELATIONS + YEAR_AGGREGATES
    item_kind = "sentence pair: gold and cosine score"
    options = (TEXT_OPTION,)
    group, order = SEMANTIC_GROUP, 100
    license = "STS 2012-2016 data: per-subset licences of the SemEval releases"
    citation = AGIRRE_BIBTEX
    reference = "SentEval sts.py (Conneau & Kiela 2018); Agirre et al. SemEval STS 2012-2016"

    def _paths(self, subset: str, text: str) -> tuple[str, str]:
        if text not in TEXT_VARIANTS:
            raise BenchboxError(f"unknown STS text variant {text!r}: use one of {', '.join(TEXT_VARIANTS)}")
        if text == "senteval":
            folder = f"senteval/downstream/STS/STS{self.year}-en-test"
            return f"{folder}/STS.input.{subset}.txt", f"{folder}/STS.gs.{subset}.txt"
        folder = f"sts-raw/STS/STS{self.year}-en-test"
        prefix = "STS2016" if self.year == 16 else "STS"
        return f"{folder}/{prefix}.input.{subset}.txt", f"{folder}/{prefix}.gs.{subset}.txt"

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        return tuple(p for subset in self.subsets for p in self._paths(subset, values["text"]))

    def load(self, ctx: EvalContext) -> list[StsSubset]:
        subsets = []
        text = ctx.option(self, "text")
        for subset in self.subsets:
            input_rel, gold_rel = self._paths(subset, text)
            subsets.append(read_sts_subset(subset, ctx.data.path(input_rel), ctx.data.path(gold_rel), raw=text == "raw"))
        return subsets

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        subsets = self.load(ctx)
        metrics: list[MetricRecord] = []
        items = []
        scored: list[tuple[np.ndarray, np.ndarray]] = []
        for subset in subsets:
            a, b = ctx.embed(subset.sentences1), ctx.embed(subset.sentences2)
            require_informative(np.concatenate([a, b]), encoder.name, f"{self.name} {subset.name}")
            score = cosine_rows(a, b)
            metrics += correlation_records(self.name, subset.name, subset.gold, score)
            scored.append((subset.gold, score))
            items.append(pd.DataFrame({
                "subset": subset.name, "item": np.arange(len(score)), "sentence1": subset.sentences1,
                "sentence2": subset.sentences2, "gold": subset.gold, "score": score,
            }))
        metrics += self._year_records(metrics, scored, ctx.options)
        paths = [p for subset in subsets for p in subset.files]
        return TaskResult(
            task=self.name,
            metrics=metrics,
            items=pd.concat(items, ignore_index=True),
            protocol={"similarity": "cosine", "text": ctx.option(self, "text"), "aggregates": ["mean", "wmean", "pooled"],
                      "aggregate_ci": f"stratified bootstrap, {ctx.options.bootstrap} resamples, seed {ctx.options.seed}"},
            data_checksums=ctx.data.checksums(paths),
        )

    def _year_records(
        self, per_subset: list[MetricRecord], scored: list[tuple[np.ndarray, np.ndarray]], options: TaskOptions
    ) -> list[MetricRecord]:
        total = sum(len(g) for g, _ in scored)
        intervals = bootstrap_year_ci(scored, options.bootstrap, options.seed)
        records = []
        gold_all = np.concatenate([g for g, _ in scored])
        score_all = np.concatenate([s for _, s in scored])
        for pooled in correlation_records(self.name, "all", gold_all, score_all):
            method = pooled.metric
            values = [r.value for r in per_subset if r.metric == method]
            sizes = [r.n for r in per_subset if r.metric == method]
            for agg, value in (("mean", float(np.mean(values))), ("wmean", float(np.average(values, weights=sizes)))):
                records.append(MetricRecord(self.name, "all", f"{method}_{agg}", value, *intervals[f"{method}_{agg}"], total))
            records.append(MetricRecord(self.name, "all", f"{method}_pooled", pooled.value, pooled.ci_low, pooled.ci_high, total))
        return records


class STS12(StsYear):
    name = "sts12"
    description = "SemEval 2012 STS (5 subsets), cosine similarity vs gold"
    year = 12
    order = 101
    subsets = ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews")


class STS13(StsYear):
    name = "sts13"
    description = "SemEval 2013 STS (3 subsets; SMT is not redistributable), cosine similarity vs gold"
    year = 13
    order = 102
    subsets = ("FNWN", "headlines", "OnWN")


class STS14(StsYear):
    name = "sts14"
    description = "SemEval 2014 STS (6 subsets), cosine similarity vs gold"
    year = 14
    order = 103
    subsets = ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news")


class STS15(StsYear):
    name = "sts15"
    description = "SemEval 2015 STS (5 subsets), cosine similarity vs gold"
    year = 15
    order = 104
    subsets = ("answers-forums", "answers-students", "belief", "headlines", "images")


class STS16(StsYear):
    name = "sts16"
    description = "SemEval 2016 STS (5 subsets), cosine similarity vs gold"
    year = 16
    order = 105
    subsets = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")


STS_GROUP = TaskGroup("sts", ("sts12", "sts13", "sts14", "sts15", "sts16"), "STS12–16, all 24 subsets")

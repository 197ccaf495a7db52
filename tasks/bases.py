"""Task bases for plugin authors: a task is its data, its metadata and a few lines (docs/plugins.md).

Each base reads its data from tab- or comma-separated files with a header line (``#`` lines are comments;
:mod:`benchbox.tasks.table_files`), declared as the task's ``data_files`` (a :class:`~benchbox.task_contract.protocol.DataFile` in
the plugin's package, with its sha256), and maps the file's column names onto its own with ``columns``
(``{"gold": "label"}``: the file's ``label`` column is the gold). It embeds the sentences, scores them, and
returns the metric records with their 95% intervals and the per-item rows the paired tests read
(:mod:`benchbox.task_contract.paired_tests`), so that compare, the claims and the reports treat the task like a built-in one:

- :class:`PairCorrelationTask`: sentence pairs with a graded gold score; the cosine of the two sentences
  correlated with gold per subset (Pearson and Spearman with Fisher-z intervals; paired tests: ``correlation``);
- :class:`PairClassificationTask`: sentence pairs with a 0/1 gold label; the ROC AUC of the cosine (Mann–Whitney,
  ties ½; percentile bootstrap interval over pairs; paired test: a bootstrap of the AUC);
- :class:`RetrievalTask`: queries ranking a corpus of documents; per query the rank of its first relevant
  document (ties at their expected rank), R@1/5/10 (Wilson intervals), MRR and the median rank (bootstrap
  intervals over queries); paired tests: ``ranks``;
- :class:`ProbeClassificationTask`: sentences with class labels in train/dev/test splits; SentEval's logistic
  regression on the frozen embeddings with L2 chosen on dev (:func:`benchbox.tasks.transfer.split`), test
  accuracy with a Wilson interval; paired test: McNemar's (``classification``).

Each base's columns: pairs ``sentence1``, ``sentence2``, ``gold`` (and optionally ``item``, ``subset``);
retrieval ``query``, ``sentence``, ``relevant`` (document ids separated by ``|``) in the first file and
``document``, ``sentence`` in the second; classification ``sentence``, ``label``, ``split``. The same bases back
the declarative task files of ``benchbox --include TASKS.toml`` (:mod:`benchbox.tasks.declarative`).

Items are checked as the built-in tasks' are: a pair repeated in a subset, or a document id listed twice, is refused
(:func:`~benchbox.tasks.table_files.first_repeat`, the rule of SentEval's SICK reader); a correlation needs at least
:data:`~benchbox.stats.intervals.FISHER_MIN_N` pairs per subset for its Fisher-z interval, an AUC both classes in every
subset, and a probe two classes among its train rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.device import resolve_device
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.stats.intervals import FISHER_MIN_N
from benchbox.stats.resampling import percentile_interval
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskResult
from benchbox.tasks.sts import CORRELATIONS, correlation_records
from benchbox.tasks.structure_measures import unit_rows
from benchbox.tasks.table_files import check_column_names, first_repeat, read_table

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


def numbers(frame: pd.DataFrame, column: str, path: Path, task: str) -> np.ndarray:
    """A column of numbers; a value that is not one is a one-line error naming the file and the row."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() | ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise BenchboxError(f"task {task}: {path}, row {row + 1}: {column} is {frame[column].iloc[row]!r}, "
                            "not a number")
    return values.to_numpy(float)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two embedding matrices; 0 where either row is the zero vector."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)
    return np.divide(np.einsum("ij,ij->i", a64, b64), norms, out=np.zeros(len(a64)), where=norms > 0)


def auc(rows: pd.DataFrame) -> float:
    """ROC AUC of ``score`` against the 0/1 ``gold`` by the Mann–Whitney statistic (average ranks: a tie counts
    ½; Hanley & McNeil 1982); NaN with one class only."""
    from scipy.stats import rankdata

    positives = rows["gold"].to_numpy() == 1
    n1, n0 = int(positives.sum()), int((~positives).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = rankdata(rows["score"].to_numpy(float))
    return float((ranks[positives].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def bootstrap_interval(rows: pd.DataFrame, statistic: Any, ctx: EvalContext) -> tuple[float, float]:
    """95% percentile bootstrap interval of ``statistic(rows)`` over the rows (``ctx.options.bootstrap``
    resamples, seed ``ctx.options.seed``; resamples where it is not finite are left out); NaN without
    resamples."""
    if ctx.options.bootstrap == 0:
        return math.nan, math.nan
    draws = np.random.default_rng(ctx.options.seed).integers(0, len(rows), size=(ctx.options.bootstrap, len(rows)))
    values = np.array([statistic(rows.iloc[d]) for d in draws])
    finite = values[np.isfinite(values)]
    return percentile_interval(finite) if len(finite) else (math.nan, math.nan)


class TableTask(Task):
    """A task whose data are tables (``data_files``) with the base's columns (module docstring)."""

    #: base column name → the data file's column name, for a file that names them otherwise
    columns: ClassVar[Mapping[str, str]] = {}
    #: the base's columns that the first data file must have, those it may have, and how many data files it reads
    required: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[tuple[str, ...]] = ()
    tables: ClassVar[int] = 1
    #: the data files' delimiter (a name of :data:`~benchbox.tasks.table_files.DELIMITERS`); None: detected
    delimiter: ClassVar[str | None] = None

    @classmethod
    def column_names(cls) -> tuple[str, ...]:
        """Every column of the base's data files, the names ``columns`` may map."""
        return (*cls.required, *cls.optional)

    def table(self, ctx: EvalContext, index: int = 0,
              required: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, Path]:
        """Data file ``index`` as a table with the base's column names, and its path."""
        if len(self.data_files) <= index:
            raise BenchboxError(f"task {self.name} declares {len(self.data_files)} data file(s); its base reads "
                                f"{index + 1}")
        path = ctx.file(self.data_files[index])
        check_column_names(self.columns, self.column_names(), self.name)
        read, optional = (self.required, self.optional) if required is None else (required, ())
        return read_table(path, self.columns, read, self.name, optional, self.delimiter), path

    def select(self, rows: pd.DataFrame, ctx: EvalContext) -> pd.DataFrame:
        """The rows evaluated (default: all); a task with an option that narrows them overrides this."""
        return rows


class PairTask(TableTask):
    """Sentence pairs scored by the cosine of their embeddings; subclasses measure the scores (:meth:`measure`)."""

    required = ("sentence1", "sentence2", "gold")
    optional = ("item", "subset")
    item_kind = "sentence pair: gold, cosine score"
    group, order = "sentence pairs", 800

    def measure(self, items: pd.DataFrame, ctx: EvalContext) -> list[MetricRecord]:
        raise NotImplementedError

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        rows, path = self.table(ctx)
        repeat = first_repeat(rows, [c for c in ("subset", "sentence1", "sentence2") if c in rows])
        if repeat is not None:
            row = rows.iloc[repeat[1] - 1]
            raise BenchboxError(f"task {self.name}: {path}, row {repeat[1]}: the pair ({row['sentence1']!r}, "
                                f"{row['sentence2']!r}) repeats row {repeat[0]}, so it would be scored twice: "
                                "delete the repeated line")
        rows = self.select(rows, ctx).reset_index(drop=True)
        first, second = ctx.embed(rows["sentence1"].tolist()), ctx.embed(rows["sentence2"].tolist())
        require_informative(np.concatenate([first, second]), encoder.name, self.name)
        items = pd.DataFrame({
            "subset": rows["subset"] if "subset" in rows else "test",
            "item": rows["item"] if "item" in rows else np.arange(len(rows)),
            "gold": numbers(rows, "gold", path, self.name), "score": cosine(first, second),
            "sentence1": rows["sentence1"], "sentence2": rows["sentence2"]})
        ctx.log(f"{self.name}: {len(items)} pairs")
        return TaskResult(self.name, self.measure(items, ctx), items,
                          protocol={"similarity": "cosine", "pairs": len(items), "version": self.version},
                          data_checksums=ctx.data.checksums([path]))


class PairCorrelationTask(PairTask):
    """The cosine correlated with a graded gold score per subset (module docstring)."""

    metrics = CORRELATIONS
    main_score = "spearman"

    def measure(self, items: pd.DataFrame, ctx: EvalContext) -> list[MetricRecord]:
        few = next(((subset, len(part)) for subset, part in items.groupby("subset", sort=False)
                    if len(part) < FISHER_MIN_N), None)
        if few is not None:
            raise BenchboxError(f"task {self.name}, subset {few[0]}: {few[1]} pair(s), and a correlation's Fisher-z "
                                f"interval needs at least {FISHER_MIN_N}: add pairs to the subset")
        return [r for subset, part in items.groupby("subset", sort=False)
                for r in correlation_records(self.name, str(subset), part["gold"].to_numpy(), part["score"].to_numpy())]


AUC = MetricSpec("auc", "bootstrap", summary=True, statistic=auc, description="ROC AUC of the cosine")


class PairClassificationTask(PairTask):
    """The ROC AUC of the cosine for 0/1 gold labels per subset (module docstring)."""

    metrics = (AUC,)
    main_score = "auc"

    def measure(self, items: pd.DataFrame, ctx: EvalContext) -> list[MetricRecord]:
        if not set(items["gold"]) <= {0.0, 1.0}:
            raise BenchboxError(f"task {self.name}: gold labels must be 0 or 1, got {sorted(set(items['gold']))[:5]}")
        one = next(((subset, part) for subset, part in items.groupby("subset", sort=False)
                    if part["gold"].nunique() == 1), None)
        if one is not None:
            subset, part = one
            raise BenchboxError(f"task {self.name}, subset {subset}: all {len(part)} pair(s) have gold "
                                f"{part['gold'].iloc[0]:g}, and the ROC AUC needs both classes (gold 0 and 1): add "
                                "pairs of the other class to the subset")
        return [MetricRecord(self.name, str(subset), "auc", auc(part), *bootstrap_interval(part, auc, ctx), len(part))
                for subset, part in items.groupby("subset", sort=False)]


def _recall(k: int) -> MetricSpec:
    return MetricSpec(f"r{k}", "ranks", unit="%", decimals=1, summary=k == 10, description=f"recall at {k} in %")


class RetrievalTask(TableTask):
    """Queries ranking a corpus of documents by cosine (module docstring)."""

    required = ("query", "sentence", "relevant")
    #: the columns of the second data file, the documents
    document_columns: ClassVar[tuple[str, ...]] = ("document", "sentence")
    tables = 2
    metrics = (_recall(1), _recall(5), _recall(10),
               MetricSpec("mrr", "ranks", decimals=3,
                          description="mean reciprocal rank of the first relevant document"),
               MetricSpec("medr", "ranks", higher_is_better=False, unit="rank", decimals=1,
                          description="median rank of the first relevant document"))
    main_score = "mrr"
    item_kind = "query: the rank of its first relevant document"
    item_keys = ("subset", "direction", "query")
    group, order = "corpus retrieval", 850
    #: how the rows of a query name their direction (the paired tests pair queries on it)
    direction: ClassVar[str] = "query-to-document"

    @classmethod
    def column_names(cls) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*super().column_names(), *cls.document_columns)))

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        queries, query_path = self.table(ctx, 0)
        documents, document_path = self.table(ctx, 1, self.document_columns)
        repeat = first_repeat(documents, ["document"])
        if repeat is not None:
            raise BenchboxError(f"task {self.name}: {document_path}, row {repeat[1]}: document "
                                f"{documents['document'].iloc[repeat[1] - 1]!r} repeats row {repeat[0]}'s id, so the "
                                "queries' relevant documents are ambiguous: give each document an id of its own")
        index = {doc: i for i, doc in enumerate(documents["document"])}
        relevant = [[index.get(doc.strip()) for doc in text.split("|")] for text in queries["relevant"]]
        unknown = next(((q, text) for q, text, found in zip(queries["query"], queries["relevant"], relevant)
                        if None in found), None)
        if unknown is not None:
            raise BenchboxError(f"task {self.name}: query {unknown[0]} names a relevant document that {document_path} "
                                f"lacks ({unknown[1]!r})")
        q, d = ctx.embed(queries["sentence"].tolist()), ctx.embed(documents["sentence"].tolist())
        require_informative(np.concatenate([q, d]), encoder.name, self.name)
        ranks = expected_ranks(unit_rows(q) @ unit_rows(d).T, relevant)
        items = pd.DataFrame({"subset": "test", "direction": self.direction, "query": queries["query"], "rank": ranks})
        return TaskResult(self.name, self._records(ranks, ctx), items,
                          protocol={"similarity": "cosine", "queries": len(ranks), "documents": len(documents),
                                    "ties": "expected", "version": self.version},
                          data_checksums=ctx.data.checksums([query_path, document_path]))

    def _records(self, ranks: np.ndarray, ctx: EvalContext) -> list[MetricRecord]:
        n, records = len(ranks), []
        for k in (1, 5, 10):
            hits = float((ranks <= k).sum())
            low, high = wilson_ci(hits, n)
            records.append(MetricRecord(self.name, self.direction, f"r{k}", 100 * hits / n, 100 * low, 100 * high, n))
        frame = pd.DataFrame({"rank": ranks})
        for metric, statistic in (("mrr", lambda rows: float((1 / rows["rank"]).mean())),
                                  ("medr", lambda rows: float(rows["rank"].median()))):
            records.append(MetricRecord(self.name, self.direction, metric, statistic(frame),
                                        *bootstrap_interval(frame, statistic, ctx), n))
        return records


def expected_ranks(similarity: np.ndarray, relevant: list[list[int]]) -> np.ndarray:
    """Per query (a row of ``similarity``), the 1-based rank of its best-scoring relevant document, the documents
    that tie with it taken at their expected place under random tie breaking (McSherry & Najork 2008): the
    retrieval tasks' ``expected`` convention (:meth:`benchbox.tasks.retrieval_metrics.QueryCounts.ranks`), which
    counts the relevant documents tied at the best score too."""
    from benchbox.tasks.retrieval_metrics import QueryCounts

    above, tied, own = (np.empty(len(relevant), dtype=np.int64) for _ in range(3))
    for i, docs in enumerate(relevant):
        row = similarity[i]
        best = row[docs].max()
        others = np.delete(row, docs)
        above[i], tied[i] = np.count_nonzero(others > best), np.count_nonzero(others == best)
        own[i] = np.count_nonzero(row[docs] == best)
    return np.asarray(QueryCounts(above, tied, own).ranks("expected"), dtype=np.float64)


class ProbeClassificationTask(TableTask):
    """Sentences with class labels classified by SentEval's logistic regression on the frozen embeddings (module
    docstring)."""

    required = ("sentence", "label", "split")
    metrics = (MetricSpec("accuracy", "classification", unit="%", decimals=1, summary=True,
                          description="test accuracy in %"),)
    main_score = "accuracy"
    item_kind = "test sentence: gold label, prediction, correct"
    group, order = "sentence classification", 860

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        from benchbox.tasks.transfer import split

        rows, path = self.table(ctx)
        splits = {name: rows[rows["split"] == name] for name in ("train", "dev", "test")}
        empty = [name for name, part in splits.items() if part.empty]
        if empty:
            raise BenchboxError(f"task {self.name}: {path} has no {', '.join(empty)} rows (column split: train, dev, "
                                "test)")
        taught = sorted(set(splits["train"]["label"]))
        if len(taught) < 2:
            raise BenchboxError(f"task {self.name}: {path}: all train rows have label {taught[0]!r}, and a classifier "
                                "needs at least two classes to learn: add train rows of another class")
        classes = {label: i for i, label in enumerate(sorted(set(rows["label"])))}
        xy = {}
        for name, part in splits.items():
            x = ctx.embed(part["sentence"].tolist())
            require_informative(x, encoder.name, f"{self.name} {name}")
            xy[name] = (x, part["label"].map(classes).to_numpy(np.int64))
        outcome = split(xy["train"], xy["dev"], xy["test"], len(classes), seed=ctx.options.seed,
                        device=resolve_device(ctx.options.device), log=ctx.log_for(self))
        gold, n = xy["test"][1], len(xy["test"][1])
        correct = (outcome.pred == gold).astype(np.int64)
        low, high = wilson_ci(float(correct.sum()), n)
        items = pd.DataFrame({"subset": "test", "item": np.arange(n), "gold": gold, "pred": outcome.pred,
                              "correct": correct, "sentence": splits["test"]["sentence"].to_numpy()})
        return TaskResult(self.name, [MetricRecord(self.name, "test", "accuracy", outcome.accuracy, 100 * low,
                                                   100 * high, n)], items,
                          protocol={"classifier": "SentEval logistic regression, L2 chosen on dev",
                                    "classes": len(classes), "version": self.version},
                          data_checksums=ctx.data.checksums([path]))

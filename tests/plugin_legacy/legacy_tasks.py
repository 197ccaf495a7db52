"""A plugin task as it was written against the previous release of benchbox, kept unchanged as a test fixture:
benchbox must keep loading and evaluating it (docs/plugins.md, "Compatibility"). Do not modernise this file.

What it relies on that has changed since: ``MetricSpec(test=...)`` (now ``kind=``; ``test="accuracy"`` is now
``kind="classification"``), and per-item rows of several kinds in one table — pair rows (``gold``, ``score``,
``correct``) beside retrieval rows (``direction``, ``rank``), each without the other's columns.

``legacy-paraphrase``: on ``paraphrase.tsv`` (60 pairs of benchbox-toyplugin's file, 30 paraphrases), the ROC AUC
of the cosine against the label (percentile bootstrap interval), the accuracy of ``cosine >= threshold``, and
for each paraphrase pair the rank of its second sentence among the second sentences of all paraphrase pairs,
given its first (R@1, R@5). Loaded with ``benchbox --include tests/plugin_legacy/legacy_tasks.py``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from benchbox.embedding_checks import require_informative
from benchbox.registry import TASKS
from benchbox.task import DataFile, EvalContext, MetricRecord, MetricSpec, Task, TaskOption, TaskResult

DATA = Path(__file__).parent / "paraphrase.tsv"
DIRECTION = "s1->s2"


def auc(gold: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC by the Mann–Whitney statistic (average ranks: a tie counts ½); NaN with one class only."""
    positives = gold == 1
    n1, n0 = int(positives.sum()), int((~positives).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = rankdata(score)
    return float((ranks[positives].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of every row of ``a`` with every row of ``b``; 0 where either row is the zero vector."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    norms = np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    return np.divide(a @ b.T, norms, out=np.zeros_like(norms), where=norms > 0)


def read_pairs(text: str) -> pd.DataFrame:
    """The TSV's rows (``id``, ``sentence1``, ``sentence2``, ``label``), ``#`` comment lines skipped."""
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t", quoting=csv.QUOTE_NONE))
    frame = pd.DataFrame(rows, columns=["id", "sentence1", "sentence2", "label"])
    frame["label"] = frame["label"].astype(int)
    return frame


class LegacyParaphrase(Task):
    name = "legacy-paraphrase"
    description = "Paraphrase AUC, accuracy and paraphrase retrieval on 60 pairs (a previous-release plugin)."
    main_score = "auc"
    splits = ("test",)
    reference = "benchbox test fixture (CC0)"
    group, order = "paraphrase detection", 901
    item_kind = "sentence pair or retrieval query"
    item_keys = ("subset", "direction", "item")
    version = "1.0"
    license = "CC0-1.0"
    citation = "@misc{benchbox_legacy, title = {A previous-release benchbox plugin}, year = {2026}}"
    metrics = (MetricSpec("auc", test="bootstrap", unit="value", summary=True,
                          statistic=lambda rows: auc(rows["gold"].to_numpy(), rows["score"].to_numpy())),
               MetricSpec("accuracy", test="accuracy", unit="%", scale=1.0),
               MetricSpec("r1", test="ranks", unit="%"),
               MetricSpec("r5", test="ranks", unit="%", summary=True))
    options = (TaskOption("threshold", float, 0.5, "cosine at or above which a pair is called a paraphrase", low=0,
                          high=1, protocol_key="threshold"),)
    data_files = (DataFile(DATA.name, sha256=hashlib.sha256(DATA.read_bytes()).hexdigest(), package_dir=DATA.parent),)

    def evaluate(self, encoder, ctx: EvalContext) -> TaskResult:
        path = ctx.file(self.data_files[0])
        raw = path.read_bytes()
        frame = read_pairs(raw.decode("utf-8"))
        first, second = ctx.embed(frame["sentence1"].tolist()), ctx.embed(frame["sentence2"].tolist())
        require_informative(np.concatenate([first, second]), encoder.name, self.name)
        gold = frame["label"].to_numpy()
        score = np.diag(cosine_matrix(first, second))
        correct = (score >= ctx.option(self, "threshold")) == (gold == 1)
        value = auc(gold, score)
        low, high = self._interval(gold, score, ctx)
        pairs = pd.DataFrame({"subset": "test", "direction": "none", "item": frame["id"], "gold": gold,
                              "score": score, "correct": correct})
        para = np.flatnonzero(gold == 1)
        similarity = cosine_matrix(first[para], second[para])
        ranks = 1 + (similarity > np.diag(similarity)[:, None]).sum(axis=1)
        queries = pd.DataFrame({"subset": "retrieval", "direction": DIRECTION, "item": frame["id"].iloc[para].tolist(),
                                "rank": ranks})
        records = [MetricRecord(self.name, "test", "auc", value, low, high, len(frame)),
                   MetricRecord(self.name, "test", "accuracy", 100 * float(correct.mean()), n=len(frame))]
        records += [MetricRecord(self.name, DIRECTION, f"r{k}", 100 * float((ranks <= k).mean()), n=len(para))
                    for k in (1, 5)]
        return TaskResult(
            task=self.name, metrics=records, items=pd.concat([pairs, queries], ignore_index=True),
            protocol={"similarity": "cosine", "threshold": ctx.option(self, "threshold"), "version": self.version},
            data_checksums={str(path.resolve()): hashlib.sha256(raw).hexdigest()},
        )

    @staticmethod
    def _interval(gold: np.ndarray, score: np.ndarray, ctx: EvalContext) -> tuple[float, float]:
        """95% percentile bootstrap interval of the AUC (NaN without resamples)."""
        if ctx.options.bootstrap == 0:
            return math.nan, math.nan
        rng = np.random.default_rng(ctx.options.seed)
        draws = rng.integers(0, len(gold), size=(ctx.options.bootstrap, len(gold)))
        values = np.array([auc(gold[d], score[d]) for d in draws])
        values = values[~np.isnan(values)]
        return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


TASKS.register("legacy-paraphrase", LegacyParaphrase)

"""``toy-paraphrase``: paraphrase detection scored by ROC AUC of the cosine similarity of the two sentences.

Protocol: for each of the pairs in ``data/paraphrase.tsv`` (the first ``pairs`` of them, option), the score is
the cosine of the two sentence embeddings (0 when either is the zero vector); the main score is the area under
the ROC curve of that score against the gold label (Mann–Whitney U / (n₁n₀), ties counted ½; Hanley & McNeil
1982), with a 95% percentile bootstrap interval over pairs (``TaskOptions.bootstrap`` resamples, seed
``TaskOptions.seed``; resamples with one class only are redrawn as skipped). No training.

Everything benchbox needs to know is declared as task metadata (``benchbox.task``): the AUC metric and its paired
test (a paired bootstrap of :func:`auc` over the pairs, run by ``benchbox compare``), the ``pairs`` option
(``-t toy-paraphrase:pairs=40``), the data file with its sha256, licence, citation and version.
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
from benchbox.errors import BenchboxError
from benchbox.task import DataFile, EvalContext, MetricRecord, MetricSpec, Task, TaskOption, TaskResult

DATA = Path(__file__).parent / "data" / "paraphrase.tsv"


def auc(gold: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC by the Mann–Whitney statistic (average ranks: a tie counts ½); NaN with one class only."""
    positives = gold == 1
    n1, n0 = int(positives.sum()), int((~positives).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = rankdata(score)
    return float((ranks[positives].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine; 0 where either row is the zero vector."""
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def read_pairs(text: str) -> pd.DataFrame:
    """The TSV's rows (``id``, ``sentence1``, ``sentence2``, ``label``), ``#`` comment lines skipped."""
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t", quoting=csv.QUOTE_NONE))
    frame = pd.DataFrame(rows, columns=["id", "sentence1", "sentence2", "label"])
    frame["label"] = frame["label"].astype(int)
    return frame


class ToyParaphrase(Task):
    name = "toy-paraphrase"
    description = "Toy paraphrase detection (200 pairs bundled with benchbox-toyplugin), ROC AUC of the cosine."
    main_score = "auc"
    splits = ("test",)
    reference = "benchbox-toyplugin test data (CC0); AUC: Hanley & McNeil 1982"
    group, order = "paraphrase detection", 900
    item_kind = "sentence pair"
    version = "1.0"
    license = "CC0-1.0"
    citation = ("@misc{benchbox_toyplugin, title = {Toy paraphrase pairs written for the benchbox test suite}, "
                "year = {2026}}")
    metrics = (MetricSpec("auc", kind="bootstrap", unit="value", summary=True,
                          statistic=lambda rows: auc(rows["gold"].to_numpy(), rows["score"].to_numpy())),)
    options = (TaskOption("pairs", int, 0, "evaluate the first N pairs of the file (0: all 200)", low=0,
                          protocol_key="pairs"),)
    data_files = (DataFile("paraphrase.tsv", sha256=hashlib.sha256(DATA.read_bytes()).hexdigest(),
                           package_dir=DATA.parent),)

    def evaluate(self, encoder, ctx: EvalContext) -> TaskResult:
        path = ctx.file(self.data_files[0])
        raw = path.read_bytes()
        frame = read_pairs(raw.decode("utf-8"))
        pairs = ctx.option(self, "pairs")
        if pairs == 1:
            raise BenchboxError("task option toy-paraphrase:pairs must be 0 (all) or at least 2 (an AUC needs both classes)")
        if pairs:
            frame = frame.head(pairs)
        first, second = ctx.embed(frame["sentence1"].tolist()), ctx.embed(frame["sentence2"].tolist())
        require_informative(np.concatenate([first, second]), encoder.name, self.name)
        gold, score = frame["label"].to_numpy(), cosine(first, second)
        value = auc(gold, score)
        low, high = self._interval(gold, score, ctx)
        ctx.log(f"{self.name}: AUC {value:.4f} over {len(frame)} pairs")
        items = pd.DataFrame({"subset": "test", "item": frame["id"], "gold": gold, "score": score})
        return TaskResult(
            task=self.name,
            metrics=[MetricRecord(self.name, "test", "auc", value, low, high, len(frame))],
            items=items,
            protocol={"similarity": "cosine", "pairs": len(frame), "ci": "percentile bootstrap over pairs",
                      "bootstrap": ctx.options.bootstrap, "seed": ctx.options.seed, "version": self.version},
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

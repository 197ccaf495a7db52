"""``toy-paraphrase``: paraphrase detection scored by ROC AUC of the cosine similarity of the two sentences.

Protocol: for each of the pairs in ``data/paraphrase.tsv`` (the first ``pairs`` of them, option), the score is
the cosine of the two sentence embeddings (0 when either is the zero vector); the main score is the area under
the ROC curve of that score against the gold label (Mann–Whitney U / (n₁n₀), ties counted ½; Hanley & McNeil
1982), with a 95% percentile bootstrap interval over pairs (``TaskOptions.bootstrap`` resamples, seed
``TaskOptions.seed``; resamples with one class only are redrawn as skipped). No training.

Metadata is kept as plain class attributes (``version``, ``license``, ``citation``, ``metrics``, ``options``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from importlib.resources import as_file, files

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from benchbox.embedding_checks import require_informative
from benchbox.task import EvalContext, MetricRecord, Task, TaskResult

DATA = files("benchbox_toyplugin.data") / "paraphrase.tsv"


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
    # metadata as plain attributes, for the task-metadata API to adopt
    version = "1.0"
    license = "CC0-1.0"
    citation = "benchbox-toyplugin: toy paraphrase pairs written for the benchbox test suite (2026)."
    metrics = ({"name": "auc", "higher_is_better": True, "range": (0.0, 1.0),
                "description": "ROC AUC of the cosine similarity against the paraphrase label"},)
    options = {"pairs": "evaluate the first N pairs of the file (default: all 200)"}

    def __init__(self, pairs: int | None = None) -> None:
        if pairs is not None and (isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 2):
            raise ValueError(f"toy-paraphrase: pairs must be an integer of at least 2, got {pairs!r}")
        self.pairs = pairs

    def evaluate(self, encoder, ctx: EvalContext) -> TaskResult:
        raw = DATA.read_bytes()
        with as_file(DATA) as path:
            label = str(path.resolve())  # an absolute path: benchbox's run reuse re-checks its sha256 there
        frame = read_pairs(raw.decode("utf-8"))
        if self.pairs is not None:
            frame = frame.head(self.pairs)
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
            data_checksums={label: hashlib.sha256(raw).hexdigest()},
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

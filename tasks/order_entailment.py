"""Order-violation entailment (Vendrov et al. 2016, §4.3; docs/protocols.md#order-entailment):
``order-entailment``, for encoders trained with the order term (``similarity == "order"``).

Vendrov et al. embed sentences in the reversed product order of the non-negative orthant: x ⪯ y (x more
specific than y) when every coordinate of y is at most x's, and the order-violation penalty
E(x, y) = ‖max(0, y − x)‖² measures how far a pair is from it (benchbox's order loss scores caption c against
image i as E(i, c): the caption is the more general). A premise p entails a hypothesis h when h is the more
general, so the score of a pair is E(p, h) = ‖max(0, h − p)‖² and a pair is classified as entailment when
E(p, h) ≤ t. As in their §4.3 the task is binary (entailment against neutral and contradiction merged) and the
threshold t is the only parameter, chosen on the dev split to maximise dev accuracy: the candidates are the
midpoints between consecutive distinct dev penalties and one value below the smallest and above the largest
(everything entailment / nothing entailment); the smallest best candidate wins.

Data (``dataset`` option): ``sick`` (default; SICK trial 500 pairs as dev, SICK test 4927 pairs; premise =
sentence A, hypothesis = sentence B, entailment = ENTAILMENT) or ``snli`` (dev 9842 / test 9824 pairs;
premise = s1, hypothesis = s2; from the data root's ``senteval/downstream/SNLI`` or ``path=DIR``). No training
split is read. Reported: test accuracy in percent with a Wilson 95% interval on correct/n, dev accuracy, the
threshold; per-item rows (gold, pred, correct, penalty) in file order for McNemar's test in compare.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext, MetricRecord, Task, TaskResult
from benchbox.task_contract.options import TaskOption
from benchbox.tasks.entailment import SNLIFolder, snli_folder, snli_required
from benchbox.tasks.senteval_data import (
    SICK_FILES,
    SICK_LABELS,
    SNLI_LABELS,
    Pairs,
    load_sick_entailment,
    read_snli,
    snli_paths,
)
from benchbox.tasks.transfer import ACCURACY

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

SPLITS = ("dev", "test")
VENDROV_BIBTEX = """@inproceedings{vendrov2016order,
  title = {Order-Embeddings of Images and Language},
  author = {Vendrov, Ivan and Kiros, Ryan and Fidler, Sanja and Urtasun, Raquel},
  booktitle = {Proceedings of ICLR 2016}, year = {2016}
}"""


def order_penalty(premises: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """E(p, h) = ‖max(0, h − p)‖² per row (float64)."""
    if premises.shape != hypotheses.shape or premises.ndim != 2:
        raise BenchboxError(f"premise and hypothesis embeddings must be two [n, d] arrays of one shape, got "
                            f"{premises.shape} and {hypotheses.shape}")
    violation = np.maximum(0.0, hypotheses.astype(np.float64) - premises.astype(np.float64))
    return np.square(violation).sum(axis=1)


def best_threshold(penalty: np.ndarray, entails: np.ndarray) -> tuple[float, float]:
    """The threshold t maximising the accuracy of "entailment iff penalty ≤ t" on these pairs (the module
    docstring's candidates, the smallest best one), and that accuracy (0–1)."""
    if len(penalty) == 0:
        raise BenchboxError("the dev split holds no pairs: no threshold can be chosen")
    values = np.unique(penalty)
    candidates = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
    positives, negatives = np.sort(penalty[entails]), np.sort(penalty[~entails])
    hits = (np.searchsorted(positives, candidates, side="right")
            + len(negatives) - np.searchsorted(negatives, candidates, side="right"))
    best = int(np.argmax(hits))
    return float(candidates[best]), hits[best] / len(penalty)


class OrderEntailment(Task):
    name = "order-entailment"
    description = ("Vendrov et al. (2016) entailment: threshold on the order-violation penalty E(premise, "
                   "hypothesis), chosen on dev; entailment vs not on SICK (default) or SNLI test, accuracy; "
                   "encoders with the order similarity only")
    main_score = "accuracy"
    metrics = (ACCURACY,)
    item_kind = "test sentence pair: gold (1 = entailment), prediction, correct, penalty"
    options = (
        TaskOption("dataset", str, "sick", "pairs to classify: sick (SICK trial / test) or snli (dev / test)",
                   choices=("sick", "snli"), protocol_key="dataset"),
        SNLIFolder("path", str, None, "with dataset=snli: SNLI folder with s1/s2/labels.{dev,test} (default: the "
                   "data root's senteval/downstream/SNLI)", splits=SPLITS),
    )
    splits = SPLITS
    group, order = "entailment", 320
    license = "SICK: CC BY-NC-SA 3.0 (Marelli et al. 2014); SNLI: CC BY-SA 4.0 (Bowman et al. 2015)"
    citation = VENDROV_BIBTEX
    reference = "Vendrov et al. (2016), Order-Embeddings of Images and Language, §4.3"

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        if values["dataset"] == "snli":
            return snli_required(values, SPLITS)
        if values["path"] is not None:
            raise BenchboxError(f"{self.name}:path names an SNLI folder, read only with dataset=snli: add "
                                f"-t {self.name}:dataset=snli")
        return tuple(SICK_FILES[s] for s in SPLITS)

    def _load(self, ctx: EvalContext, split: str) -> tuple[Pairs, np.ndarray, list[Path]]:
        """A split's pairs, whether each is an entailment, and the files read."""
        if ctx.option(self, "dataset") == "snli":
            folder = snli_folder(self, ctx)
            pairs = read_snli(folder, split)
            return pairs, pairs.labels == SNLI_LABELS.index("entailment"), snli_paths(folder, split)
        pairs = load_sick_entailment(ctx.data, split)
        return pairs, pairs.labels == SICK_LABELS.index("ENTAILMENT"), [pairs.path]

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        similarity = getattr(encoder, "similarity", "cosine")
        if similarity != "order":
            raise BenchboxError(f"{self.name} needs an encoder trained with the order term (similarity 'order', "
                                f"e.g. `benchbox train char-gru --loss order`); {encoder.name!r} uses {similarity!r}")
        scored, paths = {}, []
        for split in SPLITS:
            pairs, entails, read = self._load(ctx, split)
            premises, hypotheses = ctx.embed(pairs.sentences1), ctx.embed(pairs.sentences2)
            require_informative(np.concatenate([premises, hypotheses]), encoder.name, f"{self.name} {split}")
            scored[split] = (order_penalty(premises, hypotheses), entails)
            paths += read
        threshold, dev_accuracy = best_threshold(*scored["dev"])
        penalty, entails = scored["test"]
        pred = penalty <= threshold
        correct = (pred == entails).astype(np.int64)
        n, k = len(correct), int(correct.sum())
        low, high = wilson_ci(k, n)
        ctx.log(f"{self.name}: threshold {threshold:.6g} (dev accuracy {100 * dev_accuracy:.2f}%)")
        items = pd.DataFrame({"subset": "test", "item": np.arange(n), "gold": entails.astype(np.int64),
                              "pred": pred.astype(np.int64), "correct": correct, "penalty": penalty})
        return TaskResult(
            task=self.name,
            metrics=[MetricRecord(self.name, "test", "accuracy", 100 * k / n, 100 * low, 100 * high, n),
                     MetricRecord(self.name, "dev", "accuracy", 100 * dev_accuracy, math.nan, math.nan,
                                  len(scored["dev"][0]))],
            items=items,
            protocol={
                "dataset": ctx.option(self, "dataset"),
                "penalty": "E(p, h) = ||max(0, h - p)||^2, premise p = first sentence, hypothesis h = second",
                "labels": "entailment vs neutral + contradiction",
                "threshold": threshold,
                "threshold_rule": "max dev accuracy over midpoints of distinct dev penalties (smallest best)",
                "similarity": similarity,
            },
            data_checksums=ctx.data.checksums(paths),
        )

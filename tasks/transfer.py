"""SentEval's classification transfer tasks (docs/protocols.md#transfer; Conneau & Kiela 2018): ``mr``, ``cr``,
``subj``, ``mpqa`` (k-fold cross-validation with inner-fold L2 tuning), ``trec`` and ``mrpc`` (train/test,
L2 tuned by k-fold on train), ``sst2`` (train/dev/test).

Logistic regression on frozen sentence embeddings in SentEval's literature setting (``usepytorch=True``,
``kfold=10``, nhid = 0, Adam, batch 64, tenacity 5, epoch size 4; see :mod:`benchbox.tasks.logreg_probe`
and :mod:`benchbox.tasks.transfer_validation`). MRPC's features are SentEval's [|u − v|, u ⊙ v]
(``senteval/mrpc.py``). Rows are in SentEval's order (sorted by token count, then label) when the folds are
drawn. Reported: accuracy in percent as SentEval computes it (for the k-fold tasks the mean of per-fold
accuracies) with a Wilson 95% interval on correct/n over the test items, the dev accuracy SentEval reports,
and F1 (percent) for MRPC; per-item predictions (out-of-fold for the k-fold tasks) in file order.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score

from benchbox.device import resolve_device
from benchbox.encoder import Encoder
from benchbox.stats import wilson_ci
from benchbox.task import EvalContext, MetricRecord, MetricSpec, Task, TaskOption, TaskResult
from benchbox.tasks import logreg_probe as lr
from benchbox.tasks import transfer_validation as validation
from benchbox.tasks.probe_adam import ADAM
from benchbox.tasks.relatedness_probe import pair_features
from benchbox.tasks.transfer_data import (
    BINARY_FILES,
    MRPC_FILES,
    SST2_FILES,
    TREC_FILES,
    load_binary,
    load_mrpc,
    load_sst2,
    load_trec,
    senteval_order,
    token_counts,
)


def _items(gold: np.ndarray, pred: np.ndarray, order: np.ndarray) -> pd.DataFrame:
    """Per-item rows in file order from arrays in SentEval's order (``order[j]`` = file row of row j)."""
    g, p = np.empty_like(gold), np.empty_like(pred)
    g[order], p[order] = gold, pred
    return pd.DataFrame({"subset": "test", "item": np.arange(len(g)), "gold": g, "pred": p,
                         "correct": (g == p).astype(np.int64)})


ACCURACY = MetricSpec("accuracy", "accuracy", unit="%", summary=True,
                      description="test accuracy in % (dev accuracy: not tested, no per-item predictions)")
F1 = MetricSpec("f1", None, unit="%", description="F1 of the positive class in %")
KFOLD = TaskOption("kfold", int, 10, "k of SentEval's k-fold cross-validation / L2 search", low=2, legacy="kfold",
                   protocol_key="kfold")
SENTEVAL_BIBTEX = """@inproceedings{conneau2018senteval,
  title = {{SentEval}: An Evaluation Toolkit for Universal Sentence Representations},
  author = {Conneau, Alexis and Kiela, Douwe},
  booktitle = {Proceedings of LREC 2018}, year = {2018}
}"""


class TransferTask(Task):
    """A SentEval classification task: a logistic-regression probe on frozen embeddings."""

    main_score = "accuracy"
    metrics = (ACCURACY,)
    item_kind = "test sentence: gold label, prediction, correct"
    options = (KFOLD,)
    group = "transfer"
    citation = SENTEVAL_BIBTEX
    reference = ("SentEval tools/validation.py + tools/classifier.py, usepytorch=True, kfold=10 "
                 "(Conneau & Kiela 2018)")
    nclasses: ClassVar[int] = 2
    scheme: ClassVar[str]

    def _embed(self, ctx: EvalContext, sentences: list[str], labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Embeddings and labels in SentEval's order, and that order."""
        order = senteval_order(token_counts(sentences), labels.tolist())
        return ctx.embed([sentences[i] for i in order]), order

    def _result(self, ctx: EvalContext, items: pd.DataFrame, outcome: validation.Outcome, paths: list,
                extra: list[MetricRecord] | None = None, **protocol: Any) -> TaskResult:
        n, k = len(items), int(items["correct"].sum())
        low, high = wilson_ci(k, n)
        metrics = [
            MetricRecord(self.name, "test", "accuracy", outcome.accuracy, 100 * low, 100 * high, n),
            MetricRecord(self.name, "dev", "accuracy", outcome.dev_accuracy, math.nan, math.nan, 0),
            *(extra or []),
        ]
        return TaskResult(
            task=self.name,
            metrics=metrics,
            items=items,
            protocol={
                "probe": "SentEval MLP nhid=0 (logistic regression), usepytorch=True",
                "scheme": self.scheme,
                "seed": ctx.options.seed,
                "l2_grid": list(lr.REGS),
                "l2_chosen": outcome.l2,
                "batch_size": lr.BATCH_SIZE,
                "optimizer": {"name": "adam", **ADAM},
                "epoch_size": lr.EPOCH_SIZE,
                "max_epoch": lr.MAX_EPOCH,
                "tenacity": lr.TENACITY,
                "order": "SentEval sort by (tokens, label)",
                **protocol,
            },
            data_checksums=ctx.data.checksums(paths),
        )


class BinaryTransfer(TransferTask):
    """MR, CR, SUBJ, MPQA: SentEval's InnerKFoldClassifier on all sentences."""

    scheme = "inner k-fold (StratifiedKFold shuffle, random_state=1111, outer and inner)"
    splits = ("cv",)

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        data = load_binary(ctx.data, self.name)
        x, order = self._embed(ctx, data.sentences, data.labels)
        y = data.labels[order]
        device = resolve_device(ctx.options.device)
        kfold = ctx.option(self, "kfold")
        ctx.log(f"{self.name}: {kfold}-fold CV with inner {kfold}-fold L2 search ({device})")
        outcome = validation.inner_kfold(x, y, self.nclasses, k=kfold, seed=ctx.options.seed, device=device)
        return self._result(ctx, _items(y, outcome.pred, order), outcome, data.paths, kfold=kfold,
                            fold_seed=1111, device=device.type, predictions="out-of-fold")


class MR(BinaryTransfer):
    name = "mr"
    description = "Movie-review sentiment (10662 sentences), 10-fold CV, accuracy"
    data_files = BINARY_FILES["mr"]
    order = 300


class CR(BinaryTransfer):
    name = "cr"
    description = "Customer-review sentiment (3775 sentences), 10-fold CV, accuracy"
    data_files = BINARY_FILES["cr"]
    order = 301


class SUBJ(BinaryTransfer):
    name = "subj"
    description = "Subjectivity (10000 sentences), 10-fold CV, accuracy"
    data_files = BINARY_FILES["subj"]
    order = 302


class MPQA(BinaryTransfer):
    name = "mpqa"
    description = "MPQA opinion polarity (10606 phrases), 10-fold CV, accuracy"
    data_files = BINARY_FILES["mpqa"]
    order = 303


class TREC(TransferTask):
    name = "trec"
    description = "TREC question type, 6 classes: train 5452 / test 500, accuracy"
    data_files = tuple(TREC_FILES.values())
    splits = ("train", "test")
    nclasses = 6
    order = 304
    scheme = "k-fold L2 search on train (StratifiedKFold shuffle, random_state=seed), refit, test"

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        train, test = load_trec(ctx.data, "train"), load_trec(ctx.data, "test")
        train_x, train_order = self._embed(ctx, train.sentences, train.labels)
        test_x, test_order = self._embed(ctx, test.sentences, test.labels)
        test_y = test.labels[test_order]
        device = resolve_device(ctx.options.device)
        outcome = validation.kfold(train_x, train.labels[train_order], test_x, test_y, self.nclasses,
                                   k=ctx.option(self, "kfold"), seed=ctx.options.seed, device=device)
        return self._result(ctx, _items(test_y, outcome.pred, test_order), outcome, train.paths + test.paths,
                            kfold=ctx.option(self, "kfold"), device=device.type)


class MRPC(TransferTask):
    name = "mrpc"
    description = "MSR paraphrase detection: train 4076 / test 1725 pairs, accuracy and F1"
    data_files = tuple(MRPC_FILES.values())
    metrics = (ACCURACY, F1)
    order = 305
    splits = ("train", "test")
    scheme = "k-fold L2 search on train (StratifiedKFold shuffle, random_state=seed), refit, test"

    def _pair_features(self, ctx: EvalContext, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, object]:
        pairs = load_mrpc(ctx.data, split)
        order = senteval_order(token_counts(pairs.sentences1), token_counts(pairs.sentences2), pairs.labels.tolist())
        a = ctx.embed([pairs.sentences1[i] for i in order])
        b = ctx.embed([pairs.sentences2[i] for i in order])
        return pair_features(a, b), pairs.labels[order], order, pairs.path

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        train_x, train_y, _, train_path = self._pair_features(ctx, "train")
        test_x, test_y, test_order, test_path = self._pair_features(ctx, "test")
        device = resolve_device(ctx.options.device)
        outcome = validation.kfold(train_x, train_y, test_x, test_y, self.nclasses, k=ctx.option(self, "kfold"),
                                   seed=ctx.options.seed, device=device)
        f1 = MetricRecord(self.name, "test", "f1", round(100 * float(f1_score(test_y, outcome.pred)), 2),
                          math.nan, math.nan, len(test_y))
        return self._result(ctx, _items(test_y, outcome.pred, test_order), outcome, [train_path, test_path], [f1],
                            kfold=ctx.option(self, "kfold"), features="[|u-v|, u*v]", device=device.type)


class SST2(TransferTask):
    name = "sst2"
    description = "Stanford Sentiment Treebank, binary: train 67349 / dev 872 / test 1821, accuracy"
    data_files = tuple(SST2_FILES.values())
    options = ()
    order = 306
    splits = ("train", "dev", "test")
    scheme = "train/dev/test: L2 chosen on dev accuracy"

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        splits = {s: load_sst2(ctx.data, s) for s in ("train", "dev", "test")}
        xy, orders = {}, {}
        for name, data in splits.items():
            x, orders[name] = self._embed(ctx, data.sentences, data.labels)
            xy[name] = (x, data.labels[orders[name]])
        device = resolve_device(ctx.options.device)
        outcome = validation.split(xy["train"], xy["dev"], xy["test"], self.nclasses, seed=ctx.options.seed,
                                   device=device)
        paths = [p for data in splits.values() for p in data.paths]
        return self._result(ctx, _items(xy["test"][1], outcome.pred, orders["test"]), outcome, paths,
                            device=device.type)

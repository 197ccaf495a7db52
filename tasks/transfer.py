"""SentEval's classification transfer tasks (docs/protocols.md#transfer; Conneau & Kiela 2018): ``mr``, ``cr``,
``subj``, ``mpqa`` (k-fold cross-validation with inner-fold L2 tuning), ``trec`` and ``mrpc`` (train/test,
L2 tuned by k-fold on train), ``sst2`` (train/dev/test).

Logistic regression on frozen sentence embeddings in SentEval's literature setting (``usepytorch=True``,
``kfold=10``, nhid = 0, Adam, batch 64, tenacity 5, epoch size 4; see :mod:`benchbox.tasks.senteval_probe`
and the schemes below). MRPC's features are SentEval's [|u − v|, u ⊙ v]
(``senteval/mrpc.py``). Rows are in SentEval's order (sorted by token count, then label) when the folds are
drawn. Reported: accuracy in percent as SentEval computes it (for the k-fold tasks the mean of per-fold
accuracies) with a Wilson 95% interval on correct/n over the test items, the dev accuracy SentEval reports,
and F1 (percent) for MRPC; per-item predictions (out-of-fold for the k-fold tasks) in file order.

SentEval's three validation schemes (``senteval/tools/validation.py``), with the PyTorch logistic regression of
:mod:`benchbox.tasks.senteval_probe` and its L2 grid 1e-5 … 1e-2:

- :func:`inner_kfold` (MR, CR, SUBJ, MPQA; InnerKFoldClassifier): ``StratifiedKFold(k, shuffle=True,
  random_state=1111)`` outer folds (the seed is fixed at 1111 there, whatever the task seed); in each, the
  same k-fold splitter over the outer-train part scores every L2 by the mean inner dev accuracy (rounded to
  2 decimals in percent; the first best wins); the chosen L2 is refit on the whole outer-train part with
  ``validation_split=0.05`` and scored on the outer test fold. Accuracy = mean of the per-fold accuracies
  (each rounded to 2 decimals); dev accuracy = mean of the folds' best inner scores.
- :func:`kfold` (TREC, MRPC; KFoldClassifier): k folds of the train set (``random_state`` = the task seed)
  score each L2; the best is refit on all of train with ``validation_split=0.05`` and applied to test.
- :func:`split` (SST-2; SplitClassifier): each L2 is fit on train with the dev set for early stopping and
  scored on dev; the best one (SentEval refits it identically; training is deterministic) is applied to test.

Every fit of one scheme is handed to :func:`fit_logregs` at once, which trains them side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.device import resolve_device
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption
from benchbox.tasks.senteval_data import (
    BINARY_FILES,
    MRPC_FILES,
    SENTEVAL_BIBTEX,
    SST2_FILES,
    TREC_FILES,
    load_binary,
    load_mrpc,
    load_sst2,
    load_trec,
    senteval_order,
    token_counts,
)
from benchbox.tasks.senteval_probe import (
    ADAM,
    BATCH_SIZE,
    EPOCH_SIZE,
    MAX_EPOCH,
    REGS,
    TENACITY,
    FitSpec,
    augment,
    fit_logregs,
    pair_features,
    split_validation,
)

pd = lazy_module("pandas")
torch = lazy_module("torch")  # imported at first use: the command line starts without them


@dataclass(frozen=True)
class Outcome:
    """Test predictions (aligned with the test rows; out-of-fold for :func:`inner_kfold`), SentEval's
    accuracy and dev accuracy in percent, and the L2 chosen (one per outer fold for inner k-fold)."""

    pred: np.ndarray
    accuracy: float
    dev_accuracy: float
    l2: list[float]


def _check(y: np.ndarray, k: int) -> None:
    counts = np.bincount(y)
    if k < 2 or counts[counts > 0].min() < k:
        raise BenchboxError(f"k-fold with k={k} needs k ≥ 2 and at least k examples of every class")


def _mean_rounded(values: list[float]) -> float:
    return round(100 * float(np.mean(values)), 2)


def _best(scores: list[float]) -> int:
    return int(np.argmax(scores))


def inner_kfold(x: np.ndarray, y: np.ndarray, nclasses: int, *, k: int = 10, seed: int = 1111,
                device: torch.device | str = "cpu", log: Callable[[str], None] = lambda message: None) -> Outcome:
    """InnerKFoldClassifier.run with ``usepytorch=True`` (see the module docstring); ``log``: progress lines."""
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y, dtype=np.int64)
    _check(y, k)
    xa = augment(x, torch.device(device))
    outer = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=1111).split(x, y))
    inner = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    specs = []
    for train_idx, _ in outer:
        _check(y[train_idx], k)
        for reg in REGS:
            for a, b in inner.split(train_idx, y[train_idx]):
                specs.append(FitSpec(train_idx[a], train_idx[b], reg))
    fits = fit_logregs(xa, y, nclasses, specs, seed=seed, log=log)
    per_fold = len(REGS) * k
    dev, chosen, finals = [], [], []
    for f, (train_idx, _) in enumerate(outer):
        block = fits[f * per_fold:(f + 1) * per_fold]
        scores = [_mean_rounded([m.dev_accuracy for m in block[r * k:(r + 1) * k]]) for r in range(len(REGS))]
        dev.append(max(scores))
        chosen.append(REGS[_best(scores)])
        tr, dv = split_validation(len(train_idx), seed)
        finals.append(FitSpec(train_idx[tr], train_idx[dv], chosen[-1], prefix=len(train_idx)))
    final_fits = fit_logregs(xa, y, nclasses, finals, seed=seed, log=log)
    pred = np.empty(len(y), dtype=np.int64)
    fold_acc = []
    for (_, test_idx), model in zip(outer, final_fits):
        pred[test_idx] = model.predict(xa[torch.as_tensor(test_idx, device=xa.device)])
        fold_acc.append(round(100 * float(np.mean(pred[test_idx] == y[test_idx])), 2))
    return Outcome(pred, round(float(np.mean(fold_acc)), 2), round(float(np.mean(dev)), 2), chosen)


def kfold(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, nclasses: int, *,
          k: int = 10, seed: int = 1111, device: torch.device | str = "cpu",
          log: Callable[[str], None] = lambda message: None) -> Outcome:
    """KFoldClassifier.run with ``usepytorch=True`` (see the module docstring); ``log``: progress lines."""
    from sklearn.model_selection import StratifiedKFold

    train_y = np.asarray(train_y, dtype=np.int64)
    test_y = np.asarray(test_y, dtype=np.int64)
    _check(train_y, k)
    xa = augment(train_x, torch.device(device))
    folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(train_x, train_y))
    specs = [FitSpec(a, b, reg) for reg in REGS for a, b in folds]
    fits = fit_logregs(xa, train_y, nclasses, specs, seed=seed, log=log)
    scores = [_mean_rounded([m.dev_accuracy for m in fits[r * k:(r + 1) * k]]) for r in range(len(REGS))]
    reg = REGS[_best(scores)]
    tr, dv = split_validation(len(train_y), seed)
    (model,) = fit_logregs(xa, train_y, nclasses, [FitSpec(tr, dv, reg, prefix=len(train_y))], seed=seed, log=log)
    pred = model.predict(augment(test_x, xa.device))
    return Outcome(pred, round(100 * float(np.mean(pred == test_y)), 2), max(scores), [reg])


def split(train: tuple[np.ndarray, np.ndarray], dev: tuple[np.ndarray, np.ndarray],
          test: tuple[np.ndarray, np.ndarray], nclasses: int, *, seed: int = 1111,
          device: torch.device | str = "cpu", regs: tuple[float, ...] = REGS, epoch_size: int = EPOCH_SIZE,
          max_epoch: int = MAX_EPOCH, log: Callable[[str], None] = lambda message: None) -> Outcome:
    """SplitClassifier.run with ``usepytorch=True``; each argument is (features, labels). ``regs``: the L2
    grid (SentEval's ``noreg``: ``(0.0,)``); ``epoch_size``, ``max_epoch``: the classifier's schedule; ``log``:
    progress lines."""
    device = torch.device(device)
    n_train, n_dev = len(train[0]), len(dev[0])
    xa = augment(np.concatenate([train[0], dev[0]]), device)
    y = np.concatenate([train[1], dev[1]]).astype(np.int64)
    specs = [FitSpec(np.arange(n_train), np.arange(n_train, n_train + n_dev), reg) for reg in regs]
    fits = fit_logregs(xa, y, nclasses, specs, seed=seed, epoch_size=epoch_size, max_epoch=max_epoch, log=log)
    scores = []
    for model in fits:
        dev_pred = model.predict(xa[n_train:])
        scores.append(round(100 * float(np.mean(dev_pred == y[n_train:])), 2))
    best = _best(scores)
    pred = fits[best].predict(augment(test[0], device))
    return Outcome(pred, round(100 * float(np.mean(pred == np.asarray(test[1]))), 2), max(scores), [regs[best]])


def file_order_items(gold: np.ndarray, pred: np.ndarray, order: np.ndarray) -> pd.DataFrame:
    """Per-item rows in file order from arrays in SentEval's order (``order[j]`` = file row of row j)."""
    g, p = np.empty_like(gold), np.empty_like(pred)
    g[order], p[order] = gold, pred
    return pd.DataFrame({"subset": "test", "item": np.arange(len(g)), "gold": g, "pred": p,
                         "correct": (g == p).astype(np.int64)})


ACCURACY = MetricSpec("accuracy", "classification", unit="%", decimals=1, summary=True,
                      description="test accuracy in % (dev accuracy: not tested, no per-item predictions)")
F1 = MetricSpec("f1", None, unit="%", decimals=1, description="F1 of the positive class in %")
KFOLD = TaskOption("kfold", int, 10, "k of SentEval's k-fold cross-validation / L2 search", low=2, flag="kfold",
                   protocol_key="kfold")


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

    def _result(self, ctx: EvalContext, items: pd.DataFrame, outcome: Outcome, paths: list,
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
                "l2_grid": list(REGS),
                "l2_chosen": outcome.l2,
                "batch_size": BATCH_SIZE,
                "optimizer": {"name": "adam", **ADAM},
                "epoch_size": EPOCH_SIZE,
                "max_epoch": MAX_EPOCH,
                "tenacity": TENACITY,
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
        outcome = inner_kfold(x, y, self.nclasses, k=kfold, seed=ctx.options.seed, device=device,
                              log=ctx.log_for(self))
        return self._result(ctx, file_order_items(y, outcome.pred, order), outcome, data.paths, kfold=kfold,
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
        outcome = kfold(train_x, train.labels[train_order], test_x, test_y, self.nclasses,
                                   k=ctx.option(self, "kfold"), seed=ctx.options.seed, device=device,
                                   log=ctx.log_for(self))
        return self._result(ctx, file_order_items(test_y, outcome.pred, test_order), outcome,
                            train.paths + test.paths,
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
        from sklearn.metrics import f1_score

        train_x, train_y, _, train_path = self._pair_features(ctx, "train")
        test_x, test_y, test_order, test_path = self._pair_features(ctx, "test")
        device = resolve_device(ctx.options.device)
        outcome = kfold(train_x, train_y, test_x, test_y, self.nclasses, k=ctx.option(self, "kfold"),
                                   seed=ctx.options.seed, device=device, log=ctx.log_for(self))
        f1 = MetricRecord(self.name, "test", "f1", round(100 * float(f1_score(test_y, outcome.pred)), 2),
                          math.nan, math.nan, len(test_y))
        return self._result(ctx, file_order_items(test_y, outcome.pred, test_order), outcome,
                            [train_path, test_path], [f1],
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
        outcome = split(xy["train"], xy["dev"], xy["test"], self.nclasses, seed=ctx.options.seed,
                                   device=device, log=ctx.log_for(self))
        paths = [p for data in splits.values() for p in data.paths]
        return self._result(ctx, file_order_items(xy["test"][1], outcome.pred, orders["test"]), outcome, paths,
                            device=device.type)

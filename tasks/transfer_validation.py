"""SentEval's three validation schemes for classification transfer (``senteval/tools/validation.py``),
with the PyTorch logistic regression of :mod:`benchbox.tasks.logreg_probe` and its L2 grid 1e-5 … 1e-2.

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

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold

from benchbox.errors import BenchboxError
from benchbox.tasks.logreg_probe import REGS, FitSpec, augment, fit_logregs, split_validation


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
                device: torch.device | str = "cpu") -> Outcome:
    """InnerKFoldClassifier.run with ``usepytorch=True`` (see the module docstring)."""
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
    fits = fit_logregs(xa, y, nclasses, specs, seed=seed)
    per_fold = len(REGS) * k
    dev, chosen, finals = [], [], []
    for f, (train_idx, _) in enumerate(outer):
        block = fits[f * per_fold:(f + 1) * per_fold]
        scores = [_mean_rounded([m.dev_accuracy for m in block[r * k:(r + 1) * k]]) for r in range(len(REGS))]
        dev.append(max(scores))
        chosen.append(REGS[_best(scores)])
        tr, dv = split_validation(len(train_idx), seed)
        finals.append(FitSpec(train_idx[tr], train_idx[dv], chosen[-1], prefix=len(train_idx)))
    final_fits = fit_logregs(xa, y, nclasses, finals, seed=seed)
    pred = np.empty(len(y), dtype=np.int64)
    fold_acc = []
    for (_, test_idx), model in zip(outer, final_fits):
        pred[test_idx] = model.predict(xa[torch.as_tensor(test_idx, device=xa.device)])
        fold_acc.append(round(100 * float(np.mean(pred[test_idx] == y[test_idx])), 2))
    return Outcome(pred, round(float(np.mean(fold_acc)), 2), round(float(np.mean(dev)), 2), chosen)


def kfold(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, nclasses: int, *,
          k: int = 10, seed: int = 1111, device: torch.device | str = "cpu") -> Outcome:
    """KFoldClassifier.run with ``usepytorch=True`` (see the module docstring)."""
    train_y = np.asarray(train_y, dtype=np.int64)
    test_y = np.asarray(test_y, dtype=np.int64)
    _check(train_y, k)
    xa = augment(train_x, torch.device(device))
    folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(train_x, train_y))
    specs = [FitSpec(a, b, reg) for reg in REGS for a, b in folds]
    fits = fit_logregs(xa, train_y, nclasses, specs, seed=seed)
    scores = [_mean_rounded([m.dev_accuracy for m in fits[r * k:(r + 1) * k]]) for r in range(len(REGS))]
    reg = REGS[_best(scores)]
    tr, dv = split_validation(len(train_y), seed)
    (model,) = fit_logregs(xa, train_y, nclasses, [FitSpec(tr, dv, reg, prefix=len(train_y))], seed=seed)
    pred = model.predict(augment(test_x, xa.device))
    return Outcome(pred, round(100 * float(np.mean(pred == test_y)), 2), max(scores), [reg])


def split(train: tuple[np.ndarray, np.ndarray], dev: tuple[np.ndarray, np.ndarray],
          test: tuple[np.ndarray, np.ndarray], nclasses: int, *, seed: int = 1111,
          device: torch.device | str = "cpu") -> Outcome:
    """SplitClassifier.run with ``usepytorch=True``; each argument is (features, labels)."""
    device = torch.device(device)
    n_train, n_dev = len(train[0]), len(dev[0])
    xa = augment(np.concatenate([train[0], dev[0]]), device)
    y = np.concatenate([train[1], dev[1]]).astype(np.int64)
    specs = [FitSpec(np.arange(n_train), np.arange(n_train, n_train + n_dev), reg) for reg in REGS]
    fits = fit_logregs(xa, y, nclasses, specs, seed=seed)
    scores = []
    for model in fits:
        dev_pred = model.predict(xa[n_train:])
        scores.append(round(100 * float(np.mean(dev_pred == y[n_train:])), 2))
    best = _best(scores)
    pred = fits[best].predict(augment(test[0], device))
    return Outcome(pred, round(100 * float(np.mean(pred == np.asarray(test[1]))), 2), max(scores), [REGS[best]])

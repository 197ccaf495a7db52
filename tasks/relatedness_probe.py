"""SentEval's supervised relatedness regressor (``senteval/tools/relatedness.py``, RelatednessPytorch;
Conneau & Kiela 2018, after Tai et al. 2015), reimplemented to run fast on CPU (and on CUDA).

Protocol, as SentEval's: pair features [|u − v|, u ⊙ v]; the gold score y becomes a sparse distribution
over the classes 1..5 (:func:`encode_labels`); a Linear(2d → 5) + softmax model is trained with MSE against
it by Adam (lr 1e-3, no weight decay) in mini-batches of 64 drawn from a fresh ``np.random.permutation``
each epoch; the seed (1111) is set for numpy and torch before the model is built, so the initial weights
and the permutations are SentEval's. Training runs in chunks of 50 epochs while the epoch counter is
≤ 1000 (so at most 21 chunks); after each chunk the dev Pearson of ŷ = softmax · [1, 2, 3, 4, 5] is
computed, the best model is kept, and training stops at the 4th chunk that does not improve on the best
(the counter is never reset). The loss is the mean squared error over the batch: SentEval sets
``loss_fn.size_average = False`` after construction, which torch ≥ 0.4.1 ignores.

What differs is only how the arithmetic is organised: all tensors live on the device, each epoch gathers
the permuted training set once and takes contiguous slices of it, the bias is a column of the weight matrix
(features get a constant 1), and the gradient and the Adam update (torch's formula) are written out, with
no autograd, DataLoader or optimiser object per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import pearsonr

from benchbox.errors import BenchboxError
from benchbox.tasks.logreg_probe import augment, initial_weights
from benchbox.tasks.probe_adam import adam_step_

NCLASSES = 5
BATCH_SIZE = 64
CHUNK_EPOCHS = 50
MAX_EPOCH = 1000
#: SentEval stops at the check where the non-improvement counter is already 3 (the 4th non-improving one)
PATIENCE = 3


def pair_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SentEval's pair features ``np.c_[|a − b|, a * b]`` (float32)."""
    if a.shape != b.shape or a.ndim != 2:
        raise BenchboxError(f"pair embeddings must be two [n, d] arrays of one shape, got {a.shape} and {b.shape}")
    return np.concatenate([np.abs(a - b), a * b], axis=1).astype(np.float32)


def encode_labels(scores, nclasses: int = NCLASSES) -> np.ndarray:
    """Tai et al.'s (2015) sparse target, exactly as SentEval's ``encode_labels``: with f = ⌊y⌋, class f
    (1-based) gets f − y + 1 and class f + 1 gets y − f, where those classes exist. Scores below 1 thus lose
    mass (y = 0 encodes to all zeros; y = 0.4 puts 0.4 on class 1): the STS-B bug, SentEval #83."""
    y = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise BenchboxError("relatedness scores must be a 1-d array of finite numbers")
    floor = np.floor(y)
    out = np.zeros((len(y), nclasses), dtype=np.float32)
    rows = np.arange(len(y))
    for cls, weight in ((floor, floor - y + 1), (floor + 1, y - floor)):
        ok = (cls >= 1) & (cls <= nclasses)
        out[rows[ok], cls[ok].astype(np.int64) - 1] = weight[ok]
    return out


@dataclass(frozen=True)
class RelatednessFit:
    """Outcome of one regressor run."""

    dev_pearson: float
    dev_pred: np.ndarray
    test_pred: np.ndarray
    #: epochs trained (a multiple of 50) and the epoch count of the model kept
    epochs: int
    best_epoch: int


def _pearson(pred: np.ndarray, gold: np.ndarray) -> float:
    if np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return float("nan")
    return float(pearsonr(pred, gold)[0])


def fit_relatedness(
    train_x: np.ndarray,
    train_scores: np.ndarray,
    dev_x: np.ndarray,
    dev_scores: np.ndarray,
    test_x: np.ndarray,
    *,
    seed: int = 1111,
    device: torch.device | str = "cpu",
) -> RelatednessFit:
    """Train SentEval's relatedness regressor on ``train_x`` (pair features) and ``train_scores``, selecting
    on dev Pearson; return dev Pearson, ŷ on dev and test, and the epochs used."""
    device = torch.device(device)
    train_x, dev_x, test_x = (np.asarray(x, dtype=np.float32) for x in (train_x, dev_x, test_x))
    dev_scores = np.asarray(dev_scores, dtype=np.float64)
    n, dim = train_x.shape
    if n == 0 or len(train_scores) != n or len(dev_scores) != len(dev_x) or len(dev_x) < 2:
        raise BenchboxError("relatedness needs aligned train features/scores and at least 2 dev pairs")
    if dev_x.shape[1] != dim or test_x.shape[1] != dim:
        raise BenchboxError("train, dev and test features must have the same width")
    rng = np.random.RandomState(seed)
    r = torch.arange(1, NCLASSES + 1, dtype=torch.float32, device=device)

    x_train, x_dev, x_test = (augment(x, device) for x in (train_x, dev_x, test_x))
    y_train = torch.from_numpy(encode_labels(train_scores)).to(device)
    w = initial_weights(dim, NCLASSES, seed).to(device)
    m, v = torch.zeros_like(w), torch.zeros_like(w)
    step = 0

    def predict(x: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
        return (torch.softmax(x @ weights.T, dim=1) @ r).cpu().numpy().astype(np.float64)

    nepoch, best_pr, best_w, best_epoch, bad_checks = 0, -1.0, w.clone(), 0, 0
    while nepoch <= MAX_EPOCH:
        for _ in range(CHUNK_EPOCHS):
            perm = torch.from_numpy(rng.permutation(n)).to(device)
            xp, yp = x_train[perm], y_train[perm]
            for start in range(0, n, BATCH_SIZE):
                xb, yb = xp[start:start + BATCH_SIZE], yp[start:start + BATCH_SIZE]
                p = torch.softmax(xb @ w.T, dim=1)
                g = (p - yb).mul_(2.0 / yb.numel())
                dz = p.mul_(g.sub_((g * p).sum(dim=1, keepdim=True)))
                grad = dz.T @ xb
                step += 1
                adam_step_(w, grad, m, v, step)
        nepoch += CHUNK_EPOCHS
        pr = _pearson(predict(x_dev, w), dev_scores)
        if pr > best_pr:
            best_pr, best_w, best_epoch = pr, w.clone(), nepoch
        else:  # NaN (constant predictions) counts as no improvement, as in SentEval
            if bad_checks >= PATIENCE:
                break
            bad_checks += 1
    if best_epoch == 0:
        raise BenchboxError("relatedness regressor never gave a defined dev Pearson (constant predictions?)")
    return RelatednessFit(best_pr, predict(x_dev, best_w), predict(x_test, best_w), nepoch, best_epoch)

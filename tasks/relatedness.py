"""Supervised relatedness: STS Benchmark (``stsb``) and SICK-R (``sickr``), SentEval's protocol
(docs/protocols.md#relatedness; SentEval ``senteval/sick.py`` SICKRelatednessEval and ``senteval/sts.py``
STSBenchmarkEval; Conneau & Kiela 2018).

Each split is put in SentEval's order (pairs sorted by token counts of sentence A, then B, then score; a
stable sort) because the training permutations index that order; the regressor of
:func:`fit_relatedness` is trained on train, selected on dev Pearson and applied to test.
Reported: test Pearson and Spearman (Fisher-z 95% intervals) and MSE of ŷ against the gold scores, dev
Pearson, and ŷ per test pair (in file order).

STS-B scores run 0–5 while the label encoding assumes 1–5 (SentEval #83). By default that is reproduced;
the ``stsb`` option ``fix_stsb_labels`` (``--fix-stsb-labels``, ``-t stsb:fix_stsb_labels=true``) rescales the
STS-B scores to 1 + 0.8·y before training, and ŷ back to the
0–5 scale afterwards (Pearson and Spearman are unchanged by the map, MSE is on the 0–5 scale).
The protocol records which.

The regressor is SentEval's ``senteval/tools/relatedness.py`` (RelatednessPytorch; after Tai et al. 2015),
reimplemented to run fast on CPU (and on CUDA). Protocol, as SentEval's: pair features [|u − v|, u ⊙ v]; the gold score y becomes a sparse distribution
over the classes 1..5 (:func:`encode_labels`); a Linear(2d → 5) + softmax model is trained with MSE against
it by Adam (lr 1e-3, no weight decay) in mini-batches of 64 drawn from a fresh ``np.random.permutation``
each epoch; the seed (1111) is set for numpy and torch before the model is built, so the initial weights
and the permutations are SentEval's. Training runs in chunks of 50 epochs while the epoch counter is
≤ 1000 (so at most 21 chunks); after each chunk the dev Pearson of ŷ = softmax · [1, 2, 3, 4, 5] is
computed, the best model is kept, and training stops at the 4th chunk that does not improve on the best
(the counter is never reset). The loss is the mean squared error over the batch: SentEval sets
``loss_fn.size_average = False`` after construction, which torch ≥ 0.4.1 ignores.

What differs is only how the arithmetic is organised: all tensors live on the device, each epoch gathers
the permuted training set once into one buffer and takes contiguous slices of it, the bias is a column of the
weight matrix (features get a constant 1), and the gradient and the Adam update (torch's formula) are written
out, with no autograd, DataLoader or optimiser object per step; each epoch's loop over its mini-batches runs as
TorchScript (:func:`train_epoch`: the same ATen kernels in the same order as eager torch, so the same numbers
bit for bit, at about half the CPU time of the interpreter's per-call overhead), and the numbers a step
multiplies or divides a tensor by are 0-dim float32 tensors made once (:class:`AdamScalars`; the same bits).
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.console import Heartbeat
from benchbox.data.root import DataRoot
from benchbox.device import resolve_device
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption
from benchbox.threads import one_thread
from benchbox.tasks.senteval_data import (
    SENTEVAL_BIBTEX,
    SICK_FILES,
    STSB_FILES,
    PairData,
    load_sick,
    load_stsb,
    senteval_order as sort_rows,
    token_counts,
)
from benchbox.tasks.senteval_probe import (ADAM, BATCH_SIZE, PROGRESS_SECONDS, AdamScalars, adam_scalars, adam_step_,
                                           augment, initial_weights, pair_features)
from benchbox.tasks.sts import CORRELATIONS, SEMANTIC_GROUP, correlation_records

pd = lazy_module("pandas")
torch = lazy_module("torch")  # imported at first use: the command line starts without them

SPLITS = ("train", "dev", "test")
#: mean squared error of the predicted scores on the 0-5 scale: paired bootstrap of the MSE
MSE = MetricSpec("mse", "bootstrap", higher_is_better=False, unit="mse", description="MSE of predicted vs gold scores",
                 statistic=lambda rows: float(np.mean((rows["score"].to_numpy(float) - rows["gold"].to_numpy(float)) ** 2)))
NCLASSES = 5
#: the labels protocol STS-B records by default: SentEval's, which encodes the 0-5 scores as if 1-5 (SentEval #83)
SENTEVAL_LABELS = "senteval: STS-B 0-5 encoded as if 1-5 (SentEval #83 reproduced)"
#: the regressor's schedule: epochs per dev check, last epoch count checked
CHUNK_EPOCHS = 50
MAX_EPOCH = 1000
#: SentEval stops at the check where the non-improvement counter is already 3 (the 4th non-improving one)
PATIENCE = 3


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
    from scipy.stats import pearsonr

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
    log: Callable[[str], None] = lambda message: None,
    clock: Callable[[], float] = time.monotonic,
) -> RelatednessFit:
    """Train SentEval's relatedness regressor on ``train_x`` (pair features) and ``train_scores``, selecting
    on dev Pearson; return dev Pearson, ŷ on dev and test, and the epochs used. On one CPU thread
    (:func:`benchbox.threads.one_thread`: mini-batches of 64 rows). ``log`` gets a progress line after the
    first chunk of 50 epochs, then after a chunk every :data:`PROGRESS_SECONDS`, and one when training stops."""
    device = torch.device(device)
    train_x, dev_x, test_x = (np.asarray(x, dtype=np.float32) for x in (train_x, dev_x, test_x))
    dev_scores = np.asarray(dev_scores, dtype=np.float64)
    n, dim = train_x.shape
    if n == 0 or len(train_scores) != n or len(dev_scores) != len(dev_x) or len(dev_x) < 2:
        raise BenchboxError("relatedness needs aligned train features/scores and at least 2 dev pairs")
    if dev_x.shape[1] != dim or test_x.shape[1] != dim:
        raise BenchboxError("train, dev and test features must have the same width")
    init = initial_weights(dim, NCLASSES, seed).to(device)
    with one_thread(), torch.inference_mode():  # no autograd: the gradient is written out
        return _fit(train_x, np.asarray(train_scores), dev_x, dev_scores, test_x, init, np.random.RandomState(seed),
                    device, log, clock)


def _fit(train_x: np.ndarray, train_scores: np.ndarray, dev_x: np.ndarray, dev_scores: np.ndarray,
         test_x: np.ndarray, init: torch.Tensor, rng: np.random.RandomState, device: torch.device,
         log: Callable[[str], None], clock: Callable[[], float]) -> RelatednessFit:
    """:func:`fit_relatedness` on checked inputs from the initial weights ``init`` and the seeded stream ``rng``
    of permutations."""
    n = len(train_x)
    r = torch.arange(1, NCLASSES + 1, dtype=torch.float32, device=device)
    x_train, x_dev, x_test = (augment(x, device) for x in (train_x, dev_x, test_x))
    y_train = torch.from_numpy(encode_labels(train_scores)).to(device)
    w = init.clone()
    m, v = torch.zeros_like(w), torch.zeros_like(w)
    xp, yp = torch.empty_like(x_train), torch.empty_like(y_train)
    xs, ys, step, epoch = list(xp.split(BATCH_SIZE)), list(yp.split(BATCH_SIZE)), 0, _compiled_epoch()
    # the MSE gradient's factor 2 / numel per batch, a 0-dim float32 tensor as Adam's numbers (AdamScalars)
    scales = [torch.tensor(2.0 / y.numel(), dtype=torch.float32, device=device) for y in ys]
    adam = adam_scalars(device)

    def predict(x: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
        return (torch.softmax(x @ weights.T, dim=1) @ r).cpu().numpy().astype(np.float64)

    started, heartbeat = clock(), Heartbeat(PROGRESS_SECONDS, clock)
    nepoch, best_pr, best_w, best_epoch, bad_checks = 0, -1.0, w.clone(), 0, 0
    while nepoch <= MAX_EPOCH:
        for _ in range(CHUNK_EPOCHS):
            perm = torch.from_numpy(rng.permutation(n)).to(device)
            torch.index_select(x_train, 0, perm, out=xp)
            torch.index_select(y_train, 0, perm, out=yp)
            step = epoch(xs, ys, scales, w, m, v, adam, step)
        nepoch += CHUNK_EPOCHS
        pr = _pearson(predict(x_dev, w), dev_scores)
        if pr > best_pr:
            best_pr, best_w, best_epoch = pr, w.clone(), nepoch
        else:  # NaN (constant predictions) counts as no improvement, as in SentEval
            if bad_checks >= PATIENCE:
                break
            bad_checks += 1
        if heartbeat.due():
            log(f"regressor: epoch {nepoch} of at most {MAX_EPOCH + CHUNK_EPOCHS}, dev Pearson {pr:.4f} (best "
                f"{best_pr:.4f} at epoch {best_epoch}), {clock() - started:.0f} s")
    if best_epoch == 0:
        raise BenchboxError("relatedness regressor never gave a defined dev Pearson (constant predictions?)")
    log(f"regressor: done after {nepoch} epochs in {clock() - started:.0f} s, kept epoch {best_epoch} (dev Pearson "
        f"{best_pr:.4f})")
    return RelatednessFit(best_pr, predict(x_dev, best_w), predict(x_test, best_w), nepoch, best_epoch)


def train_epoch(xs: list[torch.Tensor], ys: list[torch.Tensor], scales: list[torch.Tensor], w: torch.Tensor,
                m: torch.Tensor, v: torch.Tensor, adam: AdamScalars, step: int) -> int:
    """One epoch of SentEval's regressor over the mini-batches ``xs``/``ys`` (augmented features, sparse
    targets; ``scales`` holds 2 / numel(y) of each), updating the weights ``w`` and Adam's moments ``m``, ``v`` in
    place; returns the step count.
    Per batch the arithmetic is SentEval's forward and backward pass, operation for operation: z = x Wᵀ,
    p = softmax(z), g = 2 (p − y) / numel(y), dz = p ⊙ (g − Σ_c g ⊙ p), ∇W = dzᵀ x, then torch's Adam step.
    :func:`_compiled_epoch` runs it as TorchScript (the same ATen kernels, without the interpreter's
    per-call overhead)."""
    wt, denom = w.t(), torch.empty_like(w)
    for i in range(len(xs)):
        x, y = xs[i], ys[i]
        p = torch.softmax(torch.mm(x, wt), 1)
        g = torch.sub(p, y).mul_(scales[i])
        dz = p.mul_(g.sub_(torch.mul(g, p).sum(1, keepdim=True)))
        step += 1
        adam_step_(w, torch.mm(dz.t(), x), m, v, step, adam, denom)
    return step


@functools.cache
def _compiled_epoch() -> Callable[..., int]:
    """:func:`train_epoch` compiled by TorchScript once per process (its deprecation notice silenced: no
    successor keeps the kernels bit for bit)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.script(train_epoch)


def senteval_order(pairs: PairData) -> np.ndarray:
    """Indices of the pairs in SentEval's order: sorted by (tokens in A, tokens in B, score), stable."""
    return sort_rows(token_counts(pairs.sentences1), token_counts(pairs.sentences2), list(pairs.scores))


class RelatednessTask(Task):
    """SentEval's supervised relatedness on a train/dev/test sentence-pair dataset."""

    main_score = "pearson"
    #: test Pearson, Spearman, MSE; dev Pearson (no per-item rows: not tested)
    metrics = CORRELATIONS + (MSE,)
    item_kind = "test sentence pair: gold and predicted score"
    group = SEMANTIC_GROUP
    citation = SENTEVAL_BIBTEX
    splits = SPLITS
    reference = "SentEval sick.py + tools/relatedness.py (Conneau & Kiela 2018); labels after Tai et al. (2015)"
    loader: ClassVar[Callable[[DataRoot, str], PairData]]
    #: whether ``fix_stsb_labels`` applies (STS-B's 0–5 scale)
    zero_based: ClassVar[bool] = False

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        rescale = self.zero_based and ctx.option(self, "fix_stsb_labels")
        data, feats, gold = {}, {}, {}
        for split in SPLITS:
            pairs = type(self).loader(ctx.data, split)
            order = senteval_order(pairs)
            a = ctx.embed([pairs.sentences1[i] for i in order])
            b = ctx.embed([pairs.sentences2[i] for i in order])
            require_informative(np.concatenate([a, b]), encoder.name, f"{self.name} {split}")
            data[split], feats[split] = (pairs, order), pair_features(a, b)
            gold[split] = np.asarray(pairs.scores, dtype=np.float64)[order]
        train_y, dev_y = gold["train"], gold["dev"]
        if rescale:
            train_y, dev_y = 1 + 0.8 * train_y, 1 + 0.8 * dev_y
        device = resolve_device(ctx.options.device)
        ctx.log(f"{self.name}: training SentEval's relatedness regressor on {len(train_y)} pairs ({device}): "
                f"chunks of {CHUNK_EPOCHS} epochs, a dev check after each, stopping after {PATIENCE + 1} checks "
                "without a better dev Pearson")
        fit = fit_relatedness(feats["train"], train_y, feats["dev"], dev_y, feats["test"],
                              seed=ctx.options.seed, device=device, log=ctx.log_for(self))
        pred = (fit.test_pred - 1) / 0.8 if rescale else fit.test_pred
        test_pairs, order = data["test"]
        score = np.empty_like(pred)
        score[order] = pred
        test_gold = np.asarray(test_pairs.scores, dtype=np.float64)
        metrics = correlation_records(self.name, "test", test_gold, score) + [
            MetricRecord(self.name, "test", "mse", float(np.mean((score - test_gold) ** 2)), math.nan, math.nan,
                         len(test_gold)),
            correlation_records(self.name, "dev", gold["dev"], fit.dev_pred)[0],
        ]
        items = pd.DataFrame({"subset": "test", "item": np.arange(len(test_gold)),
                              "sentence1": test_pairs.sentences1, "sentence2": test_pairs.sentences2,
                              "gold": test_gold, "score": score})
        return TaskResult(
            task=self.name,
            metrics=metrics,
            items=items,
            protocol={
                "probe": "SentEval RelatednessPytorch: Linear(2d->5)+softmax, MSE vs Tai et al. sparse targets",
                "features": "[|u-v|, u*v]",
                "labels": self._label_mode(rescale),
                "seed": ctx.options.seed,
                "batch_size": BATCH_SIZE,
                "optimizer": {"name": "adam", **ADAM, "weight_decay": 0.0},
                "epochs": {"chunk": CHUNK_EPOCHS, "max": MAX_EPOCH, "stop_after_non_improving": PATIENCE + 1,
                           "trained": fit.epochs, "best": fit.best_epoch},
                "selection": "dev pearson",
                "device": device.type,
                "order": "SentEval sort by (len A, len B, score)",
            },
            data_checksums=ctx.data.checksums([data[s][0].path for s in SPLITS]),
        )

    def _label_mode(self, rescale: bool) -> str:
        if not self.zero_based:
            return "1-5 as given"
        if rescale:
            return "fixed: STS-B 0-5 rescaled to 1+0.8y before encoding"
        return SENTEVAL_LABELS


class STSB(RelatednessTask):
    name = "stsb"
    description = "STS Benchmark, supervised (SentEval): train 5749 / dev 1500 / test 1379 pairs, Pearson"
    data_files = tuple(STSB_FILES[s] for s in SPLITS)
    loader = staticmethod(load_stsb)
    zero_based = True
    order = 120
    license = "STS Benchmark: per-source licences (Cer et al. 2017)"
    options = (TaskOption("fix_stsb_labels", bool, False, "rescale STS-B 0-5 to 1-5 before SentEval's relatedness "
                          "encoding (SentEval #83)", flag="fix-stsb-labels", protocol_key="labels",
                          recorded_default=SENTEVAL_LABELS),)


class SICKR(RelatednessTask):
    name = "sickr"
    description = "SICK relatedness, supervised (SentEval): train 4500 / trial 500 / test 4927 pairs, Pearson"
    data_files = tuple(SICK_FILES[s] for s in SPLITS)
    loader = staticmethod(load_sick)
    order = 121
    license = "SICK: CC BY-NC-SA 3.0 (Marelli et al. 2014)"

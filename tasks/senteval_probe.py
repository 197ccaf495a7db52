"""SentEval's probes on frozen embeddings, the machinery the relatedness and transfer tasks share: the pair
features, the bias-augmented inputs, SentEval's seeded initial weights, torch's Adam update written out, and
the PyTorch logistic regression of the classification tasks.

The logistic regression is ``senteval/tools/classifier.py``, ``MLP`` with nhid = 0, trained for many
(train set, L2) settings at once. The literature setting of SentEval (README, "comparable to the
literature": ``usepytorch=True, kfold=10``, classifier
``{'nhid': 0, 'optim': 'adam', 'batch_size': 64, 'tenacity': 5, 'epoch_size': 4}``; Conneau & Kiela 2018)
trains each model as follows, reproduced here: numpy and torch are seeded (1111) when
the classifier is built, so every model starts from the same Linear(d → c) initialisation and draws the same
stream of ``np.random.permutation``s; with ``validation_split`` (the final fits) one permutation of the full
set is drawn first to split off the dev part (its first 5%); then chunks of 4 epochs of mini-batches of 64
(one permutation per epoch) with cross-entropy (mean over the batch; SentEval's ``size_average = False`` is
ignored by torch ≥ 0.4.1) and Adam (lr 1e-3, coupled L2 ``weight_decay`` = the regularisation, on weights and
bias), a dev-accuracy check after each chunk while the epoch count is ≤ 200, keeping the best model and
stopping at the check where 5 earlier checks already failed to improve (the counter is never reset).

Models with the same training-set size and stream draw identical permutations, so they are trained together
as one batch of linear models (``bmm`` on gathered mini-batches), with the gradient and torch's Adam update
written out; a model that stops early leaves the batch. The arithmetic per model is SentEval's.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.console import Heartbeat
from benchbox.errors import BenchboxError
from benchbox.threads import one_thread

torch = lazy_module("torch")  # imported at first use: the command line starts without it

#: mini-batch size of both SentEval probes (the classifier's config and ``tools/relatedness.py``)
BATCH_SIZE = 64
#: the logistic regression's schedule: epochs per dev check, last epoch count checked, non-improving checks allowed
EPOCH_SIZE = 4
MAX_EPOCH = 200
TENACITY = 5
#: SentEval's L2 grid for the PyTorch classifier: 1e-5 … 1e-2
REGS = tuple(10.0**t for t in range(-5, -1))
#: seconds between the progress lines of a probe's training (the first comes after its first check)
PROGRESS_SECONDS = 10.0
ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
"""``torch.optim.Adam``'s defaults, which SentEval's probes use (no weight decay in the optimiser)."""


@dataclass(frozen=True)
class FitSpec:
    """One model: train and dev row indices into the feature matrix, its L2, and the length of a
    permutation drawn from the seeded stream before training (``validation_split`` fits; 0 otherwise)."""

    train: np.ndarray
    valid: np.ndarray
    l2: float
    prefix: int = 0


@dataclass(frozen=True)
class FittedLogReg:
    """A trained model: weights [c, d + 1] (bias last) of the best check, and its dev accuracy (0–1)."""

    weights: torch.Tensor
    dev_accuracy: float

    def predict(self, x: torch.Tensor) -> np.ndarray:
        """Class predictions for augmented features ``x`` [n, d + 1]."""
        return (x @ self.weights.T).argmax(dim=1).cpu().numpy()


def _check_pair(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape or a.ndim != 2:
        raise BenchboxError(f"pair embeddings must be two [n, d] arrays of one shape, got {a.shape} and {b.shape}")


def pair_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SentEval's pair features ``np.c_[|a − b|, a * b]`` (float32): relatedness, MRPC and SICK-E."""
    _check_pair(a, b)
    return np.concatenate([np.abs(a - b), a * b], axis=1).astype(np.float32)


def nli_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's SNLI features ``np.hstack((u, v, u * v, |u − v|))`` (``senteval/snli.py``; float32)."""
    _check_pair(u, v)
    return np.concatenate([u, v, u * v, np.abs(u - v)], axis=1).astype(np.float32)


def augment(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """Features as a float32 tensor on ``device`` with a constant-1 column (the bias input)."""
    t = torch.as_tensor(np.asarray(x, dtype=np.float32), device=device)
    return torch.cat([t, torch.ones(len(t), 1, device=device)], dim=1)


def initial_weights(input_dim: int, nclasses: int, seed: int) -> torch.Tensor:
    """SentEval's initial Linear(input_dim → nclasses) after ``torch.manual_seed(seed)``, [c, d + 1];
    the global torch RNG is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(input_dim, nclasses)
    return torch.cat([layer.weight.detach(), layer.bias.detach()[:, None]], dim=1)


class AdamScalars(NamedTuple):
    """The numbers of one Adam optimiser for :func:`adam_step_` (made by :func:`adam_scalars`). Those a tensor is
    multiplied, divided or shifted by are 0-dim float32 tensors: torch rounds a Python number to float32 before
    such an operation on a float32 tensor, so a 0-dim float32 tensor holding it gives the same bits, without
    wrapping the number in a new tensor at each call (about 1 µs each, of a relatedness step's 25 µs)."""

    lr: float
    beta1: float
    beta2: float
    beta2_tensor: torch.Tensor
    eps_tensor: torch.Tensor
    #: √(1 − β₂^step), refilled at each step
    correction2: torch.Tensor


def adam_scalars(device: torch.device | str = "cpu", lr: float = ADAM["lr"], beta1: float = ADAM["beta1"],
                 beta2: float = ADAM["beta2"], eps: float = ADAM["eps"]) -> AdamScalars:
    """:class:`AdamScalars` on ``device`` (defaults :data:`ADAM`)."""
    def scalar(value: float) -> torch.Tensor:
        return torch.tensor(value, dtype=torch.float32, device=device)

    return AdamScalars(lr, beta1, beta2, scalar(beta2), scalar(eps), scalar(1.0))


def adam_step_(w: torch.Tensor, grad: torch.Tensor, m: torch.Tensor, v: torch.Tensor, step: int,
               adam: AdamScalars, denom: Optional[torch.Tensor] = None) -> None:
    """One in-place Adam update of ``w`` (step counted from 1), the arithmetic of ``torch.optim.Adam``; the
    weights may carry a leading model dimension (several fits at once). ``denom``, a buffer shaped as ``w``,
    spares an allocation per step. TorchScript compiles it too (the relatedness regressor's epoch loop)."""
    m.lerp_(grad, 1 - adam.beta1)
    v.mul_(adam.beta2_tensor).addcmul_(grad, grad, value=1 - adam.beta2)
    if denom is None:
        denom = torch.empty_like(v)
    correction2 = adam.correction2.fill_((1 - adam.beta2**step) ** 0.5)
    torch.sqrt(v, out=denom).div_(correction2).add_(adam.eps_tensor)
    w.addcdiv_(m, denom, value=-adam.lr / (1 - adam.beta1**step))


def split_validation(n: int, seed: int, fraction: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """SentEval's ``validation_split``: (train, dev) positions from the first permutation of the seeded
    stream; dev is its first ⌊fraction · n⌋ entries."""
    permutation = np.random.RandomState(seed).permutation(n)
    cut = int(fraction * n)
    return permutation[cut:], permutation[:cut]


def fit_logregs(x: torch.Tensor, y: np.ndarray, nclasses: int, specs: list[FitSpec], *, seed: int = 1111,
                epoch_size: int = EPOCH_SIZE, max_epoch: int = MAX_EPOCH,
                log: Callable[[str], None] = lambda message: None,
                clock: Callable[[], float] = time.monotonic) -> list[FittedLogReg]:
    """Train one SentEval logistic regression per spec on the augmented features ``x`` (see the module
    docstring; ``epoch_size`` and ``max_epoch`` are the classifier's, which SNLI changes to 1 and 15);
    returns them in the order of ``specs``. On one CPU thread (:func:`benchbox.threads.one_thread`: every
    step is a mini-batch of 64 rows). ``log`` gets a progress line after the first dev check, then after a
    check every :data:`PROGRESS_SECONDS`."""
    y_t = torch.as_tensor(np.asarray(y, dtype=np.int64), device=x.device)
    if len(y_t) != len(x) or (len(y_t) and (int(y_t.min()) < 0 or int(y_t.max()) >= nclasses)):
        raise BenchboxError(f"labels must be one per row, in 0..{nclasses - 1}")
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, spec in enumerate(specs):
        if len(spec.train) == 0 or len(spec.valid) == 0:
            raise BenchboxError("every logistic-regression fit needs non-empty train and dev sets")
        groups[(len(spec.train), spec.prefix)].append(i)
    out: list[FittedLogReg | None] = [None] * len(specs)
    init = initial_weights(x.shape[1] - 1, nclasses, seed).to(x.device)
    started, heartbeat, trained = clock(), Heartbeat(PROGRESS_SECONDS, clock), 0

    def checked(nepoch: int, training: int) -> None:
        if heartbeat.due():
            log(f"probes: {trained} of {len(specs)} logistic regressions trained, {training} at epoch {nepoch} (of "
                f"at most {max_epoch + epoch_size}), {clock() - started:.0f} s")

    with one_thread():
        for (n, prefix), members in groups.items():
            group = _fit_group(x, y_t, init, [specs[i] for i in members], n, prefix, seed, epoch_size, max_epoch,
                               checked)
            for i, fitted in zip(members, group):
                out[i] = fitted
            trained += len(members)
    return out  # type: ignore[return-value]


def _fit_group(x: torch.Tensor, y: torch.Tensor, init: torch.Tensor, specs: list[FitSpec], n: int, prefix: int,
               seed: int, epoch_size: int, max_epoch: int,
               checked: Callable[[int, int], None]) -> list[FittedLogReg]:
    """Models sharing the permutation stream (same train size and prefix), trained side by side;
    ``checked(epochs, models still training)`` after each dev check."""
    device = x.device
    m_count = len(specs)
    rng = np.random.RandomState(seed)
    if prefix:
        rng.permutation(prefix)
    idx = torch.as_tensor(np.stack([s.train for s in specs]), device=device)
    valid = torch.zeros(m_count, len(x), dtype=torch.bool, device=device)
    for j, s in enumerate(specs):
        valid[j, torch.as_tensor(s.valid, device=device)] = True
    n_valid = valid.sum(dim=1).double()
    decay = torch.tensor([s.l2 for s in specs], dtype=torch.float32, device=device)[:, None, None]
    w = init.expand(m_count, -1, -1).clone()
    m, v, adam = torch.zeros_like(w), torch.zeros_like(w), adam_scalars(device)
    best_w = w.clone()
    best_acc = [-1.0] * m_count
    bad = [0] * m_count
    alive = list(range(m_count))  # model ids still training, in the row order of w, m, v, idx, valid, decay
    step, nepoch = 0, 0
    while alive and nepoch <= max_epoch:
        for _ in range(epoch_size):
            order = idx[:, torch.as_tensor(rng.permutation(n), device=device)]
            for start in range(0, n, BATCH_SIZE):
                rows = order[:, start:start + BATCH_SIZE]
                xb = x[rows]  # [M, B, d + 1]
                p = torch.softmax(torch.bmm(xb, w.transpose(1, 2)), dim=2)
                p.scatter_add_(2, y[rows][:, :, None], torch.full_like(p[:, :, :1], -1.0))
                grad = torch.bmm(p.div_(rows.shape[1]).transpose(1, 2), xb).add_(w * decay)
                step += 1
                adam_step_(w, grad, m, v, step, adam)
        nepoch += epoch_size
        pred = torch.matmul(x, w.transpose(1, 2)).argmax(dim=2)  # [M, N]
        acc = (((pred == y) & valid).sum(dim=1).double() / n_valid).tolist()
        keep = []
        for row, model in enumerate(alive):
            if acc[row] > best_acc[model]:
                best_acc[model] = acc[row]
                best_w[model] = w[row]
                keep.append(row)
            elif bad[model] >= TENACITY:
                continue
            else:
                bad[model] += 1
                keep.append(row)
        if len(keep) < len(alive):
            rows_t = torch.as_tensor(keep, device=device, dtype=torch.long)
            w, m, v, idx, valid, n_valid, decay = (t[rows_t] for t in (w, m, v, idx, valid, n_valid, decay))
            alive = [alive[r] for r in keep]
        if alive:
            checked(nepoch, len(alive))
    return [FittedLogReg(best_w[j], best_acc[j]) for j in range(m_count)]

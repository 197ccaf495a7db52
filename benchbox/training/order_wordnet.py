"""Training order embeddings of WordNet's noun synsets for hypernym prediction (Vendrov et al. 2016, §4.1),
behind ``benchbox train order-wordnet``; the split, the negatives and the scoring are the ``hypernym`` task's
(:mod:`benchbox.tasks.hypernym`, docs/protocols.md#hypernym-prediction).

Protocol (the authors' ``main.lua`` and ``HypernymScore.lua``, ivendrov/order-embeddings-wordnet, run as its
README says, ``--epochs 20``): one ``dim``-dimensional vector per synset (50; initialised N(0, 1) as Torch's
``LookupTable``), kept in the non-negative orthant by setting negative coordinates to 0 (the authors clamp
before every step; here after every step and at the start, so the vectors scored are always non-negative); the
penalty E(u, a) = ‖max(0, f(a) − f(u))‖²; every epoch the training positives and one fresh random corruption
of each (:func:`benchbox.data.wordnet.corrupt`) are shuffled together and cut into minibatches of 1000 (the
tail shorter than a batch is dropped, as ``Dataset:minibatch`` does); the loss is the max-margin loss
averaged over the batch — E for a positive, max(0, α − E) for a negative, α = 1 (Torch's
``HingeEmbeddingCriterion``); Adam, learning rate 0.01, on the whole matrix (dense, as Torch's ``optim.adam``).

Every ``eval_every`` steps (100) the threshold is chosen on dev and dev accuracy recorded (test accuracy too,
in the history only). Departure: the authors keep the weights of the best *test* accuracy over these
evaluations; here the weights of the best *dev* accuracy are kept and scored once on test at the end (the
history still shows the best test accuracy the authors' rule would report).

The run folder: ``embeddings.npy`` and ``concepts.txt`` (:mod:`benchbox.encoders.order_wordnet`; ``benchbox eval
RUN --task hypernym`` reloads them), ``history.csv`` (one row per evaluation) and ``manifest.json``
(``"kind": "train"``, ``"encoder": {"name": "order-wordnet", ...}``) whose ``"evaluation"`` holds the test
accuracy with its Wilson interval, the dev accuracy and threshold, and the transitive-closure baseline.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from benchbox.console import log
from benchbox.data.wordnet import corrupt, wordnet_files
from benchbox.encoders.order_wordnet import CONCEPTS_FILE, EMBEDDINGS_FILE, OrderWordNet
from benchbox.errors import BenchboxError
from benchbox.storage.atomic import atomic_path, write_text
from benchbox.storage.outdir import check_writable, output_lock
from benchbox.storage.runs import MANIFEST, new_run_id
from benchbox.tasks.hypernym import (HypernymData, HypernymScores, closure_predictions, percent_record,
                                     score_embeddings)
from benchbox.training.finite import FiniteGuard
from benchbox.training.order_wordnet_config import OrderWordNetConfig
from benchbox.training.run_manifest import HISTORY_FILE, RunManifest
from benchbox.training.stop import StopRequest

def max_margin_gradient(weight: torch.Tensor, hypo: torch.Tensor, hyper: torch.Tensor, positive: torch.Tensor,
                        margin: float) -> float:
    """The batch's loss, mean over pairs of E (positives) and max(0, α − E) (negatives), E = ‖max(0, f(a) −
    f(u))‖²; its gradient is written into ``weight.grad`` (by hand: autograd allocates a dense gradient of the
    whole matrix at every step; a step took 60 ms with it and 43 ms without on the shared 2-core machine)."""
    violation = torch.relu(weight[hyper] - weight[hypo])
    penalty = violation.square().sum(1)
    # dL/dE: 1/B for a positive, -1/B for a negative inside the margin; dE/df(a) = 2 violation = -dE/df(u)
    slope = torch.where(positive, 1.0, -(penalty < margin).to(penalty.dtype)) * (2.0 / len(penalty))
    grad = violation * slope[:, None]
    weight.grad.zero_()
    weight.grad.index_add_(0, hyper, grad)
    weight.grad.index_add_(0, hypo, -grad)
    return torch.where(positive, penalty, torch.relu(margin - penalty)).mean().item()


PROTOCOL = "Vendrov et al. 2016, §4.1 (ivendrov/order-embeddings-wordnet main.lua defaults, --epochs 20)"


class OrderWordNetTrainer:
    """Runs the protocol above and writes the run folder."""

    def __init__(self, config: OrderWordNetConfig, out: Path, data: HypernymData, label: str | None = None) -> None:
        self.config = config
        self.out = out
        self.data = data
        self.label = label
        self.manifest = RunManifest(out)
        self.guard = FiniteGuard()
        self.stop = StopRequest()
        #: the signal that stopped training (None: it ran to the end); the CLI exits 128 + it
        self.stopped_by_signal: int | None = None
        self.history: list[dict[str, float]] = []

    @classmethod
    def from_config(cls, config: OrderWordNetConfig, out: Path | None = None, runs_dir: Path = Path("runs"),
                    label: str | None = None) -> OrderWordNetTrainer:
        """Check the run folder (``runs_dir``/<new id> by default) and build the split from WordNet."""
        out = Path(out) if out else runs_dir / new_run_id("order-wordnet")
        if (out / MANIFEST).exists():
            raise BenchboxError(f"{out} already holds a run: choose another --out")
        wordnet_files(config.wordnet)  # a missing WordNet is one line before the run folder is made
        check_writable(out)
        data = HypernymData.build(config.wordnet, config.held_out, config.split_seed)
        return cls(config, out, data, label)

    def run(self) -> Path:
        with output_lock(self.out), self.stop.installed():
            return self._run()

    def _run(self) -> Path:
        cfg, data = self.config, self.data
        n = len(data.nouns)
        self._start_manifest()
        torch.manual_seed(cfg.seed)
        rng = np.random.RandomState(cfg.seed)
        weight = torch.randn(n, cfg.dim).clamp_(min=0)
        weight.grad = torch.zeros_like(weight)
        optimizer = torch.optim.Adam([weight], lr=cfg.lr, fused=True)
        best: tuple[float, np.ndarray] | None = None
        step, started = 0, time.perf_counter()
        train = data.split.train
        for epoch in range(1, cfg.epochs + 1):
            pairs = np.concatenate([train, corrupt(train, n, rng)])
            target = torch.from_numpy(np.repeat([True, False], len(train)))
            order = torch.from_numpy(rng.permutation(len(pairs)))
            hypo, hyper = torch.from_numpy(pairs[:, 0]), torch.from_numpy(pairs[:, 1])
            for start in range(0, len(pairs) - cfg.batch_size + 1, cfg.batch_size):
                idx = order[start: start + cfg.batch_size]
                loss = max_margin_gradient(weight, hypo[idx], hyper[idx], target[idx], cfg.margin)
                step += 1
                self.guard.check_loss(step, "max-margin", loss)
                optimizer.step()
                weight.clamp_(min=0)
                if step % cfg.eval_every == 0:
                    self.guard.check_weights(step, [weight], hint="lower --lr")
                    embeddings = weight.numpy().copy()
                    scores = score_embeddings(data, embeddings)
                    self._record(epoch, step, loss, scores, time.perf_counter() - started)
                    if best is None or scores.dev_accuracy > best[0]:
                        best = (scores.dev_accuracy, embeddings)
                if self.stop.check():
                    self.stopped_by_signal = self.stop.signum
                    break
            if self.stopped_by_signal is not None:
                break
        if best is None:
            best = (0.0, weight.numpy().copy())
        self._finish(best[1], time.perf_counter() - started)
        return self.out

    def _record(self, epoch: int, step: int, loss: float, scores: HypernymScores, seconds: float) -> None:
        row = {"epoch": epoch, "step": step, "loss": loss, "dev_acc": 100 * scores.dev_accuracy,
               "test_acc": 100 * scores.correct / len(scores.gold), "seconds": seconds}
        self.history.append(row)
        if step % (10 * self.config.eval_every) == 0:
            log(f"epoch {epoch} step {step}: loss {loss:.4f}, dev acc {row['dev_acc']:.2f} ({seconds:.0f} s)")

    def _start_manifest(self) -> None:
        split = self.data.split
        self.manifest.start(
            kind="train", status="running", **({"label": self.label} if self.label else {}),
            encoder={"name": OrderWordNet.name, "config": {"concepts": len(self.data.nouns),
                                                           "hypernym_split": split.digest()}},
            training={**asdict(self.config), "protocol": PROTOCOL,
                      "pairs": {"train": len(split.train), "dev": len(split.dev), "test": len(split.test)}},
        )
        self.manifest.save()

    def _finish(self, embeddings: np.ndarray, seconds: float) -> None:
        """The best-dev embeddings, their test evaluation beside the closure baseline, history and manifest."""
        with atomic_path(self.out / EMBEDDINGS_FILE) as path, open(path, "wb") as handle:
            np.save(handle, embeddings.astype(np.float32))
        write_text(self.out / CONCEPTS_FILE, "\n".join(self.data.nouns.names) + "\n")
        columns = ("epoch", "step", "loss", "dev_acc", "test_acc", "seconds")
        write_text(self.out / HISTORY_FILE, "\n".join([",".join(columns)] + [
            ",".join(f"{row[c]:.6g}" for c in columns) for row in self.history]) + "\n")
        scores = score_embeddings(self.data, embeddings)
        closure = closure_predictions(self.data)
        n = len(scores.gold)
        evaluation = {
            "accuracy": percent_record("hypernym", "accuracy", scores.correct, n).to_dict(),
            "closure_accuracy": percent_record("hypernym", "closure-accuracy",
                                               int((closure == scores.gold).sum()), n).to_dict(),
            "dev_accuracy": 100 * scores.dev_accuracy, "threshold": scores.threshold,
            "best_test_in_history": max((row["test_acc"] for row in self.history), default=None),
            "train_seconds": seconds,
        }
        self.manifest.fields["evaluation"] = evaluation
        log(f"test accuracy {evaluation['accuracy']['value']:.2f}% (closure baseline "
            f"{evaluation['closure_accuracy']['value']:.2f}%), {seconds:.0f} s of training")
        if self.stopped_by_signal is not None:
            self.manifest.save(status="interrupted", history=self.history)
        else:
            self.manifest.complete(history=self.history)

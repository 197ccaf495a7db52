"""Training InferSent on natural language inference (Conneau et al. 2017, Section 3; ``train_nli.py`` of
facebookresearch/InferSent), behind ``benchbox train infersent``.

Protocol (``train_nli.py`` defaults): premise u and hypothesis v are encoded by the BiLSTM-max encoder
(fixed word vectors, ``<s> … </s>`` markers); a classifier on [u, v, |u − v|, u ⊙ v] (fc_dim 512; by
default three linear layers with no nonlinearity, ``nonlinear_fc 0``) predicts entailment / neutral /
contradiction with cross-entropy averaged over the batch. SGD, learning rate 0.1, batch 64, the training
pairs shuffled every epoch; the gradient is rescaled to norm 5 when larger; the learning rate is multiplied
by 0.99 at the start of every epoch after the first and divided by 5 whenever dev accuracy does not improve
on the best so far; training stops when it falls below 1e-5 (or after ``epochs``, 20 by default). The model
with the best dev accuracy is kept and finally scored on dev and test.

Data: a SentEval-style NLI folder, SNLI or MultiNLI (:mod:`.nli_data`). The run folder holds ``encoder.pkl`` (the encoder's state dict
with the official key names, loadable like ``infersent1.pkl``), ``classifier.pt``, ``history.csv`` and a
``manifest.json`` (``"kind": "train"``, ``"encoder": {"name": "infersent", "config": ...}``) through which
``benchbox eval <run folder>`` loads the encoder (:meth:`InferSentEncoder.from_path`). With the char-RNN
trainer it shares the manifest (:mod:`.run_manifest`), the non-finite guard (:mod:`.finite`) and the stop on
SIGINT/SIGTERM (:mod:`.stop`; the run is marked ``interrupted``, the best model so far kept). As there,
:meth:`NLITrainer.from_config` reads the data and builds the model; the constructor only assigns.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchbox.storage.atomic import torch_save, write_text
from benchbox.console import log
from benchbox.encoders.infersent import WEIGHTS_FILE
from benchbox.encoders.infersent_net import PADDING_MODES, BiLSTMMax, NLINet, embed_batch
from benchbox.encoders.infersent_text import sentence_rows
from benchbox.errors import BenchboxError
from benchbox.storage.outdir import check_writable, output_lock
from benchbox.storage.runs import MANIFEST, new_run_id
from benchbox.training.finite import FiniteGuard
from benchbox.training.nli_config import NLIConfig
from benchbox.training.nli_data import NLISplit, read_split
from benchbox.training.run_manifest import HISTORY_FILE, RunManifest
from benchbox.training.stop import StopRequest
from benchbox.data.wordvec import WordVectors, load_word_vectors

#: the classifier's output beside the encoder's ``encoder.pkl``
CLASSIFIER_FILE = "classifier.pt"
#: one split prepared for the network: premise rows, hypothesis rows (word vectors per sentence), labels
Prepared = tuple[list[np.ndarray], list[np.ndarray], np.ndarray]


class NLITrainer:
    """Runs the protocol above and writes the run folder."""

    def __init__(self, config: NLIConfig, out: Path, *, splits: tuple[NLISplit, NLISplit, NLISplit | None],
                 vectors: WordVectors, net: NLINet, device: torch.device, rng: np.random.RandomState,
                 label: str | None = None) -> None:
        self.config = config
        #: the model's label (``--name``), stored in the manifest; its evaluation runs inherit it
        self.label = label
        self.out = out
        self.train, self.dev, self.test = splits
        self.vectors = vectors
        self.lowercase = vectors.lowercase_vocab
        self.net = net
        self.device = device
        #: the order of the training pairs, shuffled every epoch
        self.rng = rng
        #: training steps so far, and the non-finite check of every step (:mod:`benchbox.training.finite`)
        self.steps = 0
        self.guard = FiniteGuard()
        self.history: list[dict[str, float]] = []
        self.manifest = RunManifest(out)
        #: SIGINT/SIGTERM stop training after the current step (:mod:`benchbox.training.stop`)
        self.stop = StopRequest()
        #: the signal that stopped training (None: it ran to the end); the CLI exits 128 + it
        self.stopped_by_signal: int | None = None

    @classmethod
    def from_config(cls, config: NLIConfig, out: Path | None = None, runs_dir: Path = Path("runs"),
                    label: str | None = None) -> NLITrainer:
        """Check the run folder (``runs_dir``/<new id> by default), read the NLI splits and the word vectors,
        and build the seeded network; ``label``: the model's label (``--name``)."""
        if config.padding not in PADDING_MODES:
            raise BenchboxError(f"--padding must be one of {', '.join(PADDING_MODES)}")
        out = Path(out) if out else runs_dir / new_run_id("infersent")
        if (out / MANIFEST).exists():
            raise BenchboxError(f"{out} already holds a run: choose another --out")
        check_writable(out)  # before reading data and vectors, not at the first write
        folder = Path(config.nli).expanduser()
        splits = (read_split(folder, config.train_split, config.max_train),
                  read_split(folder, config.dev_split, config.max_dev),
                  read_split(folder, config.test_split) if config.test_split else None)
        vectors = config.word_vectors
        if vectors and Path(vectors).expanduser().exists():  # absolute, so the run folder loads from anywhere
            vectors = str(Path(vectors).expanduser().resolve())
        word_vectors = load_word_vectors(vectors)
        if config.word_vectors is None:
            log("word vectors: the packaged GloVe 6B 50-d (the paper used GloVe 840B 300-d: --vectors PATH)")
        device = torch.device("cuda" if config.device == "auto" and torch.cuda.is_available() else
                              ("cpu" if config.device == "auto" else config.device))
        torch.manual_seed(config.seed)
        rng = np.random.RandomState(config.seed)
        encoder = BiLSTMMax(word_vectors.dim, config.hidden, config.padding)
        net = NLINet(encoder, config.fc_dim, 3, config.nonlinear_fc, config.dropout_fc).to(device)
        return cls(config, out, splits=splits, vectors=word_vectors, net=net, device=device, rng=rng, label=label)

    def encoder_config(self) -> dict[str, Any]:
        """What :meth:`InferSentEncoder.from_path` needs to rebuild the encoder."""
        return {
            "version": 1, "tokenize": "split", "padding": self.config.padding, "bsize": 64,
            "vectors": self.vectors.source, "lowercase": self.lowercase, "word_dim": self.vectors.dim,
            "hidden": self.config.hidden,
        }

    def _rows(self, sentences: list[str]) -> list[np.ndarray]:
        index = self.vectors.index
        table = self.vectors.vectors
        out = []
        for s in sentences:
            rows = sentence_rows((s.lower() if self.lowercase else s).split(), index, 1)
            out.append(np.zeros((1, self.vectors.dim), np.float32) if rows == [-1]
                       else np.asarray(table[np.asarray(rows)], dtype=np.float32))
        return out

    def _batch(self, vectors: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        words, lengths = embed_batch(vectors)
        return words.to(self.device), lengths

    def _prepare(self, split: NLISplit) -> Prepared:
        return self._rows(split.s1), self._rows(split.s2), split.labels

    @torch.no_grad()
    def accuracy(self, data: Prepared) -> float:
        s1, s2, labels = data
        self.net.eval()
        correct = 0
        bs = self.config.batch_size
        for i in range(0, len(labels), bs):
            logits = self.net(self._batch(s1[i : i + bs]), self._batch(s2[i : i + bs]))
            correct += int((logits.argmax(1).cpu().numpy() == labels[i : i + bs]).sum())
        return 100.0 * correct / len(labels)

    def _epoch(self, data: Prepared, optimizer: torch.optim.SGD) -> tuple[float, float]:
        s1, s2, labels = data
        self.net.train()
        order = self.rng.permutation(len(labels))
        bs = self.config.batch_size
        losses, correct = [], 0
        for i in range(0, len(order), bs):
            idx = order[i : i + bs]
            target = torch.from_numpy(labels[idx]).to(self.device)
            logits = self.net(self._batch([s1[j] for j in idx]), self._batch([s2[j] for j in idx]))
            loss = torch.nn.functional.cross_entropy(logits, target)
            self.steps += 1
            self.guard.check_loss(self.steps, "cross-entropy", loss.item())  # stops before NaN reaches the weights
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.config.max_norm)
            optimizer.step()
            self.guard.check_weights(self.steps, self.net.parameters(), hint="lower --lr")
            losses.append(loss.item())
            correct += int((logits.argmax(1) == target).sum())
            if self.stop.check():
                break
        return float(np.mean(losses)), 100.0 * correct / len(labels)

    def run(self) -> Path:
        with output_lock(self.out), self.stop.installed():  # no second process writes into the same run folder
            return self._run()

    def _run(self) -> Path:
        cfg = self.config
        self._start_manifest()
        train, dev = self._prepare(self.train), self._prepare(self.dev)
        optimizer = torch.optim.SGD(self.net.parameters(), lr=cfg.lr)
        best = -1.0
        for epoch in range(1, cfg.epochs + 1):
            if epoch > 1:
                optimizer.param_groups[0]["lr"] *= cfg.decay
            lr = optimizer.param_groups[0]["lr"]
            loss, train_acc = self._epoch(train, optimizer)
            if self.stop.check():  # the interrupted epoch is dropped; the best model so far stays in the folder
                self.stopped_by_signal = self.stop.signum
                self.manifest.save(status="interrupted", history=self.history)
                return self.out
            dev_acc = self.accuracy(dev)
            self.history.append({"epoch": epoch, "lr": lr, "loss": loss, "train_acc": train_acc, "dev_acc": dev_acc})
            log(f"epoch {epoch}: lr {lr:.5g}, loss {loss:.4f}, train acc {train_acc:.2f}, dev acc {dev_acc:.2f}")
            if dev_acc > best:
                best = dev_acc
                self._save_best(epoch, dev_acc)
            else:
                optimizer.param_groups[0]["lr"] /= cfg.lr_shrink
                if optimizer.param_groups[0]["lr"] < cfg.min_lr:
                    break
            self.manifest.save(history=self.history)
        self._finish()
        return self.out

    def _start_manifest(self) -> None:
        self.manifest.start(
            kind="train", status="running", **({"label": self.label} if self.label else {}),
            encoder={"name": "infersent", "config": self.encoder_config()},
            training={**asdict(self.config), "protocol": "Conneau et al. 2017 (train_nli.py defaults)",
                      "pairs": {"train": len(self.train.labels), "dev": len(self.dev.labels),
                                "test": len(self.test.labels) if self.test else 0}},
        )
        self.manifest.save()

    def _save_best(self, epoch: int, dev_acc: float) -> None:
        """The model of the best dev accuracy so far: the encoder (official key names) and the classifier."""
        encoder_state = {k: v.detach().cpu() for k, v in self.net.encoder.state_dict().items()}
        torch_save(encoder_state, self.out / WEIGHTS_FILE)
        torch_save({k: v.detach().cpu() for k, v in self.net.classifier.state_dict().items()},
                   self.out / CLASSIFIER_FILE)
        self.manifest.fields["best"] = {"epoch": epoch, "dev_accuracy": dev_acc}

    def _finish(self) -> None:
        """Back to the best model; its test accuracy, ``history.csv`` and the completed manifest."""
        state = torch.load(self.out / WEIGHTS_FILE, map_location=self.device, weights_only=True)
        self.net.encoder.load_state_dict(state)
        self.net.classifier.load_state_dict(
            torch.load(self.out / CLASSIFIER_FILE, map_location=self.device, weights_only=True)
        )
        if self.test is not None:
            self.manifest.fields["best"]["test_accuracy"] = self.accuracy(self._prepare(self.test))
        lines = ["epoch,lr,loss,train_acc,dev_acc"] + [
            f"{h['epoch']},{h['lr']:.8g},{h['loss']:.6f},{h['train_acc']:.4f},{h['dev_acc']:.4f}" for h in self.history
        ]
        write_text(self.out / HISTORY_FILE, "\n".join(lines) + "\n")
        self.manifest.complete(history=self.history)

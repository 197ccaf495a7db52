"""The training loop of the character-level grounded encoders (Merkx & Frank 2019, docs/protocols.md#char-rnn-encoders).

Adam (:mod:`.optimizer`), minibatches of 32 (:mod:`.batching`), the cyclic cosine learning rate set before every step
(:mod:`.schedule`), the weighted terms of ``--loss`` (:mod:`.losses`; with the textual term every step also
encodes a batch of consecutive sentences of ``--text-corpus``, :mod:`.text_corpus`, and minimises the sum of
all terms on both batches in one update; with the textual term alone a step is a text batch only and an epoch a
pass over the corpus), optionally from another run's sentence encoder (``--init-from``, :mod:`.init_from`), a snapshot at the end of every cycle
(4 epochs; also after the last epoch when the epochs are not a whole number of cycles) scored on dev retrieval
and, optionally, on semantic tasks, and at the end the ensemble of the two best snapshots (:mod:`.snapshots`).
The run folder is ``manifest.json`` (:mod:`.run_manifest`; ``"kind": "train"``, the encoder name and
architecture, the configuration, data provenance, snapshots with their scores, ``ensemble``),
``checkpoint.pt`` (:mod:`.checkpoint`; resumable state, every ``checkpoint_every`` steps, at every epoch end
and when stopped by SIGINT/SIGTERM, see :mod:`.stop`), ``snapshots/epoch-NNN.pt``, ``history.csv`` (per
epoch: the mean loss and, as ``loss_<term>``, the mean of each weighted term of ``--loss``; the terms sum to
the loss) and ``semantic.csv`` (per snapshot, with ``--eval-semantic``). The manifest says
``"status": "running" | "stopped" | "complete"`` (a run stopped by SIGINT/SIGTERM: ``"stopped_at_step"``).

Distributed under ``torchrun``: :mod:`.distributed`. :meth:`Trainer.from_config` loads the data, builds the
model and restores a checkpoint; the constructor only assigns.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchbox.storage.atomic import atomic_path
from benchbox.console import log
from benchbox.encoders.char_rnn import best_snapshots
from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig
from benchbox.encoders.char_vocab import CharVocab
from benchbox.errors import BenchboxError
from benchbox.storage.outdir import output_lock
from benchbox.storage.runs import MANIFEST, new_run_id
from benchbox.threads import set_threads
from benchbox.training.batching import CAPTIONS_PER_IMAGE, Batch, epoch_plan
from benchbox.training.checkpoint import CHECKPOINT_FILE, Position, restore, resume_state, save_checkpoint
from benchbox.training.clips import attended_clip_vectors, clip_queries
from benchbox.training.config import TrainConfig
from benchbox.training.data import SplitData, TrainingData, load_training_data
from benchbox.training.distributed import Distributed
from benchbox.training.finite import FiniteGuard, NonFiniteTraining
from benchbox.training.footprint import require_training_memory
from benchbox.training.init_from import read_source_run, start_from
from benchbox.training.losses import needs_nonnegative_embeddings, needs_visual_vectors, weighted_terms
from benchbox.training.optimizer import adam
from benchbox.training.progress import TrainingProgress
from benchbox.training.run_manifest import HISTORY_FILE, RunManifest
from benchbox.training.schedule import cyclic_cosine_lr
from benchbox.training.snapshots import SNAPSHOTS, take_snapshot, with_snapshot
from benchbox.training.stop import StopRequest
from benchbox.training.text_corpus import TextCorpus, chunks_per_pass, neighbour_mask, text_batch

#: called after every step with the global step; returning True stops training (checkpoint written)
StepHook = Callable[[int], bool]
#: what a snapshot's ``score`` is, without / with ``--visual cluster`` (see :mod:`.selection`)
SELECTION = ("mean dev R@10 of image→caption and caption→image",
             "dev caption→image-cluster R@10 (leave-one-out caption centroids; no image branch)")


class Trainer:
    """Trains one run; ``run()`` returns the run folder. The run folder is locked (and checked writable) by
    :meth:`from_config` until ``run()`` returns; a run stopped before its first checkpoint restarts cleanly."""

    def __init__(self, config: TrainConfig, out: Path, data: TrainingData, net: CharRNNNet,
                 optimizer: torch.optim.Optimizer, *, dist: Distributed, position: Position | None = None,
                 lock: ExitStack | None = None, step_hook: StepHook | None = None, label: str | None = None,
                 init_from: dict[str, Any] | None = None) -> None:
        self.config = config
        self.out = out
        self.data = data
        self.net = net
        self.optimizer = optimizer
        self.dist = dist
        #: whether training continues from a checkpoint (``position``)
        self.resumed = position is not None
        self.position = position if position is not None else Position()
        #: global step of the last checkpoint written (None: none yet in this process)
        self.checkpoint_step: int | None = self.position.global_step if self.resumed else None
        self._output = lock or ExitStack()  # the lock on the run folder, held until run() returns
        self.step_hook = step_hook
        #: the model's label (:mod:`benchbox.labels`), stored in the manifest as ``"label"`` when given
        self.label = label
        #: the manifest's record of the run the encoder weights came from (``--init-from``; None: random start)
        self.init_from = init_from
        self.manifest = RunManifest(out, writer=dist.is_main)
        self.guard = FiniteGuard()
        self.stop = StopRequest(checkpoint=out / CHECKPOINT_FILE)
        #: the signal (SIGINT/SIGTERM) that stopped :meth:`run` after its checkpoint; None when it did not
        self.stopped_by_signal: int | None = None
        #: ``time.perf_counter()`` less the current epoch's seconds before it (None between epochs)
        self._epoch_clock: float | None = None

    @classmethod
    def from_config(cls, config: TrainConfig, out: str | os.PathLike | None = None, *, resume: bool = False,
                    runs_dir: str | os.PathLike = "runs", step_hook: StepHook | None = None,
                    label: str | None = None) -> Trainer:
        """Lock the run folder (``runs_dir``/<new id> by default), load the data, build the model and, with
        ``resume``, restore the checkpoint of the run in ``out``, or with ``config.init_from`` start the sentence
        encoder from that run's (:mod:`.init_from`)."""
        dist = Distributed()
        threads = set_threads(config.threads)
        say = log if dist.is_main else (lambda message: None)
        folder = Path(dist.broadcast(str(out) if out else str(Path(runs_dir) / new_run_id(config.encoder))))
        if resume and config.init_from:
            raise BenchboxError("--init-from starts a new run; --resume continues the run in --out from its "
                                "checkpoint, which already holds the weights it started from: drop --init-from")
        source = read_source_run(config.init_from) if config.init_from else None
        lock = ExitStack()
        if dist.is_main:
            lock.enter_context(output_lock(folder))
        try:
            stored = resume_state(folder, resume=resume, is_main=dist.is_main)
            if stored is not None:
                config = config.check_resume(TrainConfig.from_dict(stored["config"]))
            if config.batch_size % dist.world:
                raise BenchboxError(f"the batch size {config.batch_size} must be divisible by the {dist.world} processes")
            say(f"loading the {config.dataset} captions (--visual {config.visual}) for the run in {folder} ...")
            started = time.perf_counter()
            data = load_training_data(config)
            if stored is not None and data.text is not None:
                _require_same_corpus(folder, data.text)
            say(f"loaded {len(data.train.captions):,} training and {len(data.dev.captions):,} dev captions in "
                f"{time.perf_counter() - started:.1f} s; building the network (hidden {config.hidden}) on "
                f"{dist.device}, {threads} CPU thread{'s' if threads > 1 else ''} ...")
            torch.manual_seed(config.seed)
            net = build_net(config, data, None if stored is None else CharVocab(tuple(stored["vocab"])), dist.device)
            started_from = start_from(source, net) if source is not None else None
            optimizer = adam(net.parameters(), lr=config.resolved_lr_max)
            position = None if stored is None else restore(stored, net, optimizer, folder / CHECKPOINT_FILE)
            if position is not None:
                say(f"resuming at step {position.global_step} (epoch {position.epoch + 1})")
        except BaseException:
            lock.close()
            raise
        return cls(config, folder, data, net, optimizer, dist=dist, position=position, lock=lock,
                   step_hook=step_hook, label=label, init_from=started_from)

    @cached_property
    def lengths(self) -> np.ndarray:
        """Characters per training caption (the epoch plans bucket by them)."""
        return self.data.train.lengths

    @cached_property
    def steps_per_epoch(self) -> int:
        return len(self._epoch_plan(0))

    def _epoch_plan(self, epoch: int) -> list[Batch | None]:
        """The caption minibatches of ``epoch`` (:func:`.batching.epoch_plan`); with the textual term alone, one
        None per text batch of a pass over the corpus (the text batch of a step is :func:`.text_corpus.text_batch`
        of its global step, so epoch e is pass e)."""
        if self.config.text_only:
            assert self.data.text is not None
            return [None] * chunks_per_pass(len(self.data.text.sentences), self.config.batch_size)
        return epoch_plan(self.lengths, batch_size=self.config.batch_size, seed=self.config.seed, epoch=epoch,
                          counts=self.data.train.counts)

    # ---------------------------------------------------------------- loop
    def run(self) -> Path:
        try:
            config = self.config
            self._open_run_folder()
            model = self.dist.wrap(self.net)
            self.net.train()
            stopped = False
            progress = TrainingProgress(f"train {config.encoder}", total=self.steps_per_epoch * config.epochs,
                                        done=self.position.global_step, batch_size=config.batch_size,
                                        main=self.dist.is_main)
            if self.dist.is_main:
                log(f"training {config.epochs} epoch{'s' if config.epochs > 1 else ''} of {self.steps_per_epoch} "
                    f"steps of {config.batch_size} {'sentences' if config.text_only else 'captions'}; the first step ...")
            with self.stop.installed(), progress, self._non_finite_stops():
                while self.position.epoch < config.epochs and not stopped:
                    stopped = self._train_epoch(model, progress)
            if stopped:
                self._stop_by_request()
            else:
                self._finish()
            self.dist.barrier()
            self.dist.close()
            return self.out
        finally:
            self._output.close()

    def _train_epoch(self, model: torch.nn.Module, progress: TrainingProgress) -> bool:
        """The rest of the current epoch, then its history row, snapshot and checkpoint; True when a stop was
        requested (by a signal or the step hook) before the epoch ended."""
        config, position = self.config, self.position
        epoch = position.epoch
        plan = self._epoch_plan(epoch)
        self._epoch_clock = time.perf_counter() - position.epoch_seconds  # a resumed epoch's earlier steps count
        steps_per_cycle = self.steps_per_epoch * config.cycle_epochs
        for batch in plan[position.step :]:
            lr = cyclic_cosine_lr(position.global_step, steps_per_cycle, config.resolved_lr_max, config.lr_min)
            loss, terms = self._step(model, batch, lr)
            position.epoch_losses.append(loss)
            for term, value in terms.items():
                position.epoch_terms.setdefault(term, []).append(value)
            position.step += 1
            position.global_step += 1
            progress.update(position.global_step, epoch, loss, lr)
            requested = self.stop.check() or bool(self.step_hook and self.step_hook(position.global_step))
            if self.dist.any(requested):
                return True
            if config.checkpoint_every and position.global_step % config.checkpoint_every == 0:
                self._save_checkpoint()
        self._end_epoch(epoch, len(plan), self._epoch_seconds())
        return False

    def _epoch_seconds(self) -> float:
        """Seconds spent on the current epoch's steps so far, in this process and before a resume."""
        return 0.0 if self._epoch_clock is None else time.perf_counter() - self._epoch_clock

    def _end_epoch(self, epoch: int, steps: int, seconds: float) -> None:
        """The epoch's history row; at a cycle end (or the last epoch) a snapshot; a checkpoint."""
        position, config = self.position, self.config
        losses = position.epoch_losses
        position.history.append({
            "epoch": epoch + 1, "loss": float(np.mean(losses)) if losses else float("nan"),
            "seconds": seconds, "captions_per_s": steps * config.batch_size / max(seconds, 1e-9),
            **{f"loss_{term}": float(np.mean(values)) for term, values in position.epoch_terms.items()},
        })
        position.epoch, position.step, position.epoch_losses = epoch + 1, 0, []
        position.epoch_terms, self._epoch_clock = {}, None
        if (epoch + 1) % config.cycle_epochs == 0 or epoch + 1 == config.epochs:
            self._snapshot(epoch + 1)
            self.dist.barrier()
        self._save_checkpoint()
        self._write_history()

    def _tensors(self, batch: Batch | None, text_rows: np.ndarray | None) -> tuple[Any, ...]:
        """This rank's share of a global minibatch (None with the textual term alone) and of the text batch
        ``text_rows``, as model inputs."""
        vocab, device = self.net.vocab, self.dist.device
        text_chars = text_lengths = None
        if text_rows is not None:
            assert self.data.text is not None
            text_chars, text_lengths = vocab.batch([self.data.text.sentences[i] for i in self.dist.share(text_rows)])
            text_chars = text_chars.to(device)
        if batch is None:
            return None, None, None, None, None, text_chars, text_lengths
        share, captions = self.dist.share, self.data.train.captions
        chars, lengths = vocab.batch([captions[i] for i in share(batch.captions)])
        train = self.data.train
        visual = frame_counts = queries = None
        if train.clips is not None:  # --visual attention: the frames, attended to in the model
            assert train.queries is not None
            clips = train.clips.take(share(batch.images))
            visual, frame_counts = torch.from_numpy(clips.frames).to(device), torch.from_numpy(clips.counts)
            queries = torch.from_numpy(train.queries[share(batch.captions)]).to(device)
        elif train.visual is not None:
            visual = torch.from_numpy(train.visual[share(batch.images)]).to(device)
        partner_chars = partner_lengths = None
        if self.config.needs_partner:
            partner_chars, partner_lengths = vocab.batch([captions[i] for i in share(batch.partners)])
            partner_chars = partner_chars.to(device)
        return (chars.to(device), lengths, visual, partner_chars, partner_lengths, text_chars, text_lengths,
                frame_counts, queries)

    def _text_rows(self) -> np.ndarray | None:
        """The corpus rows of this step's text batch (one per caption batch; None without the textual term)."""
        if self.data.text is None:
            return None
        return text_batch(len(self.data.text.sentences), batch_size=self.config.batch_size, seed=self.config.seed,
                          step=self.position.global_step)

    def _step(self, model: torch.nn.Module, batch: Batch | None, lr: float) -> tuple[float, dict[str, float]]:
        """One optimiser step on a caption batch (and, with the textual term, a text batch; with it alone, ``batch``
        None, a text batch only); returns the loss and its weighted terms (which sum to it)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        text_rows = self._text_rows()
        inputs = self._tensors(batch, text_rows)
        captions, images, partners, texts, visual = model(*inputs)
        gather = self.dist.gather
        visual = gather(visual) if needs_visual_vectors(self.config) else None
        text = None
        if text_rows is not None:
            assert self.data.text is not None
            neighbours = neighbour_mask(self.dist.gathered(text_rows), self.data.text.documents)
            text = gather(texts), torch.from_numpy(neighbours).to(self.dist.device)
        terms = weighted_terms(self.config, gather(captions), gather(images), gather(partners), visual, text=text)
        loss = sum(terms.values())
        values = {t: float(v.detach()) for t, v in terms.items()}
        step = self.position.global_step + 1
        bad = next((t for t, v in values.items() if not math.isfinite(v)), None)  # name the term that diverged
        self.guard.check_loss(step, bad or self.config.loss, values[bad] if bad else float(loss.detach()))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.guard.check_weights(step, self.net.parameters())
        return float(loss.detach()), values

    # ---------------------------------------------------------------- run folder
    def _open_run_folder(self) -> None:
        """The manifest of a new run, or the resumed run's, marked running."""
        if not self.dist.is_main:
            return
        (self.out / SNAPSHOTS).mkdir(parents=True, exist_ok=True)
        if self.resumed:
            self.manifest.reopen()
            self.manifest.fields["config"] = self.config.to_dict()
        else:
            self.manifest.start(**self._new_run_fields())
        if self.label:
            self.manifest.fields["label"] = self.label
        self.manifest.fields.pop("stopped_at_step", None)
        self.manifest.save(status="running")

    def _new_run_fields(self) -> dict[str, Any]:
        train, config = self.data.train, self.config
        return {
            "kind": "train",
            "encoder": {"name": config.encoder, "config": asdict(self.net.config), "vocab_size": len(self.net.vocab)},
            "config": config.to_dict(),
            "data": {
                "root": self.data.root,
                "train_images": len(train.image_ids),
                "train_captions": len(train.captions),
                "dev_images": len(self.data.dev.image_ids),
                "sources": train.source_files,
                "features": config.features,
                "features_sha256": self.data.features_sha256,
                "word_vectors": self.data.word_vectors,
                "text_corpus": self.data.text.record() if self.data.text is not None else None,
            },
            "init_from": self.init_from,
            "world_size": self.dist.world,
            "steps_per_epoch": self.steps_per_epoch,
            "selection": SELECTION[config.visual == "cluster"],
            "snapshots": [],
            "ensemble": [],
        }

    def _save_checkpoint(self) -> None:
        self.position.epoch_seconds = self._epoch_seconds()
        if self.dist.is_main:
            save_checkpoint(self.out / CHECKPOINT_FILE, config=self.config.to_dict(), vocab=list(self.net.vocab.chars),
                            model=self.net, optimizer=self.optimizer, position=self.position)
        self.checkpoint_step = self.position.global_step

    def _write_history(self) -> None:
        if self.dist.is_main and self.position.history:
            import pandas as pd

            with atomic_path(self.out / HISTORY_FILE) as tmp:
                pd.DataFrame(self.position.history).to_csv(tmp, index=False)

    def _snapshot(self, epoch: int) -> None:
        """End of a cycle: save the model, score it on dev (and semantic tasks), record it."""
        if not self.dist.is_main:
            return
        record = take_snapshot(self.net, self.out, epoch=epoch, global_step=self.position.global_step,
                               dev=self._dev_with_vectors(), eval_semantic=self.config.eval_semantic,
                               data_dir=self.config.data_dir)
        self.manifest.save(snapshots=with_snapshot(self.manifest.fields["snapshots"], record))

    def _dev_with_vectors(self) -> SplitData:
        """The dev split with one visual vector per clip: as loaded, or with ``--visual attention`` the net's
        attention over each clip's frames for the mean query of its captions (:mod:`benchbox.training.clips`)."""
        dev = self.data.dev
        if dev.clips is None:
            return dev
        assert dev.queries is not None and self.net.frame_attention is not None
        queries = clip_queries(dev.queries, CAPTIONS_PER_IMAGE)
        return replace(dev, visual=attended_clip_vectors(self.net.frame_attention, dev.clips, queries))

    # ---------------------------------------------------------------- endings
    def _finish(self) -> None:
        if self.dist.is_main:
            self.manifest.complete(ensemble=best_snapshots(self.manifest.fields["snapshots"]))

    def _stop_by_request(self) -> None:
        """Stopped by a signal or the step hook: checkpoint, history and manifest say where to resume. A line
        says so for the step hook; for a signal the command says it, with the command that resumes
        (:func:`benchbox.commands.interrupted.exit_interrupted`), in one line."""
        self.stopped_by_signal = self.stop.signum
        self._save_checkpoint()
        self._write_history()
        if self.dist.is_main:
            self.manifest.save(status="stopped", stopped_at_step=self.position.global_step)
            if self.stopped_by_signal is None:
                log(f"stopped at step {self.position.global_step}; continue with the same command and "
                    f"--out {self.out} --resume")

    @contextmanager
    def _non_finite_stops(self) -> Iterator[None]:
        try:
            yield
        except NonFiniteTraining as exc:
            self._stop_non_finite(exc)

    def _stop_non_finite(self, exc: NonFiniteTraining) -> None:
        """Stop at a non-finite loss or update: keep (or write, if the weights are still finite) the last good
        checkpoint, mark the run stopped and raise one line saying where to resume from."""
        if exc.weights_ok:
            self._save_checkpoint()  # the model before the failing step, all finite
        self._write_history()
        self.manifest.save(status="stopped", error=str(exc))
        if self.checkpoint_step is None:
            where = "no checkpoint was written before it; start a new run with other options"
        else:
            where = (f"the last good checkpoint (step {self.checkpoint_step}) is in {self.out / CHECKPOINT_FILE}: "
                     f"--out {self.out} --resume continues from it")
        raise BenchboxError(f"{exc}; {where}") from exc


def _require_same_corpus(folder: Path, text: TextCorpus) -> None:
    """A resumed run reads the text corpus it started with (its bytes, not only its path)."""
    started = json.loads((folder / MANIFEST).read_text())["data"]["text_corpus"]["sha256"]
    if started != text.sha256:
        raise BenchboxError(f"--text-corpus {text.path} has changed since the run started (sha256 {text.sha256[:12]}, "
                            f"the run's {started[:12]}): resume with the original file, or start a new run")


def build_net(config: TrainConfig, data: TrainingData, vocab: CharVocab | None, device: torch.device) -> CharRNNNet:
    """The network of ``config`` on ``device`` (``vocab``: the resumed run's; else built from the training
    captions alone, so that one seed gives the same initial weights with and without the textual term), after
    checking that one training step fits in its memory."""
    train = data.train
    vocab = vocab or CharVocab.build(train.captions)
    rnn, pooling = config.architecture
    feature_dim = train.feature_dim
    require_training_memory(str(device), rnn=rnn, hidden=config.hidden, batch_size=config.batch_size,
                            max_length=int(train.lengths.max()), feature_dim=feature_dim, vocab_size=len(vocab),
                            partner=config.needs_partner,
                            text_length=int(data.text.lengths.max()) if data.text is not None else 0)
    net_config = NetConfig(rnn=rnn, pooling=pooling, hidden=config.hidden, feature_dim=feature_dim,
                           nonneg=needs_nonnegative_embeddings(config),
                           clip_query_dim=None if train.queries is None else int(train.queries.shape[1]))
    return CharRNNNet(vocab, net_config).to(device)

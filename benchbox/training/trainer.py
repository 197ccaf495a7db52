"""The training loop of the character-level grounded encoders (Merkx & Frank 2019, docs/protocols.md#char-rnn-encoders).

Adam, minibatches of 32 (:mod:`.batching`), the cyclic cosine learning rate set before every step
(:mod:`.schedule`), a snapshot at the end of every cycle (4 epochs; also after the last epoch when the
epochs are not a whole number of cycles) scored on dev retrieval
(:mod:`.selection`) and, optionally, on semantic tasks (the paper's Figure 4), and at the end the ensemble
of the two best snapshots (Huang et al. 2017 snapshot ensembles). The run folder is
``manifest.json`` (``"kind": "train"``, the encoder name and architecture, the configuration, data
provenance, snapshots with their scores, ``ensemble``), ``checkpoint.pt`` (resumable state, every
``checkpoint_every`` steps, at every epoch end and when stopped by SIGINT/SIGTERM, see :mod:`.stop`), ``snapshots/epoch-NNN.pt``,
``history.csv`` (per epoch: the mean loss and, as ``loss_<term>``, the mean of each weighted term of
``--loss``; the terms sum to the loss) and ``semantic.csv`` (per snapshot, with ``--eval-semantic``). Unlike an
evaluation run, a training run folder grows while training; its manifest is rewritten atomically and
says ``"status": "running" | "stopped" | "complete"`` (a run stopped by SIGINT/SIGTERM: ``"stopped_at_step"``).

Distributed: under ``torchrun`` (WORLD_SIZE > 1) the same loop runs with DistributedDataParallel (gloo on
CPU, nccl on GPU). Each global minibatch of the single-process plan is split between the ranks (rank r takes
rows r, r + W, ...); the caption and image embeddings are all-gathered with autograd
(``torch.distributed.nn.all_gather``) so that every rank computes the loss over the whole global batch,
with all in-batch negatives, exactly as one process would; DDP averages the gradients. A
``DistributedSampler`` would shard whole examples per rank and so shrink the negatives per loss; this
scheme gives the single-process result up to floating-point summation order. Rank 0 writes all files.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import warnings
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch
import torch.distributed as dist
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from benchbox.console import err, log
from benchbox.data import DataRoot
from benchbox.encoders.char_rnn import encoder_for
from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig, save_snapshot
from benchbox.encoders.char_vocab import CharVocab
from benchbox.errors import BenchboxError
from benchbox.jsonio import write_json
from benchbox.outdir import output_lock
from benchbox.provenance import manifest_header
from benchbox.store import MANIFEST, new_run_id
from benchbox.training.batching import Batch, epoch_plan
from benchbox.training.checkpoint import CHECKPOINT_FILE, Position, load_checkpoint, restore, save_checkpoint
from benchbox.training.config import TrainConfig
from benchbox.training.data import load_split
from benchbox.training.finite import FiniteGuard, NonFiniteTraining
from benchbox.training.footprint import require_training_memory
from benchbox.training.objectives import weighted_terms
from benchbox.training.schedule import cyclic_cosine_lr
from benchbox.training.selection import dev_scores
from benchbox.training.stop import StopRequest

#: called after every step with the global step; returning True stops training (checkpoint written)
StepHook = Callable[[int], bool]
#: what a snapshot's ``score`` is, without / with ``--visual cluster`` (see :mod:`.selection`)
SELECTION = ("mean dev R@10 of image→caption and caption→image",
             "dev caption→image-cluster R@10 (leave-one-out caption centroids; no image branch)")
#: steps between progress lines when stderr is not a terminal
LOG_EVERY = 50


class TrainModule(torch.nn.Module):
    """One forward for DDP: embeddings of the captions, of the visual side and of the partner captions."""

    def __init__(self, net: CharRNNNet) -> None:
        super().__init__()
        self.net = net

    def forward(
        self,
        chars: torch.Tensor,
        lengths: torch.Tensor,
        visual: torch.Tensor | None,
        partner_chars: torch.Tensor | None,
        partner_lengths: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        captions = self.net.caption(chars, lengths)
        images = self.net.image(visual) if visual is not None and self.net.image is not None else None
        partners = self.net.caption(partner_chars, partner_lengths) if partner_chars is not None else None
        return captions, images, partners


class Distributed:
    """Rank, world size and device; initialises the process group under torchrun."""

    def __init__(self) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        use_cuda = torch.cuda.is_available()
        self.device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
        if use_cuda:
            torch.cuda.set_device(self.device)
        self.owns_group = False
        if self.world > 1 and not dist.is_initialized():
            # rank 0 alone scores snapshots (dev retrieval, semantic tasks) while the others wait
            dist.init_process_group("nccl" if use_cuda else "gloo", timeout=timedelta(hours=4))
            self.owns_group = True

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world > 1:
            dist.barrier()

    def broadcast(self, value: Any) -> Any:
        if self.world == 1:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def any(self, flag: bool) -> bool:
        if self.world == 1:
            return flag
        t = torch.tensor([int(flag)], device=self.device)
        dist.all_reduce(t)
        return bool(t.item())

    def gather(self, x: torch.Tensor | None) -> torch.Tensor | None:
        """Concatenate every rank's rows, differentiably."""
        if x is None or self.world == 1:
            return x
        from torch.distributed.nn.functional import all_gather

        with warnings.catch_warnings():  # deprecated for a private API; still the public autograd all-gather
            warnings.simplefilter("ignore", FutureWarning)
            return torch.cat(all_gather(x), dim=0)

    def close(self) -> None:
        if self.owns_group:
            dist.destroy_process_group()


#: what an unfinished start leaves in the run folder (no checkpoint yet); removed when it is restarted
UNFINISHED_START_FILES = (MANIFEST, "snapshots", "history.csv", "semantic.csv")


def discard_unfinished_start(out: Path) -> None:
    """Remove the files of a run stopped before its first checkpoint, so that a restart begins clean."""
    for name in UNFINISHED_START_FILES:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


class Trainer:
    """Trains one run; ``run()`` returns the run folder. The run folder is locked (and checked writable)
    from construction until ``run()`` returns; a run stopped before its first checkpoint restarts cleanly."""

    def __init__(
        self,
        config: TrainConfig,
        out: str | os.PathLike | None = None,
        *,
        resume: bool = False,
        runs_dir: str | os.PathLike = "runs",
        step_hook: StepHook | None = None,
        label: str | None = None,
    ) -> None:
        self.dist = Distributed()
        #: the model's label (:mod:`benchbox.labels`), stored in the manifest as ``"label"`` when given
        self.label = label
        if config.threads:
            torch.set_num_threads(config.threads)
        self.step_hook = step_hook
        self.stop = StopRequest()
        #: the signal (SIGINT/SIGTERM) that stopped :meth:`run` after its checkpoint; None when it did not
        self.stopped_by_signal: int | None = None
        self.out = Path(self.dist.broadcast(str(out) if out else str(Path(runs_dir) / new_run_id(config.encoder))))
        self._output = ExitStack()  # the lock on the run folder, held until run() returns
        if self.dist.is_main:
            self._output.enter_context(output_lock(self.out))
        try:
            self._setup(config, resume)
        except BaseException:
            self._output.close()
            raise

    def _setup(self, config: TrainConfig, resume: bool) -> None:
        checkpoint_path = self.out / CHECKPOINT_FILE
        stored_checkpoint = None
        if resume:
            if (self.out / MANIFEST).is_file() and not checkpoint_path.is_file():
                raise BenchboxError(f"{self.out} has no {CHECKPOINT_FILE}: the run stopped before its first "
                                    "checkpoint; run the same command without --resume to restart it")
            if not (self.out / MANIFEST).is_file() or not checkpoint_path.is_file():
                raise BenchboxError(f"nothing to resume in {self.out}: it has no {MANIFEST} and {CHECKPOINT_FILE}")
            stored_checkpoint = load_checkpoint(checkpoint_path)
            config = config.check_resume(TrainConfig.from_dict(stored_checkpoint["config"]))
        elif (self.out / MANIFEST).exists() and checkpoint_path.exists():
            raise BenchboxError(f"{self.out} already holds a run: pass --resume to continue it, or another --out")
        elif (self.out / MANIFEST).exists() and self.dist.is_main:
            log(f"{self.out} holds a run stopped before its first checkpoint: restarting it from the beginning")
            discard_unfinished_start(self.out)
        self.config = config
        if config.batch_size % self.dist.world:
            raise BenchboxError(f"the batch size {config.batch_size} must be divisible by the {self.dist.world} processes")

        data = DataRoot(config.data_dir)
        if config.eval_semantic:  # fail now on a misspelt task or missing data, not at the first snapshot
            from benchbox.task import TaskOptions, resolve_tasks

            for task in resolve_tasks(list(config.eval_semantic)):
                data.require(task.required_files(TaskOptions()))
        split = dict(visual=config.visual, features=config.features, seed=config.seed)
        self.train_data = load_split(data, config.dataset, "train", max_captions=config.max_captions, **split)
        self.dev_data = load_split(data, config.dataset, "dev", **split)
        if len(self.train_data.image_ids) < config.batch_size:
            raise BenchboxError(f"{len(self.train_data.image_ids)} training images are fewer than one batch")
        self.data_root = str(data.root)
        self.features_sha256 = data.checksum(Path(config.features)) if config.features else None

        torch.manual_seed(config.seed)
        if stored_checkpoint is not None:
            vocab = CharVocab(tuple(stored_checkpoint["vocab"]))
        else:
            vocab = CharVocab.build(self.train_data.captions)
        rnn, pooling = config.architecture
        feature_dim = None if self.train_data.visual is None else int(self.train_data.visual.shape[1])
        require_training_memory(str(self.dist.device), rnn=rnn, hidden=config.hidden, batch_size=config.batch_size,
                                max_length=int(self.train_data.lengths.max()), feature_dim=feature_dim,
                                vocab_size=len(vocab), partner=config.needs_partner)
        self.net_config = NetConfig(rnn=rnn, pooling=pooling, hidden=config.hidden, feature_dim=feature_dim,
                                    nonneg=any(t == "order" for t, _ in config.loss_terms))
        self.net = CharRNNNet(vocab, self.net_config).to(self.dist.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.resolved_lr_max)
        self.position = Position()
        self.resumed = stored_checkpoint is not None
        if stored_checkpoint is not None:
            self.position = restore(stored_checkpoint, self.net, self.optimizer, checkpoint_path)
        self.manifest: dict[str, Any] = {}
        self.guard = FiniteGuard()
        #: global step of the last checkpoint written (None: none yet in this process)
        self.checkpoint_step: int | None = self.position.global_step if self.resumed else None
        self._log_mark = (0, time.perf_counter())
        self.lengths = self.train_data.lengths
        self.steps_per_epoch = len(epoch_plan(self.lengths, batch_size=config.batch_size, seed=config.seed, epoch=0))

    # ---------------------------------------------------------------- run folder
    def _init_run_folder(self, resumed: bool) -> None:
        if not self.dist.is_main:
            return
        (self.out / "snapshots").mkdir(parents=True, exist_ok=True)
        if resumed:
            self.manifest = json.loads((self.out / MANIFEST).read_text())
            self.manifest["config"] = self.config.to_dict()
            self.manifest.setdefault("resumed", []).append(datetime.now(timezone.utc).isoformat(timespec="seconds"))
        else:
            self.manifest = {
                **manifest_header(self.out.name),
                "kind": "train",
                "encoder": {"name": self.config.encoder, "config": asdict(self.net_config),
                            "vocab_size": len(self.net.vocab)},
                "config": self.config.to_dict(),
                "data": {
                    "root": self.data_root,
                    "train_images": len(self.train_data.image_ids),
                    "train_captions": len(self.train_data.captions),
                    "dev_images": len(self.dev_data.image_ids),
                    "sources": self.train_data.source_files,
                    "features": self.config.features,
                    "features_sha256": self.features_sha256,
                },
                "world_size": self.dist.world,
                "steps_per_epoch": self.steps_per_epoch,
                "selection": SELECTION[self.config.visual == "cluster"],
                "snapshots": [],
                "ensemble": [],
            }
        if self.label:
            self.manifest["label"] = self.label
        self.manifest["status"] = "running"
        self.manifest.pop("stopped_at_step", None)
        self._save_manifest()

    def _save_manifest(self) -> None:
        if self.dist.is_main:
            write_json(self.out / MANIFEST, self.manifest, sort_keys=True)

    def _save_checkpoint(self) -> None:
        if self.dist.is_main:
            save_checkpoint(self.out / CHECKPOINT_FILE, config=self.config.to_dict(), vocab=list(self.net.vocab.chars),
                            model=self.net, optimizer=self.optimizer, position=self.position)
        self.checkpoint_step = self.position.global_step

    def _stop_non_finite(self, exc: NonFiniteTraining) -> None:
        """Stop at a non-finite loss or update: keep (or write, if the weights are still finite) the last good
        checkpoint, mark the run stopped and raise one line saying where to resume from."""
        if exc.weights_ok:
            self._save_checkpoint()  # the model before the failing step, all finite
        self._write_history()
        if self.dist.is_main:
            self.manifest["status"] = "stopped"
            self.manifest["error"] = str(exc)
            self._save_manifest()
        if self.checkpoint_step is None:
            where = "no checkpoint was written before it; start a new run with other options"
        else:
            where = (f"the last good checkpoint (step {self.checkpoint_step}) is in {self.out / CHECKPOINT_FILE}: "
                     f"--out {self.out} --resume continues from it")
        raise BenchboxError(f"{exc}; {where}") from exc

    # ---------------------------------------------------------------- steps
    def _tensors(self, batch: Batch) -> tuple[Any, ...]:
        """This rank's share of a global minibatch, as model inputs."""
        rank, world = self.dist.rank, self.dist.world
        rows = batch.captions[rank::world]
        vocab, device = self.net.vocab, self.dist.device
        chars, lengths = vocab.batch([self.train_data.captions[i] for i in rows])
        visual = None
        if self.train_data.visual is not None:
            visual = torch.from_numpy(self.train_data.visual[batch.images[rank::world]]).to(device)
        partner_chars = partner_lengths = None
        if self.config.needs_partner:
            partner_chars, partner_lengths = vocab.batch([self.train_data.captions[i] for i in batch.partners[rank::world]])
            partner_chars = partner_chars.to(device)
        return chars.to(device), lengths, visual, partner_chars, partner_lengths

    def _step(self, model: torch.nn.Module, batch: Batch, lr: float) -> tuple[float, dict[str, float]]:
        """One optimiser step; returns the loss and its weighted terms (which sum to it)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        inputs = self._tensors(batch)
        captions, images, partners = model(*inputs)
        gather = self.dist.gather
        visual = gather(inputs[2]) if any(t == "perceptual" for t, _ in self.config.loss_terms) else None
        terms = weighted_terms(self.config, gather(captions), gather(images), gather(partners), visual)
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

    # ---------------------------------------------------------------- snapshots
    def _snapshot(self, epoch: int) -> None:
        """End of a cycle: save the model, score it on dev (and semantic tasks), record it."""
        if not self.dist.is_main:
            return
        name = f"snapshots/epoch-{epoch:03d}.pt"
        save_snapshot(self.net, self.out / name, meta={"epoch": epoch, "global_step": self.position.global_step,
                                                       "run_id": self.out.name})
        encoder = encoder_for([self.net], source=f"{self.out}:{name}")
        log(f"epoch {epoch}: scoring snapshot on dev ({len(self.dev_data.image_ids)} images)")
        record: dict[str, Any] = {"epoch": epoch, "file": name}
        try:
            scores = dev_scores(encoder, self.dev_data)
            if not all(math.isfinite(v) for v in scores.values()):
                raise BenchboxError(f"the dev scores are not finite: {scores}")
        except BenchboxError as exc:  # NaN or constant embeddings: the snapshot must not be selected
            raise NonFiniteTraining(f"training stopped at epoch {epoch}: the snapshot cannot be scored on dev ({exc})",
                                    weights_ok=False) from exc
        finally:
            self.net.train()
        try:
            if self.config.eval_semantic:
                record["semantic"] = self._semantic(encoder, epoch)
        finally:
            self.net.train()
        record["score"] = scores.pop("score")
        record["dev"] = scores
        self.manifest["snapshots"] = [s for s in self.manifest["snapshots"] if s["epoch"] != epoch] + [record]
        self._save_manifest()
        log(f"epoch {epoch}: dev score {record['score']:.2f} " + " ".join(f"{k}={v:.1f}" for k, v in scores.items()))

    def _semantic(self, encoder: Any, epoch: int) -> dict[str, float]:
        from benchbox.evaluation import run_tasks

        evaluation = run_tasks(encoder, list(self.config.eval_semantic), data_dir=self.config.data_dir, cache=False)
        rows = [{"epoch": epoch, **r.to_dict()} for r in evaluation.records]
        path = self.out / "semantic.csv"
        import pandas as pd

        frame = pd.DataFrame(rows)
        if path.is_file():
            previous = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"subset": str})
            frame = pd.concat([previous[previous["epoch"] != epoch], frame], ignore_index=True)
        frame.to_csv(path, index=False)
        return {f"{r.task}/{r.subset}/{r.metric}": float(r.value) for r in evaluation.records}

    def _finish(self) -> None:
        if not self.dist.is_main:
            return
        best = sorted(self.manifest["snapshots"], key=lambda s: (-s["score"], -s["epoch"]))[:2]
        self.manifest["ensemble"] = [s["file"] for s in best]
        self.manifest["status"] = "complete"
        self.manifest["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._save_manifest()

    def _write_history(self) -> None:
        if self.dist.is_main and self.position.history:
            import pandas as pd

            pd.DataFrame(self.position.history).to_csv(self.out / "history.csv", index=False)

    def _log_progress(self, total: int, loss: float, lr: float) -> None:
        """A progress line for logs (stderr is not a terminal, so no live bar): step, loss, rate and ETA."""
        now = time.perf_counter()
        steps, then = self._log_mark
        rate = (self.position.global_step - steps) / max(now - then, 1e-9)
        eta = (total - self.position.global_step) / max(rate, 1e-9)
        log(f"step {self.position.global_step}/{total} epoch {self.position.epoch + 1} loss {loss:.3f} "
            f"lr {lr:.2e} {rate * self.config.batch_size:.1f} captions/s eta {eta / 60:.1f} min")
        self._log_mark = (self.position.global_step, now)

    # ---------------------------------------------------------------- loop
    @contextmanager
    def _non_finite_stops(self) -> Iterator[None]:
        try:
            yield
        except NonFiniteTraining as exc:
            self._stop_non_finite(exc)

    def run(self) -> Path:
        try:
            return self._run()
        finally:
            self._output.close()

    def _run(self) -> Path:
        config = self.config
        self._init_run_folder(resumed=self.resumed)
        model: torch.nn.Module = TrainModule(self.net)
        if self.dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(model, device_ids=[self.dist.device] if self.dist.device.type == "cuda" else None)
        self.net.train()
        steps_per_cycle = self.steps_per_epoch * config.cycle_epochs
        self._log_mark = (self.position.global_step, time.perf_counter())
        total = self.steps_per_epoch * config.epochs
        stopped = False
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("loss {task.fields[loss]:.3f} lr {task.fields[lr]:.1e}"), TimeElapsedColumn(),
                   TimeRemainingColumn())
        # a live bar only on a terminal (rich holds back other output while a live display runs); else log lines
        live = err.is_terminal and not err.quiet and self.dist.is_main
        with self.stop.installed(), Progress(*columns, console=err, transient=False, disable=not live) as bar, \
                self._non_finite_stops():
            task = bar.add_task(f"train {config.encoder}", total=total, completed=self.position.global_step,
                                loss=float("nan"), lr=0.0)
            while self.position.epoch < config.epochs and not stopped:
                epoch = self.position.epoch
                plan = epoch_plan(self.lengths, batch_size=config.batch_size, seed=config.seed, epoch=epoch)
                started, epoch_losses = time.perf_counter(), self.position.epoch_losses
                for batch in plan[self.position.step :]:
                    lr = cyclic_cosine_lr(self.position.global_step, steps_per_cycle, config.resolved_lr_max,
                                          config.lr_min)
                    loss, terms = self._step(model, batch, lr)
                    epoch_losses.append(loss)
                    for term, value in terms.items():
                        self.position.epoch_terms.setdefault(term, []).append(value)
                    self.position.step += 1
                    self.position.global_step += 1
                    bar.update(task, completed=self.position.global_step, loss=loss, lr=lr)
                    if not live and self.dist.is_main and self.position.global_step % LOG_EVERY == 0:
                        self._log_progress(total, loss, lr)
                    requested = self.stop.check() or bool(self.step_hook and self.step_hook(self.position.global_step))
                    if self.dist.any(requested):
                        stopped = True
                        break
                    if config.checkpoint_every and self.position.global_step % config.checkpoint_every == 0:
                        self._save_checkpoint()
                if stopped:
                    break
                seconds = time.perf_counter() - started
                self.position.history.append({
                    "epoch": epoch + 1, "loss": float(np.mean(epoch_losses)) if epoch_losses else float("nan"),
                    "seconds": seconds, "captions_per_s": len(plan) * config.batch_size / max(seconds, 1e-9),
                    **{f"loss_{term}": float(np.mean(values)) for term, values in self.position.epoch_terms.items()},
                })
                self.position.epoch, self.position.step, self.position.epoch_losses = epoch + 1, 0, []
                self.position.epoch_terms = {}
                if (epoch + 1) % config.cycle_epochs == 0 or epoch + 1 == config.epochs:
                    self._snapshot(epoch + 1)
                    self.dist.barrier()
                self._save_checkpoint()
                self._write_history()
        if stopped:
            self.stopped_by_signal = self.stop.signum
            self._save_checkpoint()
            self._write_history()
            if self.dist.is_main:
                self.manifest["status"] = "stopped"
                self.manifest["stopped_at_step"] = self.position.global_step  # the report says where it stopped
                self._save_manifest()
                log(f"stopped at step {self.position.global_step}; continue with the same command and "
                    f"--out {self.out} --resume")
        else:
            self._finish()
        self.dist.barrier()
        self.dist.close()
        return self.out

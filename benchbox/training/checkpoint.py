"""Resumable training state: ``<run>/checkpoint.pt``, loadable with ``torch.load(weights_only=True)``.

It holds everything the next step depends on: model and Adam state, the position (epoch, step within the
epoch's plan, global step), the torch RNG state and the loss history. Epoch plans and the learning rate
are pure functions of (seed, epoch) and the global step, so nothing else is needed for a resumed run to
continue exactly as an uninterrupted one. Written atomically (temporary file, then rename).

Resuming (:func:`resume_state`): ``--resume`` needs the run's manifest and checkpoint; without ``--resume`` a
folder holding a checkpointed run is refused, and a run stopped before its first checkpoint is removed
(:data:`UNFINISHED_START_FILES`) so that it restarts clean.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from benchbox.storage.atomic import torch_save
from benchbox.console import log
from benchbox.encoders.char_rnn_net import read_checkpoint_file
from benchbox.errors import BenchboxError
from benchbox.storage.runs import MANIFEST
from benchbox.training.run_manifest import HISTORY_FILE
from benchbox.training.snapshots import SEMANTIC_FILE, SNAPSHOTS

CHECKPOINT_FORMAT = "benchbox.char-rnn.train-state/1"
CHECKPOINT_FILE = "checkpoint.pt"
#: what an unfinished start leaves in the run folder (no checkpoint yet); removed when it is restarted
UNFINISHED_START_FILES = (MANIFEST, SNAPSHOTS, HISTORY_FILE, SEMANTIC_FILE)


@dataclass
class Position:
    """Where training stands: ``step`` batches of epoch ``epoch`` are done, ``global_step`` in total."""

    epoch: int = 0
    step: int = 0
    global_step: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    #: losses of the steps of the current epoch so far (for its mean in the history)
    epoch_losses: list[float] = field(default_factory=list)
    #: the weighted loss terms of those steps, per term (their means go into the history as ``loss_<term>``)
    epoch_terms: dict[str, list[float]] = field(default_factory=dict)
    #: seconds spent on those steps (a resumed epoch's history row counts its time before the stop too)
    epoch_seconds: float = 0.0


def save_checkpoint(
    path: str | os.PathLike,
    *,
    config: dict[str, Any],
    vocab: list[str],
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    position: Position,
) -> None:
    payload = {
        "format": CHECKPOINT_FORMAT,
        "config": config,
        "vocab": vocab,
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "optimizer": optimizer.state_dict(),
        "rng": torch.get_rng_state(),
        "epoch": position.epoch,
        "step": position.step,
        "global_step": position.global_step,
        "history": position.history,
        "epoch_losses": position.epoch_losses,
        "epoch_terms": position.epoch_terms,
        "epoch_seconds": position.epoch_seconds,
    }
    torch_save(payload, path)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint's contents, with a clear error for corrupt or foreign files."""
    payload = read_checkpoint_file(path)
    if payload.get("format") != CHECKPOINT_FORMAT:
        raise BenchboxError(
            f"{path} is not a benchbox training checkpoint (format {payload.get('format')!r}, expected "
            f"{CHECKPOINT_FORMAT!r})"
        )
    missing = {"config", "vocab", "model", "optimizer", "rng", "epoch", "step", "global_step"} - set(payload)
    if missing:
        raise BenchboxError(f"training checkpoint {path} is incomplete (missing {', '.join(sorted(missing))})")
    return payload


def restore(
    payload: dict[str, Any], model: torch.nn.Module, optimizer: torch.optim.Optimizer, path: str | os.PathLike
) -> Position:
    """Load model, optimiser and RNG state from ``payload``; returns the position to continue from."""
    try:
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
    except (RuntimeError, ValueError, KeyError) as exc:
        raise BenchboxError(f"training checkpoint {path} does not fit this model: {exc}") from exc
    torch.set_rng_state(payload["rng"])
    return Position(payload["epoch"], payload["step"], payload["global_step"], list(payload.get("history") or []),
                    list(payload.get("epoch_losses") or []),
                    {t: list(v) for t, v in (payload.get("epoch_terms") or {}).items()},
                    float(payload.get("epoch_seconds") or 0.0))


def resume_state(out: Path, *, resume: bool, is_main: bool) -> dict[str, Any] | None:
    """With ``resume``, the checkpoint of the run in ``out``; else None, once ``out`` holds no run to overwrite
    (a run stopped before its first checkpoint is discarded by the main process)."""
    checkpoint_path = out / CHECKPOINT_FILE
    if resume:
        if (out / MANIFEST).is_file() and not checkpoint_path.is_file():
            raise BenchboxError(f"{out} has no {CHECKPOINT_FILE}: the run stopped before its first "
                                "checkpoint; run the same command without --resume to restart it")
        if not (out / MANIFEST).is_file() or not checkpoint_path.is_file():
            raise BenchboxError(f"nothing to resume in {out}: it has no {MANIFEST} and {CHECKPOINT_FILE}")
        return load_checkpoint(checkpoint_path)
    if (out / MANIFEST).exists() and checkpoint_path.exists():
        raise BenchboxError(f"{out} already holds a run: pass --resume to continue it, or another --out")
    if (out / MANIFEST).exists() and is_main:
        log(f"{out} holds a run stopped before its first checkpoint: restarting it from the beginning")
        discard_unfinished_start(out)
    return None


def discard_unfinished_start(out: Path) -> None:
    """Remove the files of a run stopped before its first checkpoint, so that a restart begins clean."""
    for name in UNFINISHED_START_FILES:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()

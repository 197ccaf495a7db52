"""Snapshots of a char-RNN run and the ensemble chosen from them (Huang et al. 2017 snapshot ensembles; Merkx &
Frank 2019, docs/protocols.md#char-rnn-encoders).

At the end of every learning-rate cycle the model is saved as ``snapshots/epoch-NNN.pt`` and scored on dev
retrieval (:mod:`.selection`) and, with ``--eval-semantic``, on semantic tasks (the paper's Figure 4; one row
per task score in ``semantic.csv``); its record goes into the manifest's ``"snapshots"``. A snapshot that
cannot be scored (NaN or constant embeddings) stops training, so it is never selected. At the end the
``"ensemble"`` is the two snapshots with the best dev score (the later one on a tie;
:func:`benchbox.encoders.char_rnn.best_snapshots`, which also picks the members of a run still training).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchbox.storage.atomic import atomic_path
from benchbox.console import log
from benchbox.encoders.char_rnn import encoder_for
from benchbox.encoders.char_rnn_net import CharRNNNet, save_snapshot
from benchbox.errors import BenchboxError
from benchbox.training.data import SplitData
from benchbox.training.finite import NonFiniteTraining
from benchbox.training.selection import dev_scores

SNAPSHOTS = "snapshots"
SEMANTIC_FILE = "semantic.csv"


def snapshot_file(epoch: int) -> str:
    """The snapshot's path inside the run folder."""
    return f"{SNAPSHOTS}/epoch-{epoch:03d}.pt"


def take_snapshot(net: CharRNNNet, out: Path, *, epoch: int, global_step: int, dev: SplitData,
                  eval_semantic: tuple[str, ...], data_dir: str | None) -> dict[str, Any]:
    """Save ``net`` after ``epoch`` and score it; returns its manifest record (``net`` is left in training mode)."""
    name = snapshot_file(epoch)
    save_snapshot(net, out / name, meta={"epoch": epoch, "global_step": global_step, "run_id": out.name})
    encoder = encoder_for([net], source=f"{out}:{name}")
    log(f"epoch {epoch}: scoring snapshot on dev ({len(dev.image_ids)} images)")
    record: dict[str, Any] = {"epoch": epoch, "file": name}
    try:
        scores = dev_scores(encoder, dev)
        if not all(math.isfinite(v) for v in scores.values()):
            raise BenchboxError(f"the dev scores are not finite: {scores}")
    except BenchboxError as exc:  # NaN or constant embeddings: the snapshot must not be selected
        raise NonFiniteTraining(f"training stopped at epoch {epoch}: the snapshot cannot be scored on dev ({exc})",
                                weights_ok=False) from exc
    finally:
        net.train()
    try:
        if eval_semantic:
            record["semantic"] = semantic_scores(encoder, out / SEMANTIC_FILE, epoch, eval_semantic, data_dir)
    finally:
        net.train()
    record["score"] = scores.pop("score")
    record["dev"] = scores
    log(f"epoch {epoch}: dev score {record['score']:.2f} " + " ".join(f"{k}={v:.1f}" for k, v in scores.items()))
    return record


def semantic_scores(encoder: Any, path: Path, epoch: int, tasks: tuple[str, ...], data_dir: str | None) -> dict[str, float]:
    """Evaluate ``tasks``; their rows replace those of ``epoch`` in ``path``; returns {task/subset/metric: value}."""
    import pandas as pd

    from benchbox.evaluation import run_tasks

    evaluation = run_tasks(encoder, list(tasks), data_dir=data_dir, cache=False)
    frame = pd.DataFrame([{"epoch": epoch, **r.to_dict()} for r in evaluation.records])
    if path.is_file():
        previous = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"subset": str})
        frame = pd.concat([previous[previous["epoch"] != epoch], frame], ignore_index=True)
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
    return {f"{r.task}/{r.subset}/{r.metric}": float(r.value) for r in evaluation.records}


def with_snapshot(snapshots: list[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """The snapshot records with ``record`` in place of any earlier one of its epoch (a resumed cycle)."""
    return [s for s in snapshots if s["epoch"] != record["epoch"]] + [record]

"""Starting a char-RNN run from another run's sentence encoder (``--init-from RUN``), for Bordes et al. (2019)'s
M^p: the sentence encoder first trained with the textual objective L_T alone (``--loss textual=1``), then with
the grounded terms (docs/protocols.md#bordes-models gives the two commands).

``RUN`` is a finished char-RNN training run folder: its ``manifest.json`` says ``"kind": "train"`` and
``"status": "complete"``, and its ``checkpoint.pt`` holds the weights at the end of its training. The new run
copies the weights of its caption encoder (``caption.*``: character embeddings, recurrent layer, pooling), the
sentence encoder that the paper pretrains; everything else starts as in a run without ``--init-from`` (the image
branch and T's projection from the seed, Adam's moments at zero, the learning-rate schedule and the step count
at 0). Refused in one line: a folder that is not such a run, or a source whose architecture (recurrent layer,
pooling, hidden size, character and attention sizes) or character vocabulary differs from the new run's (the
vocabulary is built from the training captions: use the same ``--dataset`` and caption files).

Recorded in the new run's manifest as ``"init_from"``: the source's run id and folder, the global step its
weights are from, and :func:`weights_sha256` of the copied tensors.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from benchbox.encoders.char_rnn_net import CharRNNNet
from benchbox.errors import BenchboxError
from benchbox.storage.runs import MANIFEST
from benchbox.training.checkpoint import CHECKPOINT_FILE, load_checkpoint

#: the state-dict prefix of the sentence encoder, the part of the net a new run takes over
ENCODER_PREFIX = "caption."
#: the architecture fields that must agree between the source and the new run
ARCHITECTURE_FIELDS = ("rnn", "pooling", "hidden", "char_dim", "attention_hidden")


@dataclass(frozen=True)
class SourceRun:
    """The finished run a new run starts from: its folder, id, architecture, vocabulary and encoder weights."""

    folder: Path
    run_id: str
    architecture: dict[str, Any]
    vocab: tuple[str, ...]
    weights: dict[str, torch.Tensor]
    global_step: int


def read_source_run(path: str | os.PathLike) -> SourceRun:
    """The run folder ``path`` (the module docstring), or one line saying why it cannot be started from."""
    folder = Path(path)
    usage = "--init-from takes the folder of a finished char-RNN training run"
    manifest_path, checkpoint_path = folder / MANIFEST, folder / CHECKPOINT_FILE
    if not manifest_path.is_file() or not checkpoint_path.is_file():
        raise BenchboxError(f"--init-from {folder} is not a training run folder (no {MANIFEST} and {CHECKPOINT_FILE}): "
                            f"{usage}")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchboxError(f"--init-from {folder}: unreadable {MANIFEST} ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "train" or "encoder" not in manifest:
        raise BenchboxError(f"--init-from {folder} is not a training run ({MANIFEST} has no \"kind\": \"train\" "
                            f"and encoder): {usage}")
    if manifest.get("status") != "complete":
        raise BenchboxError(f"--init-from {folder} has not finished (status {manifest.get('status')!r}): finish it "
                            "(--resume) or start from a finished run")
    payload = load_checkpoint(checkpoint_path)
    weights = {k[len(ENCODER_PREFIX):]: v for k, v in payload["model"].items() if k.startswith(ENCODER_PREFIX)}
    if not weights:
        raise BenchboxError(f"--init-from {folder}: {CHECKPOINT_FILE} holds no sentence encoder weights "
                            f"({ENCODER_PREFIX}*): {usage}")
    return SourceRun(folder, folder.name, dict(manifest["encoder"].get("config") or {}), tuple(payload["vocab"]),
                     weights, int(payload["global_step"]))


def start_from(source: SourceRun, net: CharRNNNet) -> dict[str, Any]:
    """Copy ``source``'s sentence encoder into ``net`` after checking that they agree; returns the manifest's
    ``"init_from"`` record."""
    mine = asdict(net.config)
    differ = [f"{k} {source.architecture.get(k)!r} (this run: {mine[k]!r})" for k in ARCHITECTURE_FIELDS
              if source.architecture.get(k) != mine[k]]
    if differ:
        raise BenchboxError(f"--init-from {source.folder} has another architecture: {', '.join(differ)}; train with "
                            "the same encoder and --hidden")
    if source.vocab != tuple(net.vocab.chars):
        only_source = sorted(set(source.vocab) - set(net.vocab.chars))
        only_here = sorted(set(net.vocab.chars) - set(source.vocab))
        raise BenchboxError(f"--init-from {source.folder} has another character vocabulary ({len(source.vocab)} "
                            f"characters, this run {len(net.vocab.chars)}; only there: {''.join(only_source[:20])!r}, "
                            f"only here: {''.join(only_here[:20])!r}): train on the same captions as it did")
    net.caption.load_state_dict(source.weights)  # same architecture and vocabulary: same names and shapes
    return {"run": source.run_id, "folder": str(source.folder), "global_step": source.global_step,
            "weights_sha256": weights_sha256(source.weights)}


def weights_sha256(weights: dict[str, torch.Tensor]) -> str:
    """sha256 over the tensors in name order: each name, dtype, shape and its bytes (C order, CPU)."""
    digest = hashlib.sha256()
    for name in sorted(weights):
        tensor = weights[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()

"""Character-level visually grounded sentence encoders (Merkx & Frank 2019): ``char-gru``, ``char-lstm``
(attention pooling) and ``char-gru-max`` (max pooling). Architecture: :mod:`benchbox.encoders.char_rnn_net`.

These encoders only exist trained: ``benchbox train char-gru ...`` writes a run folder, and
``benchbox eval runs/<train-run>`` (or ``load_encoder(path)``) loads it through :meth:`CharRNNEncoder.from_path`.
By default that is the ensemble of the two snapshots with the best dev retrieval (the run manifest's
``ensemble``): caption (and image) embeddings of the members are averaged and L2-normalised again. Merkx's
``ensemble.py`` sums the members' embeddings without renormalising; cosine similarities, and so every
retrieval rank and STS correlation, are identical either way. Instantiating the registry class without a
trained model is an error that says what to do; :meth:`CharRNNEncoder.untrained` builds a randomly
initialised model only when asked for explicitly.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchbox.encoding.protocol import ImageTextEncoder, digest_arrays
from benchbox.errors import BenchboxError
from benchbox.encoders.char_rnn_architectures import ARCHITECTURES
from benchbox.encoders.char_vocab import CharVocab
from benchbox.lazy import lazy_module

if TYPE_CHECKING:
    from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig

torch = lazy_module("torch")  # imported at first use: `benchbox list encoders` starts without it


class CharRNNEncoder(ImageTextEncoder):
    """An ensemble (one or more members) of trained char-RNN models sharing one architecture."""

    name = "char-rnn"
    rnn, pooling = ARCHITECTURES["char-gru"]

    # members: CharRNNNet models, annotated Any because benchbox.encoding.options reads this signature's types at
    # run time, where char_rnn_net (and torch) are not imported until a model is loaded
    def __init__(self, members: list[Any] | None = None, source: str | None = None) -> None:
        if not members:
            raise BenchboxError(
                f"{self.name} has no pretrained weights: train one (`benchbox train {self.name} --dataset flickr8k "
                f"--features FILE` with image features, or `--visual cluster` with captions alone) and pass the run "
                f"folder instead of the name (`benchbox eval runs/<train-run>`)"
            )
        configs = {m.config for m in members}
        if len(configs) != 1:
            raise BenchboxError("the members of a char-RNN ensemble must share one architecture")
        self.members = [m.eval() for m in members]
        self.net_config: NetConfig = members[0].config
        self.source = source
        self.similarity = "order" if self.net_config.nonneg else "cosine"
        self._digest: str | None = None

    @classmethod
    def untrained(cls, vocab: CharVocab, *, seed: int = 0, **config: Any) -> CharRNNEncoder:
        """A randomly initialised model (explicitly untrained: a baseline, or for tests)."""
        from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig

        torch.manual_seed(seed)
        net = CharRNNNet(vocab, NetConfig(rnn=cls.rnn, pooling=cls.pooling, **config))
        return cls([net], source=f"untrained(seed={seed})")

    @classmethod
    def from_path(cls, path: str | os.PathLike, snapshots: list[str] | str | None = None) -> CharRNNEncoder:
        """Load a training run folder (its ensemble, or the named ``snapshots`` files in it) or one snapshot file."""
        path = Path(path)
        if path.is_file():
            files = [path]
        else:
            from benchbox.storage.runs import Run

            record = Run.open(path).record
            if record.kind != "train":
                raise BenchboxError(f"{path} is not a training run (kind {record.kind!r})")
            if isinstance(snapshots, str):
                snapshots = [s for s in snapshots.split(",") if s]
            names = snapshots or record.ensemble or best_snapshots(record.snapshots)
            if not names:
                raise BenchboxError(
                    f"training run {path} has no snapshot yet (one is written at the end of every learning-rate "
                    f"cycle); resume it with `benchbox train ... --out {path} --resume`"
                )
            files = [path / name for name in names]
        from benchbox.encoders.char_rnn_net import load_snapshot

        nets = []
        for file in files:
            net, _ = load_snapshot(file)
            nets.append(net)
        expected = (cls.rnn, cls.pooling)
        found = (nets[0].config.rnn, nets[0].config.pooling)
        if found != expected:
            raise BenchboxError(f"{path} holds a {found[0]} model with {found[1]} pooling, not a {cls.name} model")
        return cls(nets, source=str(path))

    @property
    def dim(self) -> int:
        return self.net_config.dim

    @property
    def has_image_branch(self) -> bool:
        """False for a model trained with ``--visual cluster``: it embeds captions only (no retrieval)."""
        return self.members[0].image is not None

    def config(self) -> dict[str, Any]:
        return {
            "architecture": asdict(self.net_config),
            "vocab_size": len(self.members[0].vocab),
            "ensemble_size": len(self.members),
            "source": self.source,
        }

    def weights_digest(self) -> str:
        if self._digest is None:
            arrays: dict[str, Any] = {}
            for i, member in enumerate(self.members):
                arrays.update({f"{i}.{k}": v for k, v in member.state_dict().items()})
                arrays[f"{i}.vocab"] = np.frombuffer("".join(member.vocab.chars).encode("utf-8"), dtype=np.uint8)
            self._digest = digest_arrays(arrays)
        return self._digest

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        # sentences sorted by length and batched in that order: almost no padding, same result as any order
        order = np.argsort([len(s) for s in sentences], kind="stable")
        out = torch.zeros((len(sentences), self.dim))
        with torch.no_grad():
            for start in range(0, len(sentences), batch_size):
                rows = order[start : start + batch_size]
                batch = [sentences[i] for i in rows]
                parts = []
                for member in self.members:
                    chars, lengths = member.vocab.batch(batch)
                    parts.append(member.caption(chars, lengths))
                out[torch.from_numpy(rows)] = _combine(parts)
        return out.numpy()

    def encode_images(self, features: np.ndarray) -> np.ndarray:
        if self.members[0].image is None:
            raise BenchboxError(
                f"this {self.name} model ({self.source}) was trained without images (--visual cluster): it has no "
                "image branch, so it cannot do retrieval; evaluate it on text tasks (no --features needed)"
            )
        x = torch.as_tensor(np.asarray(features, dtype=np.float32))
        if x.ndim != 2 or x.shape[1] != self.net_config.feature_dim:
            raise BenchboxError(
                f"image features must be [n, {self.net_config.feature_dim}], got {tuple(x.shape)}"
            )
        with torch.no_grad():
            return _combine([m.image(x) for m in self.members]).numpy()


def _combine(parts: list[torch.Tensor]) -> torch.Tensor:
    """Ensemble: mean of the members' normalised embeddings, normalised again (identity for one member)."""
    if len(parts) == 1:
        return parts[0]
    return torch.nn.functional.normalize(torch.stack(parts).mean(dim=0), p=2, dim=1)


#: snapshots in the ensemble (Merkx & Frank 2019: the two best)
ENSEMBLE_SIZE = 2


def best_snapshots(snapshots: list[dict[str, Any]]) -> list[str]:
    """The files of the :data:`ENSEMBLE_SIZE` snapshot records (a run manifest's ``"snapshots"``) with the best
    dev ``score``, the later epoch first on a tie: a finished run's ``"ensemble"``, and the members of a run
    still training."""
    best = sorted(snapshots, key=lambda s: (-s["score"], -s["epoch"]))[:ENSEMBLE_SIZE]
    return [s["file"] for s in best]


class CharGRU(CharRNNEncoder):
    name = "char-gru"
    description = "Character-level bidirectional GRU + attention, grounded in images (Merkx & Frank 2019); train first."
    rnn, pooling = ARCHITECTURES[name]


class CharLSTM(CharRNNEncoder):
    name = "char-lstm"
    description = "Character-level bidirectional LSTM + attention, grounded in images (Merkx & Frank 2019); train first."
    rnn, pooling = ARCHITECTURES[name]


class CharGRUMax(CharRNNEncoder):
    name = "char-gru-max"
    description = "Character-level bidirectional GRU + max pooling, grounded in images (Merkx & Frank 2019); train first."
    rnn, pooling = ARCHITECTURES[name]


def encoder_for(members: list[CharRNNNet], source: str | None = None) -> CharRNNEncoder:
    """The registered encoder class matching the members' architecture, wrapping them."""
    for cls in (CharGRU, CharLSTM, CharGRUMax):
        if (cls.rnn, cls.pooling) == (members[0].config.rnn, members[0].config.pooling):
            return cls(members, source=source)
    config = members[0].config
    raise BenchboxError(f"no registered encoder for a {config.rnn} with {config.pooling} pooling")

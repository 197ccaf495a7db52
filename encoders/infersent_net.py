"""The InferSent network: a BiLSTM with max pooling over time (Conneau et al. 2017, "Supervised Learning of
Universal Sentence Representations from Natural Language Inference Data"), and its NLI classifier.

The module layout follows the official ``models.py`` (facebookresearch/InferSent) so that the released
``infersent1.pkl`` / ``infersent2.pkl`` state dicts load as they are: one ``nn.LSTM`` named ``enc_lstm``
(1 layer, bidirectional; keys ``enc_lstm.weight_ih_l0``, ``enc_lstm.weight_hh_l0``, ``enc_lstm.bias_ih_l0``,
``enc_lstm.bias_hh_l0`` and their ``_reverse`` twins). The released models have 300-d inputs and 2048 units
per direction, so sentence embeddings are 4096-d.

Padding (the ``padding`` option). The official forward packs the batch, runs the LSTM and unpacks it again,
which fills the steps after a sentence's end with zeros up to the longest sentence of the batch. Version 1
(``max_pad=True``) takes the max over time of that padded output, so for every sentence shorter than the
longest of its batch each dimension is at least 0: ``"v1"`` reproduces this (the embedding then depends on
the other sentences of the batch). Version 2 (``max_pad=False``) overwrites exact zeros with -1e9 before the
max, i.e. leaves padded steps out: ``"masked"`` (implemented as a mask, so a genuine 0.0 activation is not
mistaken for padding).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from benchbox.errors import BenchboxError

PADDING_MODES = ("v1", "masked")
_PARAMS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
#: the keys of an official InferSent state dict
STATE_KEYS = tuple(f"enc_lstm.{p}{suffix}" for suffix in ("", "_reverse") for p in _PARAMS)


class BiLSTMMax(nn.Module):
    """``enc_lstm`` over word vectors [T, B, word_dim] → max over time → [B, 2·hidden]."""

    def __init__(self, word_dim: int = 300, hidden: int = 2048, padding: str = "v1") -> None:
        super().__init__()
        if padding not in PADDING_MODES:
            raise BenchboxError(f"padding must be one of {', '.join(PADDING_MODES)}, got {padding!r}")
        self.word_dim = word_dim
        self.hidden = hidden
        self.padding = padding
        self.enc_lstm = nn.LSTM(word_dim, hidden, 1, bidirectional=True)

    @property
    def dim(self) -> int:
        return 2 * self.hidden

    def forward(self, words: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``words``: zero-padded [T, B, word_dim]; ``lengths``: [B] (≥ 1, on the CPU)."""
        packed = pack_padded_sequence(words, lengths, enforce_sorted=False)
        output, _ = pad_packed_sequence(self.enc_lstm(packed)[0])  # [max(lengths), B, 2·hidden], zeros past the end
        if self.padding == "masked":
            steps = torch.arange(output.shape[0], device=output.device)[:, None]
            past_end = steps >= lengths.to(output.device)[None, :]
            output = output.masked_fill(past_end[:, :, None], float("-inf"))
        return output.max(dim=0).values


class NLINet(nn.Module):
    """The NLI model of ``train_nli.py``: the encoder applied to premise u and hypothesis v, then a classifier
    on [u, v, |u − v|, u ⊙ v]. ``nonlinear=False`` is ``train_nli.py``'s default (``nonlinear_fc 0``): three
    stacked linear layers (fc_dim, fc_dim, 3) with no nonlinearity in between; ``True`` adds tanh and dropout
    (the paper describes "an MLP with 1 hidden layer of 512 hidden units")."""

    def __init__(self, encoder: BiLSTMMax, fc_dim: int = 512, n_classes: int = 3, nonlinear: bool = False,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.encoder = encoder
        features = 4 * encoder.dim
        if nonlinear:
            self.classifier = nn.Sequential(
                nn.Dropout(dropout), nn.Linear(features, fc_dim), nn.Tanh(),
                nn.Dropout(dropout), nn.Linear(fc_dim, fc_dim), nn.Tanh(),
                nn.Dropout(dropout), nn.Linear(fc_dim, n_classes),
            )
        else:
            self.classifier = nn.Sequential(
                nn.Linear(features, fc_dim), nn.Linear(fc_dim, fc_dim), nn.Linear(fc_dim, n_classes)
            )

    def forward(self, s1: tuple[torch.Tensor, torch.Tensor], s2: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        u = self.encoder(*s1)
        v = self.encoder(*s2)
        return self.classifier(torch.cat((u, v, (u - v).abs(), u * v), dim=1))


def load_state_file(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """Read an InferSent state dict saved with ``torch.save`` (``weights_only=True``: nothing is unpickled)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise BenchboxError(
            f"InferSent weights {path} not found: download infersent1.pkl or infersent2.pkl (see the "
            "facebookresearch/InferSent README) and pass its path (--encoder-opt weights=PATH)"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, EOFError, ... for bad files
        raise BenchboxError(
            f"{path} is not a state dict that loads with torch.load(weights_only=True): {exc}. "
            "benchbox reads the released infersent1.pkl / infersent2.pkl state dicts; a whole pickled model "
            "(e.g. the early infersent.allnli.pickle) is not supported"
        ) from exc
    if not isinstance(state, dict):
        raise BenchboxError(f"{path} holds a {type(state).__name__}, not an InferSent state dict")
    return state


def check_state(state: dict[str, Any], source: str) -> tuple[int, int]:
    """Check an InferSent state dict's keys and shapes; returns (word_dim, hidden)."""
    keys = set(state)
    missing = [k for k in STATE_KEYS if k not in keys]
    extra = sorted(keys - set(STATE_KEYS))
    if missing or extra:
        detail = (f" missing {', '.join(missing)};" if missing else "") + (f" unexpected {', '.join(extra[:5])}" if extra else "")
        raise BenchboxError(
            f"{source} is not an InferSent BiLSTM-max state dict (expected the keys {', '.join(STATE_KEYS)}):{detail}"
        )
    for key in STATE_KEYS:
        if not isinstance(state[key], torch.Tensor) or not state[key].is_floating_point():
            raise BenchboxError(f"{source}: {key} is not a floating-point tensor")
    w_hh = state["enc_lstm.weight_hh_l0"]
    if w_hh.ndim != 2 or w_hh.shape[0] != 4 * w_hh.shape[1]:
        raise BenchboxError(f"{source}: enc_lstm.weight_hh_l0 has shape {tuple(w_hh.shape)}, expected [4·H, H]")
    hidden = int(w_hh.shape[1])
    w_ih = state["enc_lstm.weight_ih_l0"]
    if w_ih.ndim != 2:
        raise BenchboxError(f"{source}: enc_lstm.weight_ih_l0 has shape {tuple(w_ih.shape)}, expected [4·H, word_dim]")
    word_dim = int(w_ih.shape[1])
    expected = {"weight_ih": (4 * hidden, word_dim), "weight_hh": (4 * hidden, hidden),
                "bias_ih": (4 * hidden,), "bias_hh": (4 * hidden,)}
    for key in STATE_KEYS:
        shape = expected[key.split(".")[1].rsplit("_l0", 1)[0]]
        if tuple(state[key].shape) != shape:
            raise BenchboxError(
                f"{source}: {key} has shape {tuple(state[key].shape)}, expected {shape} "
                f"(word_dim {word_dim}, {hidden} units per direction)"
            )
    return word_dim, hidden


def build_encoder(state: dict[str, torch.Tensor], source: str, padding: str) -> BiLSTMMax:
    """A :class:`BiLSTMMax` holding ``state`` (checked first), in eval mode."""
    word_dim, hidden = check_state(state, source)
    net = BiLSTMMax(word_dim, hidden, padding)
    net.load_state_dict({k: v.float() for k, v in state.items()})
    return net.eval()


def embed_batch(vectors: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero-padded [T, B, word_dim] float32 input and the lengths, from per-sentence [len, word_dim] arrays."""
    lengths = torch.tensor([len(v) for v in vectors], dtype=torch.int64)
    out = np.zeros((int(lengths.max()), len(vectors), vectors[0].shape[1]), dtype=np.float32)
    for i, v in enumerate(vectors):
        out[: len(v), i] = v
    return torch.from_numpy(out), lengths

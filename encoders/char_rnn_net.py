"""The networks of the character-level grounded encoder (Merkx & Frank 2019, docs/protocols.md#char-rnn-encoders) and their
snapshot files.

Caption branch: 20-d learned character embeddings → 1-layer bidirectional GRU or LSTM with ``n`` units per
direction (outputs ``h_t`` of size 2n) → pooling → L2 normalisation.

- Attention pooling (the paper's): ``a_t = softmax_t(V tanh(W h_t + b_w) + b_v)``, output ``Σ_t a_t ⊙ h_t``.
  ``W`` maps 2n → 128 (the attention's hidden units) and ``V`` maps 128 → 2n, so the softmax over time is taken
  separately for every one of the 2n dimensions ("⊙"). This is how Merkx's code implements it
  (DannyMerkx/caption2image, ``PyTorch/functions/costum_layers.py``, class ``attention``:
  ``Linear(in_size, hidden_size)``, ``Linear(hidden_size, in_size)``, ``Softmax(dim=1)`` over time,
  ``sum(alpha * input, 1)``). One deliberate difference: padded time steps are masked out of the softmax
  here; Merkx's code lets them take part, which makes an embedding depend on the other sentences in its
  batch.
- Max pooling over the valid time steps (the alternative of §7).

Image branch: one linear layer (Xavier-uniform initialised, as in Merkx's ``img_encoder``) from the image
features (2048-d ResNet-152) to 2n, then L2 normalisation. Trained on video clips with ``--visual attention``,
the net also holds the attention over a clip's frames (:mod:`benchbox.encoders.frame_attention`) whose output
is the image branch's input; it is built after the other branches, so their initial weights do not change.
With the order-violation loss (Vendrov et al. 2016) both branches take the absolute value of the normalised
vector, so embeddings are non-negative.

Sequences are packed (``pack_padded_sequence``), so the recurrent layer never runs on padding — except when
training on the CPU. There PyTorch's packed recurrent layer projects the inputs of all time steps at once and
slices one step at a time, and the backward pass of each slice fills a zero gradient of the whole projection
([Σ lengths, 3n]): quadratic in the length, half the time of a training step at n = 1024. Training on the CPU
therefore runs a GRU by :func:`benchbox.encoders.gru_scan.bidirectional_gru` (both directions in one autograd
function, only the captions still running at each step, a hand-written backward pass that forms the weight
gradients in one product over all steps) and an LSTM by each direction over the padded batch with the module's
own weights (:func:`bidirectional_padded`: the backward direction on every caption reversed within its length,
so padding only ever comes after a caption's last character and never reaches its outputs). The result equals
the packed layer's to float rounding (the order of the sums differs: |Δ| ≈ 1e-7 per output); evaluation, and
training on a GPU, keep the packed layer, so embeddings of a trained model are unchanged.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.func import functional_call
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from benchbox.storage.atomic import torch_save
from benchbox.errors import BenchboxError
from benchbox.encoders.char_vocab import PAD, CharVocab
from benchbox.encoders.frame_attention import FrameAttention
from benchbox.encoders.gru_scan import bidirectional_gru

SNAPSHOT_FORMAT = "benchbox.char-rnn.snapshot/1"
RNN_TYPES = ("gru", "lstm")
POOLINGS = ("attention", "max")


@dataclass(frozen=True)
class NetConfig:
    """Architecture of a char-RNN model; recorded in manifests and snapshot files."""

    rnn: str = "gru"
    pooling: str = "attention"
    hidden: int = 1024
    char_dim: int = 20
    attention_hidden: int = 128
    #: image feature dimension; ``None`` for a caption-only model (``--visual cluster``)
    feature_dim: int | None = 2048
    #: non-negative embeddings (order-violation loss)
    nonneg: bool = False
    #: dimension of the fixed word vectors that drive attention over a clip's frames (``--visual attention``,
    #: :mod:`benchbox.encoders.frame_attention`); None: no frame attention
    clip_query_dim: int | None = None

    def __post_init__(self) -> None:
        if self.rnn not in RNN_TYPES:
            raise BenchboxError(f"rnn must be one of {RNN_TYPES}, not {self.rnn!r}")
        if self.pooling not in POOLINGS:
            raise BenchboxError(f"pooling must be one of {POOLINGS}, not {self.pooling!r}")
        for key in ("hidden", "char_dim", "attention_hidden"):
            if int(getattr(self, key)) < 1:
                raise BenchboxError(f"{key} must be a positive integer, not {getattr(self, key)!r}")
        if self.feature_dim is not None and int(self.feature_dim) < 1:
            raise BenchboxError(f"feature_dim must be positive, not {self.feature_dim!r}")
        if self.clip_query_dim is not None and (int(self.clip_query_dim) < 1 or self.feature_dim is None):
            raise BenchboxError(f"clip_query_dim must be positive and needs feature_dim, not {self.clip_query_dim!r}")

    @property
    def dim(self) -> int:
        return 2 * self.hidden


class AttentionPooling(nn.Module):
    """Per-dimension self-attention over time (see the module docstring)."""

    def __init__(self, size: int, hidden: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(size, hidden)
        self.out = nn.Linear(hidden, size)

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = self.out(torch.tanh(self.hidden(h)))
        scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))
        return (torch.softmax(scores, dim=1) * h).sum(dim=1)


class CaptionEncoder(nn.Module):
    """Characters → L2-normalised sentence embedding of size 2n."""

    def __init__(self, vocab_size: int, config: NetConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, config.char_dim, padding_idx=PAD)
        rnn_cls = nn.GRU if config.rnn == "gru" else nn.LSTM
        self.rnn = rnn_cls(config.char_dim, config.hidden, num_layers=1, batch_first=True, bidirectional=True)
        self.attention = AttentionPooling(config.dim, config.attention_hidden) if config.pooling == "attention" else None
        self.nonneg = config.nonneg

    def forward(self, chars: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``chars`` [B, T] int64 (pad 0), ``lengths`` [B] int64 on CPU → [B, 2n]."""
        packed = not (torch.is_grad_enabled() and chars.device.type == "cpu")  # module docstring
        return self.pool(self.recurrent(chars, lengths, packed=packed), lengths)

    def recurrent(self, chars: torch.Tensor, lengths: torch.Tensor, *, packed: bool) -> torch.Tensor:
        """The recurrent layer's outputs [B, T_max, 2n] for the characters ``chars``, zero past each caption's
        length: by the packed layer, or over the padded batch (a GRU by
        :func:`benchbox.encoders.gru_scan.bidirectional_gru`, an LSTM by :func:`bidirectional_padded`)."""
        if not packed:
            chars = chars[:, : int(lengths.max())]
            if isinstance(self.rnn, nn.GRU):
                return bidirectional_gru(chars, lengths, self.embed.weight,
                                         [getattr(self.rnn, k + suffix) for suffix in ("", "_reverse")
                                          for k in DIRECTION_WEIGHTS])
            return bidirectional_padded(self.rnn, self.embed(chars), lengths)
        sequence = pack_padded_sequence(self.embed(chars), lengths, batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(self.rnn(sequence)[0], batch_first=True)[0]

    def pool(self, h: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Attention or max pooling over each caption's steps, then L2 normalisation."""
        mask = torch.arange(h.shape[1], device=h.device)[None, :] < lengths.to(h.device)[:, None]
        if self.attention is not None:
            pooled = self.attention(h, mask)
        else:
            pooled = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)
        return _finish(pooled, self.nonneg)


#: the weights of one direction of a one-layer recurrent module, by the names a one-direction module uses
DIRECTION_WEIGHTS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


@lru_cache(maxsize=8)
def one_direction(kind: type[nn.RNNBase], input_size: int, hidden: int) -> nn.RNNBase:
    """A one-direction, one-layer module of ``kind`` whose weights :func:`bidirectional_padded` replaces with a
    direction of the real module (:func:`torch.func.functional_call`); it holds no weights of a model."""
    return kind(input_size, hidden, num_layers=1, batch_first=True)


def reverse_within(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Every row of ``x`` [B, T, d] reversed within its length (padding stays at the end); its own inverse."""
    steps = torch.arange(x.shape[1], device=x.device)[None, :]
    ends = lengths.to(x.device)[:, None]
    index = torch.where(steps < ends, ends - 1 - steps, steps)
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[2]))


def bidirectional_padded(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The outputs [B, T, 2n] of the bidirectional one-layer ``rnn`` (an LSTM while training on the CPU; a GRU
    takes :func:`benchbox.encoders.gru_scan.bidirectional_gru`) on the padded batch ``x`` (module docstring):
    each direction's weights in :func:`one_direction`, the backward one on the captions reversed within their
    length; outputs past a caption's length are zero, as ``pad_packed_sequence`` leaves them."""

    def direction(inputs: torch.Tensor, suffix: str) -> torch.Tensor:
        weights = {k: getattr(rnn, k + suffix) for k in DIRECTION_WEIGHTS}
        return functional_call(one_direction(type(rnn), rnn.input_size, rnn.hidden_size), weights, (inputs,))[0]

    forward = direction(x, "")
    backward = direction(reverse_within(x, lengths), "_reverse")
    out = torch.cat([forward, reverse_within(backward, lengths)], dim=2)
    valid = torch.arange(x.shape[1], device=x.device)[None, :] < lengths.to(x.device)[:, None]
    return out * valid[..., None]


class ImageEncoder(nn.Module):
    """Image features → L2-normalised embedding of size 2n (one linear layer)."""

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        assert config.feature_dim is not None
        self.linear = nn.Linear(config.feature_dim, config.dim)
        nn.init.xavier_uniform_(self.linear.weight)
        self.nonneg = config.nonneg

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return _finish(self.linear(features), self.nonneg)


def _finish(x: torch.Tensor, nonneg: bool) -> torch.Tensor:
    x = F.normalize(x, p=2, dim=1)
    return x.abs() if nonneg else x


class CharRNNNet(nn.Module):
    """The caption branch, (unless caption-only) the image branch and (with ``clip_query_dim``) the attention over
    a clip's frames that makes the image branch's input while training on clips."""

    def __init__(self, vocab: CharVocab, config: NetConfig) -> None:
        super().__init__()
        self.vocab = vocab
        self.config = config
        self.caption = CaptionEncoder(len(vocab), config)
        self.image = ImageEncoder(config) if config.feature_dim is not None else None
        self.frame_attention = None
        if config.clip_query_dim is not None:
            assert config.feature_dim is not None
            self.frame_attention = FrameAttention(config.clip_query_dim, config.feature_dim)


def save_snapshot(net: CharRNNNet, path: str | os.PathLike, meta: dict[str, Any] | None = None) -> None:
    """Write the model (weights, architecture, vocabulary) as a weights-only-loadable file, atomically."""
    payload = {
        "format": SNAPSHOT_FORMAT,
        "config": asdict(net.config),
        "vocab": list(net.vocab.chars),
        "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()},
        "meta": meta or {},
    }
    torch_save(payload, path)


def read_checkpoint_file(path: str | os.PathLike) -> dict[str, Any]:
    """``torch.load(weights_only=True)`` with a clear error for a missing, truncated or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise BenchboxError(f"checkpoint {path} does not exist")
    try:
        with warnings.catch_warnings():  # a foreign pickle makes torch warn of its protocol before refusing it
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, UnpicklingError, EOFError, ... for bad files
        raise BenchboxError(
            f"checkpoint {path} is corrupt or not a weights-only torch file ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); re-train or re-copy it"
        ) from exc
    if not isinstance(payload, dict):
        raise BenchboxError(f"checkpoint {path} holds a {type(payload).__name__}, not a benchbox checkpoint")
    return payload


def load_snapshot(path: str | os.PathLike) -> tuple[CharRNNNet, dict[str, Any]]:
    """A model from a snapshot file written by :func:`save_snapshot`, and its ``meta`` record."""
    payload = read_checkpoint_file(path)
    if payload.get("format") != SNAPSHOT_FORMAT:
        raise BenchboxError(
            f"{path} is not a char-RNN snapshot of this benchbox version (format {payload.get('format')!r}, "
            f"expected {SNAPSHOT_FORMAT!r})"
        )
    try:
        config = NetConfig(**payload["config"])
        vocab = CharVocab(tuple(payload["vocab"]))
        net = CharRNNNet(vocab, config)
        net.load_state_dict(payload["state_dict"])
    except BenchboxError as exc:  # a bad vocabulary or configuration: say which file holds it
        raise BenchboxError(f"snapshot {path}: {exc}; re-train or re-copy it") from None
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as exc:
        reason = " ".join(str(exc).split())  # torch's size-mismatch report spans lines
        raise BenchboxError(f"snapshot {path} is incompatible with its recorded architecture: {reason}") from None
    net.eval()
    return net, dict(payload.get("meta") or {})

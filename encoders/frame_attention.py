"""Attention over the frames of a clip driven by a sentence (Bordes et al.'s video model T;
docs/protocols.md#video-context).

For a clip of n frames x_1 … x_n (D-dim) and a fixed query vector q of its caption (the sum of the caption's
GloVe word vectors, Bordes et al.'s Σ_w u_w, with ``--attention-query sum``, the default; their mean with
``--attention-query mean``: :func:`benchbox.training.clips.caption_queries`; never trained), a learned projection
W (d_q → D, no bias) gives the scores s_f = (W q) · x_f, the weights a = softmax over the clip's n frames
(padding frames excluded, so the weights of a clip sum to 1) and the clip's vector Σ_f a_f x_f — soft temporal
attention over frames as in Yao et al. (2015), "Describing videos by exploiting temporal structure", ICCV,
with the sentence as the query. W starts at zero, so an untrained T is the frame average A and training moves
the attention from there.
"""

from __future__ import annotations

import torch
from torch import nn


class FrameAttention(nn.Module):
    """Sentence-driven softmax attention over a clip's frames (module docstring)."""

    def __init__(self, query_dim: int, frame_dim: int) -> None:
        super().__init__()
        self.project = nn.Linear(query_dim, frame_dim, bias=False)
        nn.init.zeros_(self.project.weight)

    def weights(self, frames: torch.Tensor, counts: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """[B, F] attention weights of ``frames`` [B, F, D] (clip b's first ``counts[b]`` rows are its frames)
        for ``queries`` [B, d_q]; zero on padding, each row sums to 1."""
        scores = torch.einsum("bfd,bd->bf", frames, self.project(queries))
        valid = torch.arange(frames.shape[1], device=frames.device)[None, :] < counts.to(frames.device)[:, None]
        return torch.softmax(scores.masked_fill(~valid, float("-inf")), dim=1)

    def forward(self, frames: torch.Tensor, counts: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """[B, D]: each clip's frames weighted by :meth:`weights`."""
        return torch.einsum("bf,bfd->bd", self.weights(frames, counts, queries), frames)

"""The visual vector of a video clip under Bordes et al.'s clip models (docs/protocols.md#video-context), from
its frames (:mod:`benchbox.data.clip_features`):

- ``--visual frame`` (F, one frame): the clip's middle frame, row ⌊(n − 1)/2⌋ of its n frames;
- ``--visual average`` (A): the mean of its n frames;
- ``--visual attention`` (T): the frames weighted by a softmax attention whose scores come from the caption's
  fixed word vectors through a learned projection (:class:`benchbox.encoders.frame_attention.FrameAttention`);
  the query of a caption is its GloVe bag of words (:func:`caption_queries`), so a clip has one vector per
  caption while training. Where one vector per clip is needed (dev retrieval for snapshot selection, structure
  measures) the query is the mean of the queries of the clip's captions (:func:`clip_queries`);
- R (random anchors, the control) is ``--visual random``: a fixed random vector per clip id
  (:func:`benchbox.training.data.random_anchors`), whatever the frames.

On clips of one frame (an image-features file) F, A and T all give that frame, exactly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from benchbox.data.clip_features import Clips
    from benchbox.encoders.frame_attention import FrameAttention
    from benchbox.encoders.glove_bow import GloveBowEncoder

#: the ``--visual`` modes that read a clip's frames: Bordes et al.'s F, A and T
CLIP_VISUALS = ("frame", "average", "attention")


def middle_frame(clips: Clips) -> np.ndarray:
    """[N, D]: each clip's middle frame (row ⌊(n − 1)/2⌋ of its n frames)."""
    return clips.frames[np.arange(len(clips.counts)), (clips.counts - 1) // 2]


def average_frames(clips: Clips) -> np.ndarray:
    """[N, D]: the mean of each clip's frames (summed in float64, padding excluded)."""
    sums = (clips.frames * clips.valid[..., None]).sum(axis=1, dtype=np.float64)
    return (sums / clips.counts[:, None]).astype(np.float32)


def fixed_clip_vectors(visual: str, clips: Clips) -> np.ndarray:
    """The vectors of the clip models with no learned part: ``frame`` (F) or ``average`` (A)."""
    return middle_frame(clips) if visual == "frame" else average_frames(clips)


def make_query_encoder(word_vectors: str | os.PathLike | None) -> GloveBowEncoder:
    """T's fixed sentence encoder: benchbox's ``glove-bow`` on ``word_vectors`` (a word-vector file; default the
    packaged GloVe 6B 50-d)."""
    from benchbox.encoders.glove_bow import GloveBowEncoder

    return GloveBowEncoder(vectors=word_vectors)


def caption_queries(captions: list[str], encoder: GloveBowEncoder) -> np.ndarray:
    """[n, d_q]: T's fixed query of every caption, the mean of its known words' vectors (``glove-bow``:
    lower-cased whitespace tokens for GloVe 6B, unknown words skipped, zero when none is known)."""
    return encoder.encode(captions, batch_size=1024)


def query_record(encoder: GloveBowEncoder) -> dict[str, Any]:
    """The manifest's description of T's word vectors."""
    return {"source": str(encoder.word_vectors.source), "digest": encoder.weights_digest(), "dim": encoder.dim}


def clip_queries(queries: np.ndarray, per_clip: int) -> np.ndarray:
    """[N, d_q]: the mean query of each clip's captions (caption k of clip i at row per_clip·i + k)."""
    return queries.reshape(-1, per_clip, queries.shape[1]).mean(axis=1, dtype=np.float64).astype(np.float32)


def attended_clip_vectors(attention: FrameAttention, clips: Clips, queries: np.ndarray) -> np.ndarray:
    """[N, D]: T's vector of every clip for ``queries`` [N, d_q] (one per clip), without gradients."""
    import torch

    device = attention.project.weight.device
    with torch.no_grad():
        out = attention(torch.from_numpy(clips.frames).to(device), torch.from_numpy(clips.counts),
                        torch.from_numpy(queries).to(device))
    return out.cpu().numpy()

"""The visual vector of a video clip under Bordes et al.'s clip models (docs/protocols.md#video-context), from
its frames (:mod:`benchbox.data.clip_features`):

- ``--visual frame`` (F, one frame): the clip's first frame, v = i_1 as Bordes et al. (2019, §2.3) define F
  (``--frame first``, the default), or its middle frame, row ⌊(n − 1)/2⌋ of its n frames (``--frame middle``,
  a recorded variant: :data:`FRAMES`);
- ``--visual average`` (A): the mean of its n frames;
- ``--visual attention`` (T): the frames weighted by a softmax attention whose scores come from the caption's
  fixed word vectors through a learned projection (:class:`benchbox.encoders.frame_attention.FrameAttention`);
  the query of a caption is the sum of its known words' GloVe vectors, Σ_w u_w, as in Bordes et al.'s
  β_k = softmax_k(⟨Σ_w u_w, N·i_k⟩) (``--attention-query sum``, the default), or their mean (``--attention-query
  mean``, a recorded variant: :data:`ATTENTION_QUERIES`; the softmax is then |w| times flatter for a
  |w|-word caption) (:func:`caption_queries`), so a clip has one vector per caption while training. Where one
  vector per clip is needed (dev retrieval for snapshot selection, structure measures) the query is the mean of
  the queries of the clip's captions (:func:`clip_queries`);
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
#: F's frame (``--frame``): Bordes et al.'s first (the default) or the middle one
FRAMES = ("first", "middle")
#: T's query of a caption (``--attention-query``): Bordes et al.'s sum of its word vectors (the default) or their mean
ATTENTION_QUERIES = ("sum", "mean")


def first_frame(clips: Clips) -> np.ndarray:
    """[N, D]: each clip's first frame, i_1 (row 0)."""
    return clips.frames[:, 0].copy()


def middle_frame(clips: Clips) -> np.ndarray:
    """[N, D]: each clip's middle frame (row ⌊(n − 1)/2⌋ of its n frames)."""
    return clips.frames[np.arange(len(clips.counts)), (clips.counts - 1) // 2]


def average_frames(clips: Clips) -> np.ndarray:
    """[N, D]: the mean of each clip's frames (summed in float64, padding excluded)."""
    sums = (clips.frames * clips.valid[..., None]).sum(axis=1, dtype=np.float64)
    return (sums / clips.counts[:, None]).astype(np.float32)


def fixed_clip_vectors(visual: str, clips: Clips, frame: str = FRAMES[0]) -> np.ndarray:
    """The vectors of the clip models with no learned part: ``frame`` (F, the ``frame`` of :data:`FRAMES`) or
    ``average`` (A)."""
    if visual != "frame":
        return average_frames(clips)
    return first_frame(clips) if frame == "first" else middle_frame(clips)


def make_query_encoder(word_vectors: str | os.PathLike | None) -> GloveBowEncoder:
    """T's fixed sentence encoder: benchbox's ``glove-bow`` on ``word_vectors`` (a word-vector file; default the
    packaged GloVe 6B 50-d)."""
    from benchbox.encoders.glove_bow import GloveBowEncoder

    return GloveBowEncoder(vectors=word_vectors)


def caption_queries(captions: list[str], encoder: GloveBowEncoder, query: str = ATTENTION_QUERIES[0]) -> np.ndarray:
    """[n, d_q]: T's fixed query of every caption (:data:`ATTENTION_QUERIES`), the sum or the mean of its known
    words' vectors (``glove-bow``'s words: lower-cased whitespace tokens for GloVe 6B, unknown words skipped,
    zero when none is known); the sum is the mean times the number of known words, in float64."""
    means = encoder.encode(captions, batch_size=1024)
    if query == "mean":
        return means
    return (means * known_words(captions, encoder)[:, None].astype(np.float64)).astype(np.float32)


def known_words(captions: list[str], encoder: GloveBowEncoder) -> np.ndarray:
    """[n]: how many of each caption's tokens (:meth:`GloveBowEncoder.tokens`) ``encoder`` knows."""
    vocabulary = encoder.word_vectors.index
    return np.array([sum(token in vocabulary for token in encoder.tokens(c)) for c in captions], dtype=np.int64)


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

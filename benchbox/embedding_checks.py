"""Embeddings that cannot score are refused, never scored.

Two gates:

- :func:`check_encoder_output`: what an encoder returned for a batch of sentences, before anything uses or
  caches it: shape [n, dim], a floating dtype (returned as float32), finite values. A NaN or infinite row is
  an error naming the encoder and the sentence, so a broken encoder (NaN weights after a divergent training
  run, a bad option) never poisons the embedding cache.
- :func:`require_informative`: what a metric is about to score (retrieval, correlation, structure): no
  non-finite rows and not all rows identical. Cosine, correlation and rank metrics are undefined or
  degenerate on such input: NaN similarities are ignored by every "strictly greater" comparison and constant
  ones tie everywhere, so under the optimistic tie rule of VSE++-style retrieval every target would rank first
  (R@1 = 100), and a constant cosine gives Pearson NaN or 0. The metric raises instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchbox.errors import BenchboxError


def check_encoder_output(out: Any, sentences: Sequence[str], encoder: str, dim: int | None = None) -> np.ndarray:
    """``out`` as a float32 [len(sentences), dim] array, or :class:`BenchboxError` saying what is wrong."""
    array = np.asarray(out)
    n = len(sentences)
    expected = f"({n}, {dim if dim is not None else 'dim'})"
    if array.ndim != 2 or array.shape[0] != n or (dim is not None and array.shape[1] != dim):
        raise BenchboxError(f"encoder {encoder!r} returned shape {array.shape} for {n} sentences, expected {expected}; "
                            "nothing was cached")
    if array.dtype.kind != "f":
        raise BenchboxError(f"encoder {encoder!r} returned dtype {array.dtype}, expected float32; nothing was cached")
    array = array.astype(np.float32, copy=False)
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        first = int(np.flatnonzero(~finite)[0])
        raise BenchboxError(
            f"encoder {encoder!r} returned NaN or infinite values for {int((~finite).sum())} of {n} sentences "
            f"(first: {sentences[first][:80]!r}); nothing was cached: check the encoder (weights, options)"
        )
    return array


def require_informative(embeddings: Any, encoder: str, what: str) -> None:
    """Raise :class:`BenchboxError` if ``embeddings`` [n, d] has non-finite rows or (n ≥ 2) all rows equal."""
    array = np.asarray(embeddings)
    if array.ndim != 2 or len(array) == 0:
        return
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        raise BenchboxError(f"{what}: {int((~finite).sum())} of {len(array)} embeddings of encoder {encoder!r} "
                            "are NaN or infinite; they cannot be scored")
    if len(array) >= 2 and bool((array == array[0]).all()):
        raise BenchboxError(f"{what}: all {len(array)} embeddings of encoder {encoder!r} are identical (a constant "
                            "encoder); they cannot be scored")

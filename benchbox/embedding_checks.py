"""Embeddings that cannot score are refused, never scored.

Three gates:

- :func:`as_array`: what an encoder call returned, as a numpy array: a torch tensor is detached, moved to the
  CPU and converted (bfloat16 and float16 to float32); a tuple or list is read as one row per input only when
  it has one item per input (so ``(embeddings, extra)`` is refused, not stacked into a 3-d array); anything
  numpy cannot read as a numeric matrix is one line naming the encoder and the call.
- :func:`check_encoder_output`: what an encoder returned for a batch of sentences, before anything uses or
  caches it: shape [n, dim], a floating dtype (returned as float32), finite values. A NaN or infinite row is
  an error naming the encoder and the sentence, so a broken encoder (NaN weights after a divergent training
  run, a bad option) never poisons the embedding cache.
- :func:`require_informative`: what a metric is about to score (retrieval, correlation, structure): no
  non-finite rows and not all rows identical. Cosine, correlation and rank metrics are undefined or
  degenerate on such input: NaN similarities are ignored by every "strictly greater" comparison and constant
  ones tie everywhere, so under the optimistic tie rule of VSE++-style retrieval every target would rank first
  (R@1 = 100), and a constant cosine gives Pearson NaN or 0. The metric raises instead.
- :func:`check_image_output`: what an image branch (``encode_images``) returned: one row per image, the
  joint-space width, finite, and not the same vector for every image (a dead image branch returning zeros once
  scored R@1 = 100 under the optimistic tie rule). Each error names the encoder and the image branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchbox.errors import BenchboxError


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach")


def _tensor_to_numpy(tensor: Any) -> np.ndarray:
    """A torch tensor's values on the CPU (gradients dropped; floating types other than float64 as float32)."""
    tensor = tensor.detach().cpu()
    if tensor.is_floating_point() and str(tensor.dtype) != "torch.float64":
        tensor = tensor.float()
    return tensor.numpy()


def as_array(out: Any, n: int, encoder: str, call: str = "encode()", unit: str = "sentences") -> np.ndarray:
    """``out``, returned by ``call`` of ``encoder`` for ``n`` inputs, as a numpy array (module docstring), or a
    one-line :class:`BenchboxError` saying what it was."""
    if _is_tensor(out):
        return _tensor_to_numpy(out)
    if isinstance(out, (tuple, list)):
        if len(out) != n:
            raise BenchboxError(
                f"encoder {encoder!r}: {call} returned a {type(out).__name__} of {len(out)} items for {n} {unit}; "
                f"return one [{n}, dim] array, or one row per input (not a pair such as (embeddings, extra))")
        out = [_tensor_to_numpy(row) if _is_tensor(row) else row for row in out]
    try:
        return np.asarray(out)
    except (ValueError, TypeError, RuntimeError) as exc:  # ragged rows, objects numpy cannot read
        raise BenchboxError(f"encoder {encoder!r}: {call} returned {type(out).__name__} that is not a numeric "
                            f"[{n}, dim] matrix ({' '.join(str(exc).split())[:200]})") from None


def check_encoder_output(out: Any, sentences: Sequence[str], encoder: str, dim: int | None = None) -> np.ndarray:
    """``out`` as a float32 [len(sentences), dim] array, or :class:`BenchboxError` saying what is wrong."""
    n = len(sentences)
    array = as_array(out, n, encoder)
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


#: rows closer than this many float32 ulps of their largest entry count as one vector: one computation rounds
#: differently per row on some CPUs (a GEMM's AVX-512 kernel splits rows that its AVX2 kernel keeps together), so
#: a constant encoder or identical inputs must be recognised up to rounding, the same on every CPU
SAME_VECTOR_ULPS = 16


def all_rows_equal(array: np.ndarray) -> bool:
    """Whether the n ≥ 2 rows of ``array`` are one vector up to float32 rounding (:data:`SAME_VECTOR_ULPS`)."""
    if len(array) < 2:
        return False
    tolerance = SAME_VECTOR_ULPS * np.finfo(np.float32).eps * max(float(np.abs(array[0]).max(initial=0.0)), 1e-30)
    return bool(np.abs(array - array[0]).max(initial=0.0) <= tolerance)


def require_informative(embeddings: Any, encoder: str, what: str) -> None:
    """Raise :class:`BenchboxError` if ``embeddings`` [n, d] has non-finite rows or (n ≥ 2) all rows equal
    (:func:`all_rows_equal`)."""
    array = np.asarray(embeddings)
    if array.ndim != 2 or len(array) == 0:
        return
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        raise BenchboxError(f"{what}: {int((~finite).sum())} of {len(array)} embeddings of encoder {encoder!r} "
                            "are NaN or infinite; they cannot be scored")
    if all_rows_equal(array):
        raise BenchboxError(f"{what}: all {len(array)} embeddings of encoder {encoder!r} are identical (a constant "
                            "encoder); they cannot be scored")


def check_image_output(out: Any, n_images: int, encoder: str, dim: int | None = None) -> np.ndarray:
    """What ``encode_images`` of ``encoder`` returned for ``n_images`` images, as float32 [n_images, dim]; else a
    one-line :class:`BenchboxError` naming the encoder and its image branch."""
    call = "encode_images() (the image branch)"
    array = as_array(out, n_images, encoder, call, "images")
    if array.ndim != 2 or array.shape[0] != n_images or (dim is not None and array.shape[1] != dim):
        raise BenchboxError(f"encoder {encoder!r}: {call} returned shape {array.shape} for {n_images} images, "
                            f"expected ({n_images}, {dim if dim is not None else 'dim'})")
    if array.dtype.kind != "f":
        raise BenchboxError(f"encoder {encoder!r}: {call} returned dtype {array.dtype}, expected float32")
    array = array.astype(np.float32, copy=False)
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        raise BenchboxError(f"encoder {encoder!r}: {call} returned NaN or infinite values for "
                            f"{int((~finite).sum())} of {n_images} images: check the encoder and the image features")
    if all_rows_equal(array):
        raise BenchboxError(f"encoder {encoder!r}: {call} returned the same vector for all {n_images} images (a "
                            "dead image branch, or identical image features); they cannot be scored")
    return array

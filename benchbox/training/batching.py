"""Epoch plans: which captions go together in each minibatch, with length bucketing.

As in Merkx's batcher, an epoch visits every caption once in five passes over the shuffled images (pass k
uses caption k of every image), so a minibatch never holds two captions of the same image (which would be
false negatives for the in-batch ranking loss). Where items have different numbers of captions (the clips of an
MSVD-format dataset keep all their descriptions) there are as many passes as the most captions of an item, and
pass k shuffles the items that have a caption k (with five each: every item, as above). Length bucketing: each pass is cut into chunks of
``bucket_batches`` minibatches, a chunk is sorted by caption length and split into minibatches, and the
minibatches of the epoch are shuffled. Captions of a minibatch then have nearly equal lengths, so a padded
batch wastes almost no recurrent steps (:func:`padding_waste`). The last incomplete minibatch of a pass is
dropped (as Merkx's batcher does). A plan is a pure function of (seed, epoch): resuming replays it exactly.

Each entry also names a *partner* caption of the same image (another of its captions, chosen at random) for
losses that need two captions per image (``--visual cluster``, Bordes et al.'s cluster loss).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchbox.data.captions import PER_IMAGE as CAPTIONS_PER_IMAGE


@dataclass(frozen=True)
class Batch:
    """Rows into the caption list (image i's caption k is row 5i + k, or ``starts[i] + k`` with ``counts``) and
    the images they belong to."""

    images: np.ndarray
    captions: np.ndarray
    partners: np.ndarray


def epoch_plan(
    lengths: np.ndarray, *, batch_size: int, seed: int, epoch: int, bucket_batches: int = 50,
    counts: np.ndarray | None = None,
) -> list[Batch]:
    """Minibatches for one epoch. ``lengths``: characters of each caption, [5N] (5 per image), or with ``counts``
    (captions per image, [N], each at least two) [sum of counts], image i's captions consecutive."""
    lengths = np.asarray(lengths)
    if counts is None:
        if len(lengths) % CAPTIONS_PER_IMAGE:
            raise ValueError("expected 5 captions per image")
        counts = np.full(len(lengths) // CAPTIONS_PER_IMAGE, CAPTIONS_PER_IMAGE, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.sum() != len(lengths) or counts.min() < 2:
        raise ValueError("expected at least 2 captions per image, as many in all as caption lengths")
    starts = np.cumsum(counts) - counts
    rng = np.random.default_rng([seed, epoch])
    chunk = batch_size * bucket_batches
    batches: list[Batch] = []
    for k in range(int(counts.max())):
        images = rng.permutation(len(counts))
        images = images[counts[images] > k]
        n = counts[images]
        partners = starts[images] + (k + 1 + rng.integers(0, n - 1)) % n
        rows = starts[images] + k
        usable = (len(images) // batch_size) * batch_size
        for start in range(0, usable, chunk):
            stop = min(start + chunk, usable)
            sort = start + np.argsort(lengths[rows[start:stop]], kind="stable")
            for b in range(0, stop - start, batch_size):
                sel = sort[b : b + batch_size]
                batches.append(Batch(images=images[sel], captions=rows[sel], partners=partners[sel]))
    order = rng.permutation(len(batches))
    return [batches[i] for i in order]


def padding_waste(batch_lengths: list[np.ndarray]) -> float:
    """Share of the padded [B, T_max] grids that is padding, over a list of minibatches."""
    padded = sum(len(b) * int(np.max(b)) for b in batch_lengths)
    real = sum(int(np.sum(b)) for b in batch_lengths)
    return 1.0 - real / padded if padded else 0.0

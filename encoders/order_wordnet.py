"""Order embeddings of WordNet concepts (Vendrov et al. 2016, §4.1): one non-negative vector per noun synset,
trained by ``benchbox train order-wordnet`` (:mod:`benchbox.training.order_wordnet`) and loaded from its run
folder (``benchbox eval RUN --task hypernym``).

A "sentence" is a synset name as NLTK writes it (``dog.n.01``, :mod:`benchbox.data.wordnet`); its embedding is
the synset's row. A name that is not a trained concept is refused in one line. ``similarity = "order"``: the
vectors are compared by the order-violation penalty, not the cosine. ``hypernym_split`` is the digest of the
split the embeddings were trained on, which the ``hypernym`` task checks.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError

#: the run folder's files: the [concepts, dim] float32 matrix and the concept names, one a line, in row order
EMBEDDINGS_FILE = "embeddings.npy"
CONCEPTS_FILE = "concepts.txt"


class OrderWordNet(Encoder):
    name = "order-wordnet"
    description = "order embeddings of WordNet noun synsets (Vendrov et al. 2016); input: synset names (dog.n.01)"
    similarity = "order"

    def __init__(self, embeddings: np.ndarray, concepts: list[str], hypernym_split: str | None = None) -> None:
        if embeddings.ndim != 2 or len(embeddings) != len(concepts):
            raise BenchboxError(f"{len(concepts)} concept names for an embedding matrix of shape {embeddings.shape}")
        self.embeddings = np.asarray(embeddings, dtype=np.float32)
        self.rows = {name: i for i, name in enumerate(concepts)}
        self.hypernym_split = hypernym_split

    @classmethod
    def from_path(cls, path: str | os.PathLike, **kwargs: Any) -> OrderWordNet:
        """Load a ``benchbox train order-wordnet`` run folder."""
        from benchbox.storage.runs import Run

        path = Path(path)
        record = Run.open(path).record
        if record.kind != "train" or record.encoder.name != cls.name:
            raise BenchboxError(f"{path} is not an order-wordnet training run")
        if kwargs:
            raise BenchboxError(f"order-wordnet takes no options, got {', '.join(sorted(kwargs))}")
        if not (path / EMBEDDINGS_FILE).is_file():
            raise BenchboxError(f"training run {path} has no {EMBEDDINGS_FILE} (written when training ends)")
        concepts = (path / CONCEPTS_FILE).read_text(encoding="utf-8").splitlines()
        return cls(np.load(path / EMBEDDINGS_FILE), concepts, record.encoder.config.get("hypernym_split"))

    @property
    def dim(self) -> int:
        return self.embeddings.shape[1]

    def config(self) -> dict[str, Any]:
        return {"concepts": len(self.rows), "hypernym_split": self.hypernym_split}

    def weights_digest(self) -> str:
        return hashlib.sha256(np.ascontiguousarray(self.embeddings).tobytes()).hexdigest()[:16]

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        unknown = [s for s in sentences if s not in self.rows]
        if unknown:
            raise BenchboxError(f"{len(unknown)} input(s) are not WordNet noun synsets of this model (e.g. "
                                f"{unknown[0]!r}); order-wordnet embeds synset names such as 'dog.n.01'")
        return self.embeddings[[self.rows[s] for s in sentences]]

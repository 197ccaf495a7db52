"""GloVe bag-of-words: the mean of the word vectors of a sentence's tokens.

As SentEval's bag-of-words example (``examples/bow.py``, Conneau & Kiela 2018): tokens are the
whitespace-separated words (SentEval's task files are already tokenised), out-of-vocabulary tokens are
skipped, a sentence with no known token is the zero vector, and an empty sentence is encoded as ``"."``.
With the default GloVe 6B vectors (an uncased vocabulary) tokens are lower-cased first; pass
``lowercase=False`` for cased vectors such as GloVe 840B.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from benchbox.encoding.protocol import Encoder
from benchbox.data.wordvec import WordVectors, load_word_vectors

#: sentences per block, bounding the memory of the gathered word vectors
BLOCK = 1024


class GloveBowEncoder(Encoder):
    """Mean of word vectors (``glove-bow``). ``vectors``: a word-vector file or ``"glove-6b-50d"``."""

    name = "glove-bow"
    computed_by = ("numpy",)
    description = "Mean of GloVe word vectors over whitespace tokens (SentEval's BOW baseline); default GloVe 6B 50-d."

    def __init__(
        self,
        vectors: str | os.PathLike | None = None,
        vocab: str | os.PathLike | None = None,
        lowercase: bool | None = None,
    ) -> None:
        self.word_vectors: WordVectors = load_word_vectors(vectors, vocab=vocab)
        self.lowercase = self.word_vectors.lowercase_vocab if lowercase is None else lowercase

    @property
    def dim(self) -> int:
        return self.word_vectors.dim

    def config(self) -> dict[str, Any]:
        return {"vectors": self.word_vectors.source, "lowercase": self.lowercase, "dim": self.dim}

    def weights_digest(self) -> str:
        return self.word_vectors.digest

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        out = np.empty((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(sentences), BLOCK):
            out[start : start + BLOCK] = self._mean_vectors(sentences[start : start + BLOCK])
        return out

    def tokens(self, sentence: str) -> list[str]:
        """``sentence``'s tokens as this encoder reads them: whitespace tokens, lower-cased for an uncased
        vocabulary; an empty sentence is the one token "."."""
        return (sentence.lower() if self.lowercase else sentence).split() or ["."]

    def _mean_vectors(self, sentences: list[str]) -> np.ndarray:
        """Means over known tokens, summed in float64 per sentence with ``np.add.reduceat``."""
        lookup = self.word_vectors.index.get
        rows: list[int] = []
        counts = np.zeros(len(sentences), dtype=np.int64)
        for i, sentence in enumerate(sentences):
            known = [r for r in map(lookup, self.tokens(sentence)) if r is not None]
            rows += known
            counts[i] = len(known)
        means = np.zeros((len(sentences), self.dim), dtype=np.float64)
        has_words = counts > 0
        if has_words.any():
            gathered = self.word_vectors.vectors[np.asarray(rows, dtype=np.int64)]
            starts = (np.cumsum(counts) - counts)[has_words]
            sums = np.add.reduceat(gathered, starts, axis=0, dtype=np.float64)
            means[has_words] = sums / counts[has_words, None]
        return means

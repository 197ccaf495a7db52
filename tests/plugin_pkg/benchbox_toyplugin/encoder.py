"""``tfidf``: TF-IDF (scikit-learn ``TfidfVectorizer``, sublinear tf) reduced by truncated SVD (latent
semantic analysis, Deerwester et al. 1990), fitted on the bundled ``data/corpus.txt``.

A duck-typed benchbox encoder: ``name``, ``dim``, ``encode(list[str]) -> float32 [n, dim]`` and
``fingerprint()``; no benchbox base class. Deterministic: ARPACK SVD with a fixed start vector
(``random_state=0``) and scikit-learn's sign convention (``svd_flip``).
"""

from __future__ import annotations

import hashlib
from importlib.resources import files

import numpy as np

CORPUS = files("benchbox_toyplugin.data") / "corpus.txt"


def read_lines(text: str) -> list[str]:
    """The sentences of a bundled text file: non-empty lines that are not ``#`` comments."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


class TfidfEncoder:
    """LSA sentence vectors: ``dim`` SVD components of the corpus's TF-IDF matrix (``dim`` < corpus size)."""

    name = "tfidf"
    description = "TF-IDF + truncated SVD (LSA) fitted on a 51-sentence bundled corpus (toy plugin example)."

    def __init__(self, dim: int | str = 32) -> None:
        # scikit-learn imported here, not at the top: `benchbox list encoders` imports this module for the
        # description and should stay as light as benchbox's own encoders (tests/core/test_startup.py)
        import sklearn
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        corpus_text = CORPUS.read_text(encoding="utf-8")
        corpus = read_lines(corpus_text)
        try:
            self.dim = int(dim)
        except ValueError:
            raise ValueError(f"tfidf: dim must be an integer, got {dim!r}") from None
        if not 1 <= self.dim < len(corpus):
            raise ValueError(f"tfidf: dim must be between 1 and {len(corpus) - 1} (the corpus has "
                             f"{len(corpus)} sentences), got {self.dim}")
        self._vectorizer = TfidfVectorizer(lowercase=True, sublinear_tf=True)
        matrix = self._vectorizer.fit_transform(corpus)
        self._svd = TruncatedSVD(n_components=self.dim, algorithm="arpack", random_state=0).fit(matrix)
        self._digest = hashlib.sha256(
            f"{corpus_text}\0dim={self.dim}\0sklearn={sklearn.__version__}".encode()).hexdigest()

    def encode(self, sentences: list[str]) -> np.ndarray:
        """[len(sentences), dim] float32 ((0, dim) for no sentences); a sentence with no corpus word is the zero
        vector."""
        if not sentences:
            return np.zeros((0, self.dim), np.float32)
        return self._svd.transform(self._vectorizer.transform(sentences)).astype(np.float32)

    def fingerprint(self) -> str:
        """Changes with the corpus, ``dim`` and the scikit-learn version (which could change the SVD)."""
        return self._digest

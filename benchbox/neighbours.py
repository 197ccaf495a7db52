"""Nearest neighbours of query sentences among a caption corpus, under one or more encoders side by side
(the qualitative comparison of Bordes et al. 2019, Table 3: abstract queries, neighbours from all captions
of the training set).

The corpus is the captions of a caption split (``flickr8k:train`` by default; ``DATASET[:SPLIT]``), each
distinct text once, in first-appearance order. Scores are cosines (zero vectors score 0); the top k are
ranked by cosine, ties broken by corpus order, so the listing is deterministic. Embeddings go through the
embedding cache, so a second look-up with the same encoder and corpus encodes only the queries. An encoder
whose corpus embeddings are all identical is refused (every cosine would be equal, ``cos 1.000`` for every
neighbour, and the listing meaningless).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from benchbox.data.captions import DATASETS, SPLITS, load_caption_dataset
from benchbox.data.root import DataRoot
from benchbox.embedding_checks import require_informative
from benchbox.errors import BenchboxError


def parse_corpus(spec: str) -> tuple[str, str]:
    """``flickr8k`` → (flickr8k, train); ``coco:test`` → (coco, test)."""
    dataset, _, split = spec.partition(":")
    split = split or "train"
    if dataset not in DATASETS or split not in SPLITS:
        raise BenchboxError(f"--corpus takes DATASET[:SPLIT] with DATASET in {', '.join(DATASETS)} and SPLIT in "
                            f"{', '.join(SPLITS)} (default train), not {spec!r}")
    return dataset, split


def load_corpus(data: DataRoot, spec: str) -> list[str]:
    """The distinct captions of the corpus ``spec``, in first-appearance order."""
    dataset, split = parse_corpus(spec)
    return list(dict.fromkeys(load_caption_dataset(data, dataset, split).captions))


def top_k(queries: np.ndarray, corpus: np.ndarray, k: int, block: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(indices [q, k], cosines [q, k]) of the k most similar corpus rows per query, best first, ties by index."""
    from benchbox.tasks.structure_measures import unit_rows

    q, c = unit_rows(queries), unit_rows(corpus)
    k = min(k, len(c))
    index = np.empty((len(q), k), dtype=np.int64)
    score = np.empty((len(q), k))
    for start in range(0, len(q), block):
        sims = q[start : start + block] @ c.T
        for row, s in enumerate(sims, start):
            candidates = np.flatnonzero(s >= np.partition(s, len(s) - k)[len(s) - k])
            order = candidates[np.lexsort((candidates, -s[candidates]))][:k]
            index[row], score[row] = order, s[order]
    return index, score


@dataclass(frozen=True)
class Neighbours:
    """Per query, per encoder label, the top-k (sentence, cosine, corpus index)."""

    corpus: str
    corpus_size: int
    k: int
    encoders: list[str]
    queries: list[str]
    #: [query][encoder] → list of (sentence, cosine, index)
    results: list[dict[str, list[tuple[str, float, int]]]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus, "corpus_size": self.corpus_size, "k": self.k, "encoders": self.encoders,
            "queries": [
                {"query": query, "neighbours": {
                    label: [{"rank": r + 1, "sentence": s, "cosine": round(float(c), 6), "index": i}
                            for r, (s, c, i) in enumerate(found)]
                    for label, found in per_encoder.items()}}
                for query, per_encoder in zip(self.queries, self.results)
            ],
        }


def neighbours(
    embedders: dict[str, Callable[[list[str]], np.ndarray]],
    queries: list[str],
    corpus: list[str],
    *,
    k: int = 5,
    corpus_name: str = "",
) -> Neighbours:
    """Top-k neighbours of every query under every encoder (``embedders``: label → embed(sentences))."""
    if k < 1:
        raise BenchboxError(f"-k must be at least 1, not {k}")
    if not queries:
        raise BenchboxError("no query: give --query TEXT or --query-file FILE")
    if not corpus:
        raise BenchboxError(f"the corpus {corpus_name} has no captions")
    results: list[dict[str, list[tuple[str, float, int]]]] = [{} for _ in queries]
    for label, embed in embedders.items():
        corpus_embeddings = embed(corpus)
        require_informative(corpus_embeddings, label, f"neighbours in {corpus_name or 'the corpus'}")
        index, score = top_k(embed(queries), corpus_embeddings, k)
        for row in range(len(queries)):
            results[row][label] = [(corpus[i], float(s), int(i)) for i, s in zip(index[row], score[row])]
    return Neighbours(corpus_name, len(corpus), min(k, len(corpus)), list(embedders), list(queries), results)

"""``trigram-projection``: character-trigram counts (hashed into 512 buckets) times a random projection drawn
from ``seed``, its seed option."""

from __future__ import annotations

import hashlib

import numpy as np


class TrigramProjection:
    name = "trigram-projection"
    seed_option = "seed"

    def __init__(self, dim: int = 24, seed: int = 0) -> None:
        self.dim, self.seed = int(dim), int(seed)
        self._projection = np.random.default_rng(self.seed).standard_normal((512, self.dim))

    def fingerprint(self) -> str:
        return f"trigram-projection-{self.dim}-{self.seed}"

    def encode(self, sentences: list[str]) -> np.ndarray:
        counts = np.zeros((len(sentences), 512))
        for row, sentence in enumerate(sentences):
            text = f"  {sentence.lower()} "
            for j in range(len(text) - 2):
                counts[row, int.from_bytes(hashlib.sha256(text[j:j + 3].encode()).digest()[:4], "little") % 512] += 1
        return (counts @ self._projection + 1e-3).astype(np.float32)

"""An encoder registered as ``glove-bow``, a built-in name: benchbox must refuse it for the plain name."""

from __future__ import annotations

import numpy as np


class Impostor:
    """Every sentence is the vector (len(sentence), 1, 2): recognisable in tests, and not GloVe."""

    name = "impostor"
    dim = 3
    description = "Not GloVe: a test plugin that tries to shadow the built-in glove-bow."

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.array([[len(s), 1.0, 2.0] for s in sentences], dtype=np.float32)

    def fingerprint(self) -> str:
        return "impostor-1"

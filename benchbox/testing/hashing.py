"""The encoder :func:`benchbox.testing.check_task` evaluates a task with when none is given: a hashed bag of words.

Each lower-cased word (``\\w+``) adds ±1 to one of :data:`DIM` coordinates, both chosen by the word's sha256 (the
signed hashing trick, Weinberger et al. 2009), so the encoder needs no data or weights, is deterministic and gives
sentences sharing words a high cosine: enough for any sentence task to produce varied scores and per-item rows. A
sentence without words is the zero vector. Its numbers mean nothing; it exists to exercise a task's code.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from benchbox.encoding.protocol import Encoder

#: the output width
DIM = 256
WORD = re.compile(r"\w+")


class HashingEncoder(Encoder):
    """A signed hashing bag of words (module docstring)."""

    name = "hashing-bow"
    description = "signed hashing bag of words (benchbox.testing's stand-in encoder; its scores mean nothing)"
    computed_by = ("numpy",)

    @property
    def dim(self) -> int:
        return DIM

    def config(self) -> dict[str, Any]:
        return {"dim": DIM, "hash": "sha256", "tokens": WORD.pattern, "lowercase": True}

    def weights_digest(self) -> str:
        return "no-weights"

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(sentences), DIM), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            for word in WORD.findall(sentence.lower()):
                digest = hashlib.sha256(word.encode("utf-8")).digest()
                out[row, int.from_bytes(digest[:4], "little") % DIM] += 1.0 if digest[4] & 1 else -1.0
        return out

"""The character vocabulary of the character-level caption encoders (Merkx & Frank 2019).

Every character seen in the training captions gets an index, case and punctuation included (no
lower-casing, no filtering). Index 0 is padding and index 1 stands for any character not seen in training,
so unseen characters at inference time are encoded as "unknown" instead of failing. An empty sentence is
encoded as a single unknown character (a recurrent network needs at least one step). The vocabulary is
stored in every checkpoint as its list of characters, so a trained model encodes text exactly as in training.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from benchbox.errors import BenchboxError
from benchbox.lazy import lazy_module

torch = lazy_module("torch")  # imported at first use: `benchbox list encoders` starts without it

PAD = 0
UNK = 1
RESERVED = 2


@dataclass(frozen=True)
class CharVocab:
    """Characters in index order; character ``chars[i]`` has index ``i + 2``."""

    chars: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bad = [c for c in self.chars if not isinstance(c, str) or len(c) != 1]
        if bad:
            raise BenchboxError(f"a character vocabulary holds single characters (str) only, found {bad[0]!r}")
        repeated = sorted({c for c in self.chars if self.chars.count(c) > 1})
        if repeated:
            raise BenchboxError(f"a character vocabulary lists each character once, {repeated[0]!r} is repeated")
        object.__setattr__(self, "_index", {c: i + RESERVED for i, c in enumerate(self.chars)})

    @classmethod
    def build(cls, texts: Iterable[str]) -> CharVocab:
        """The sorted set of characters in ``texts``."""
        seen: set[str] = set()
        for text in texts:
            seen.update(text)
        return cls(tuple(sorted(seen)))

    def __len__(self) -> int:
        """Number of embedding rows: the characters plus padding and unknown."""
        return len(self.chars) + RESERVED

    def ids(self, text: str) -> list[int]:
        """Indices of the characters of ``text``; unseen characters map to the unknown index."""
        if not text:
            return [UNK]
        index = self._index
        return [index.get(c, UNK) for c in text]

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """A padded ``[B, T]`` index tensor (pad = 0) and the ``[B]`` lengths (int64, on CPU)."""
        seqs = [self.ids(t) for t in texts]
        lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
        out = torch.zeros((len(seqs), int(lengths.max()) if seqs else 0), dtype=torch.int64)
        for row, seq in enumerate(seqs):
            out[row, : len(seq)] = torch.tensor(seq, dtype=torch.int64)
        return out, lengths

"""NLI training data for InferSent (Conneau et al. 2017): a SentEval-style NLI folder, SNLI or MultiNLI, with
``s1.<split>``, ``s2.<split>`` and ``labels.<split>`` (tokenised sentences and one label per line; line i of
each is pair i), as ``train_nli.py`` of facebookresearch/InferSent reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchbox.errors import BenchboxError
from benchbox.limits import check_lengths
from benchbox.tasks.senteval_data import SNLI_LABELS

#: label → id, as ``train_nli.py`` (and SentEval's SNLI task) number them
LABELS = {label: i for i, label in enumerate(SNLI_LABELS)}


@dataclass
class NLISplit:
    s1: list[str]
    s2: list[str]
    labels: np.ndarray


def _read_lines(path: Path) -> list[str]:
    try:
        return [line.rstrip("\n").rstrip() for line in path.open(encoding="utf-8")]
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path}: not UTF-8 text ({exc})") from None


def read_split(folder: Path, split: str, limit: int | None = None) -> NLISplit:
    """``s1.<split>``, ``s2.<split>``, ``labels.<split>`` of a SentEval-style NLI folder (first ``limit`` pairs)."""
    files = [folder / f"{name}.{split}" for name in ("s1", "s2", "labels")]
    for f in files:
        if not f.is_file():
            raise BenchboxError(
                f"{f} not found: --nli takes a SentEval-style NLI folder with s1.{split}, s2.{split}, labels.{split}"
            )
    s1, s2, raw = (_read_lines(f) for f in files)
    for f, lines in zip(files[1:], (s2, raw)):
        if len(lines) != len(s1):
            raise BenchboxError(f"{f}: s1.{split}, s2.{split}, labels.{split} have {len(s1)}, {len(s2)}, {len(raw)} "
                                "lines; line i of each is pair i")
    unknown = sorted({label for label in raw if label not in LABELS})
    if unknown:
        raise BenchboxError(f"{files[2]}: unknown labels {unknown[:5]} (expected {', '.join(LABELS)})")
    n = len(s1) if limit is None else min(limit, len(s1))
    if n == 0:
        raise BenchboxError(f"{files[0]}: the {split} split holds no sentence pairs")
    for f, sentences in zip(files, (s1[:n], s2[:n])):
        check_lengths(sentences, lambda i, f=f: f"{f}:{i + 1}")
    return NLISplit(s1[:n], s2[:n], np.array([LABELS[label] for label in raw[:n]], dtype=np.int64))

"""Readers for the sentence-pair relatedness files: STS Benchmark and SICK (docs/protocols.md#relatedness).

STS-B (``STS/STSBenchmark/sts-{train,dev,test}.csv``): tab-separated, score in column 5 (index 4), the
sentences in columns 6 and 7; some lines carry extra trailing columns, so lines are split on tabs with no
quote handling (as SentEval's ``STSBenchmarkEval.loadFile``). SICK (``SICK/SICK_{train,trial,test_annotated}.txt``):
a header line, then pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment; CRLF line ends
are accepted. Every malformed line raises a :class:`BenchboxError` naming file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from benchbox.data import DataRoot
from benchbox.errors import BenchboxError

STSB_FILES = {split: f"senteval/downstream/STS/STSBenchmark/sts-{split}.csv" for split in ("train", "dev", "test")}
SICK_FILES = {
    "train": "senteval/downstream/SICK/SICK_train.txt",
    "dev": "senteval/downstream/SICK/SICK_trial.txt",
    "test": "senteval/downstream/SICK/SICK_test_annotated.txt",
}


@dataclass(frozen=True)
class PairData:
    """Aligned sentence pairs with gold scores, read from ``path``."""

    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    path: Path

    def __len__(self) -> int:
        return len(self.scores)


def _score(text: str, path: Path, lineno: int, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BenchboxError(f"{path}:{lineno}: score {text!r} is not a number") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise BenchboxError(f"{path}:{lineno}: score {value} is outside [{low}, {high}]")
    return value


def _sentence(text: str, path: Path, lineno: int) -> str:
    if not text.strip():
        raise BenchboxError(f"{path}:{lineno}: empty sentence")
    return text


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path} is not UTF-8 text: {exc}") from None


def read_stsb(path: Path) -> PairData:
    s1, s2, scores = [], [], []
    for lineno, line in enumerate(_lines(path), 1):
        fields = line.split("\t")
        if len(fields) < 7:
            raise BenchboxError(f"{path}:{lineno}: expected at least 7 tab-separated columns, found {len(fields)}")
        scores.append(_score(fields[4], path, lineno, 0.0, 5.0))
        s1.append(_sentence(fields[5], path, lineno))
        s2.append(_sentence(fields[6], path, lineno))
    if not scores:
        raise BenchboxError(f"{path} holds no sentence pairs")
    return PairData(s1, s2, scores, path)


def read_sick(path: Path) -> PairData:
    lines = _lines(path)
    if not lines or not lines[0].startswith("pair_ID"):
        raise BenchboxError(f"{path}: expected a SICK header line starting with 'pair_ID'")
    s1, s2, scores = [], [], []
    for lineno, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != 5:
            raise BenchboxError(f"{path}:{lineno}: expected 5 tab-separated columns, found {len(fields)}")
        s1.append(_sentence(fields[1], path, lineno))
        s2.append(_sentence(fields[2], path, lineno))
        scores.append(_score(fields[3], path, lineno, 1.0, 5.0))
    if not scores:
        raise BenchboxError(f"{path} holds no sentence pairs")
    return PairData(s1, s2, scores, path)


def load_stsb(data: DataRoot, split: str) -> PairData:
    """STS-B ``split`` ("train", "dev" or "test") from the data root or the embedded default."""
    return read_stsb(data.path(STSB_FILES[split]))


def load_sick(data: DataRoot, split: str) -> PairData:
    """SICK ``split`` ("train", "dev" = SICK_trial, "test") from the data root or the embedded default."""
    return read_sick(data.path(SICK_FILES[split]))

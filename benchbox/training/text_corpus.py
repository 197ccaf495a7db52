"""The ordered text corpus of Bordes et al. (2019)'s textual objective L_T (``--text-corpus FILE``) and its
batches (docs/protocols.md#textual-objective).

File format: UTF-8 (a byte-order mark is allowed), one sentence per line, a blank (or whitespace-only) line
between documents; surrounding whitespace of a line is dropped. Every document needs at least two sentences (a
sentence without a neighbour has nothing to predict), and the corpus at least one batch of sentences. A bad file
is one line naming it.

Batches (QuickThought, Logeswaran & Lee 2018: minibatches of *consecutive* sentences, each sentence's
neighbours are among the others of its batch): the corpus, documents concatenated in file order, is cut into
contiguous chunks of ``B`` sentences from a random offset, and the chunks are visited in a random order; when all
are visited a new pass starts with a new offset and order. A pass has ``(n − B + 1) // B`` chunks (at least one),
so that any offset below ``B`` leaves room for them all. Text batch ``t`` (the ``t``-th optimiser
step of the run) is a pure function of (seed, t) (:func:`text_batch`), so a resumed run replays it exactly
and nothing about the text stream is kept in the checkpoint. Two sentences of a batch are neighbours when they
are adjacent in the corpus and in the same document (:func:`neighbour_mask`); the offset moves the chunk
borders from pass to pass, so no adjacent pair is always split by a border (when ``n ≥ 2B − 1``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchbox.errors import BenchboxError

#: a third seed word, so the text stream's generator never equals the visual epoch plan's ([seed, epoch])
TEXT_STREAM = 1


@dataclass(frozen=True)
class TextCorpus:
    """Sentences in corpus order and the document of each, with the file's provenance."""

    path: str
    sha256: str
    sentences: list[str]
    #: document index of every sentence, [n] (non-decreasing)
    documents: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(s) for s in self.sentences], dtype=np.int64)

    def record(self) -> dict[str, object]:
        """The manifest's description of the corpus."""
        return {"path": self.path, "sha256": self.sha256, "documents": int(self.documents[-1]) + 1,
                "sentences": len(self.sentences)}


def load_text_corpus(path: str | os.PathLike, *, batch_size: int) -> TextCorpus:
    """Read and check ``--text-corpus`` (the module docstring): one clear line for each way it can be unusable."""
    path = Path(path)
    if not path.is_file():
        raise BenchboxError(f"--text-corpus {path} does not exist (one sentence per line, a blank line between "
                            "documents)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark is not part of the first sentence
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"--text-corpus {path} is not UTF-8 text (an invalid byte at offset {exc.start}); "
                            "convert it to UTF-8") from None
    docs: list[list[str]] = [[]]
    first_lines = [0]  # the line number of every document's first sentence
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            if docs[-1]:
                docs.append([])
                first_lines.append(0)
            continue
        if not docs[-1]:
            first_lines[-1] = number
        docs[-1].append(line)
    if not docs[-1]:
        docs.pop()
    if not docs:
        raise BenchboxError(f"--text-corpus {path} holds no sentences (one sentence per line, a blank line between "
                            "documents)")
    for doc, first_line in zip(docs, first_lines):
        if len(doc) < 2:
            raise BenchboxError(f"--text-corpus {path}: the document at line {first_line} has one sentence; every "
                                "document needs at least two (a sentence's neighbours are what the textual "
                                "objective predicts)")
    sentences = [s for doc in docs for s in doc]
    documents = np.repeat(np.arange(len(docs)), [len(doc) for doc in docs])
    if len(sentences) < batch_size:
        raise BenchboxError(f"--text-corpus {path} has {len(sentences)} sentences, fewer than one batch "
                            f"(--batch-size {batch_size})")
    return TextCorpus(str(path), hashlib.sha256(raw).hexdigest(), sentences, documents.astype(np.int64))


def chunks_per_pass(n_sentences: int, batch_size: int) -> int:
    """Chunks of a pass: as many as fit after any offset below ``batch_size`` (at least one)."""
    return max(1, (n_sentences - batch_size + 1) // batch_size)


def text_batch(n_sentences: int, *, batch_size: int, seed: int, step: int) -> np.ndarray:
    """Corpus rows of text batch ``step`` (0-based): ``batch_size`` consecutive sentences (the module docstring)."""
    chunks = chunks_per_pass(n_sentences, batch_size)
    rng = np.random.default_rng([seed, step // chunks, TEXT_STREAM])
    offset = int(rng.integers(0, n_sentences - chunks * batch_size + 1))
    start = offset + int(rng.permutation(chunks)[step % chunks]) * batch_size
    return np.arange(start, start + batch_size)


def neighbour_mask(rows: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """[B, B] bool: ``rows[i]`` and ``rows[j]`` are adjacent sentences of one document (``documents``: all rows')."""
    rows = np.asarray(rows)
    adjacent = np.abs(rows[:, None] - rows[None, :]) == 1
    return adjacent & (documents[rows][:, None] == documents[rows][None, :])

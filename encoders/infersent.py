"""``infersent``: the BiLSTM-max sentence encoder of Conneau et al. (2017), trained on NLI.

Loads the official ``infersent1.pkl`` (version 1, GloVe 840B 300-d vectors, ``<s> … </s>``) or
``infersent2.pkl`` (version 2, fastText crawl-300d-2M vectors, ``<p> … </p>``) from user-supplied paths,
or a model trained with ``benchbox train infersent`` (:meth:`InferSentEncoder.from_path`)::

    benchbox eval infersent -e weights=infersent1.pkl -e vectors=glove.840B.300d.txt --task semantic
    load_encoder("infersent", weights="infersent2.pkl", vectors="crawl-300d-2M.vec")

Options (typed by this signature, :mod:`benchbox.encoding.options`): ``version`` 1 or 2 (default: from a file named
``infersent1.pkl``/``infersent2.pkl``, else 1); ``tokenize`` ``split`` (default) / ``nltk`` / ``nltk-line``
(:mod:`benchbox.encoders.infersent_text`); ``padding`` ``v1`` / ``masked`` (default: ``v1`` for version 1,
``masked`` for version 2, as the official code; :mod:`benchbox.encoders.infersent_net`); ``bsize``, the
official ``encode`` batch size (default 64); ``lowercase`` (default: only for an uncased vocabulary such as
the packaged GloVe 6B, never for GloVe 840B or fastText). Sentences are sorted by decreasing length and batched by
``bsize`` exactly as the official ``encode`` does, so with ``padding=v1`` a sentence's embedding depends
on the other sentences of the same ``encode`` call, as it does officially (only a sentence as long as the
longest of its batch escapes the clamp at 0); ``padding=masked`` does not. The embedding cache stores one
vector per sentence, so with ``v1`` a sentence encoded in an earlier call keeps that call's vector.
Word vectors come from :func:`benchbox.data.wordvec.load_word_vectors` (a text file is converted once into the
word-vector cache); with duplicate words the first occurrence is used (the official reader keeps the last).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchbox.encoding.protocol import Encoder, digest_arrays
from benchbox.encoders.infersent_text import MARKERS, make_tokenizer, sentence_rows
from benchbox.errors import BenchboxError
from benchbox.data.wordvec import WordVectors, load_word_vectors
from benchbox.lazy import lazy_module

if TYPE_CHECKING:
    from benchbox.encoders.infersent_net import BiLSTMMax

torch = lazy_module("torch")  # imported at first use: `benchbox list encoders` starts without it

#: the state dict file of a ``benchbox train infersent`` run (official key names)
WEIGHTS_FILE = "encoder.pkl"
_VECTORS_HINT = {1: "GloVe 840B (glove.840B.300d.txt)", 2: "fastText crawl-300d-2M.vec"}


def _parse_version(value: int | str | None, weights: Path) -> int:
    if value is None:
        match = re.fullmatch(r"infersent([12])\.pkl", weights.name)
        return int(match.group(1)) if match else 1
    if str(value) not in {"1", "2"}:
        raise BenchboxError(f"InferSent version must be 1 or 2, got {value!r}")
    return int(value)


class InferSentEncoder(Encoder):
    """BiLSTM-max InferSent (4096-d with the released weights)."""

    name = "infersent"
    computed_by = ("numpy", "torch", "nltk")  # nltk: tokenize=nltk
    description = (
        "InferSent BiLSTM-max trained on SNLI+MultiNLI (Conneau et al. 2017); needs weights=infersent1/2.pkl "
        "and vectors=GloVe 840B / fastText crawl. SNLI premises are Flickr30k captions: caption-domain overlap."
    )

    def __init__(
        self,
        weights: str | os.PathLike | None = None,
        vectors: str | os.PathLike | None = None,
        version: int | None = None,
        tokenize: str = "split",
        padding: str | None = None,
        bsize: int = 64,
        vocab: str | os.PathLike | None = None,
        lowercase: bool | None = None,
        device: str = "auto",
    ) -> None:
        if not weights:
            raise BenchboxError(
                "infersent needs the official weights and word vectors: download infersent1.pkl (with GloVe "
                "840B) or infersent2.pkl (with fastText crawl-300d-2M) from facebookresearch/InferSent and pass "
                "--encoder-opt weights=PATH --encoder-opt vectors=PATH; or give a `benchbox train infersent` run folder"
            )
        from benchbox.encoders.infersent_net import PADDING_MODES, build_encoder, load_state_file

        weights_path = Path(weights).expanduser()
        self.version = _parse_version(version, weights_path)
        state = load_state_file(weights_path)
        if vectors is None:
            raise BenchboxError(
                f"infersent version {self.version} needs its word vectors: pass vectors=PATH "
                f"({_VECTORS_HINT[self.version]}; --encoder-opt vectors=PATH)"
            )
        padding = padding or ("v1" if self.version == 1 else "masked")
        if padding not in PADDING_MODES:
            raise BenchboxError(f"padding must be one of {', '.join(PADDING_MODES)}, got {padding!r}")
        self.net: BiLSTMMax = build_encoder(state, str(weights_path), padding)
        self.tokenize = tokenize
        self._tokenizer = make_tokenizer(tokenize, self.version)
        if not str(bsize).isdigit() or int(bsize) < 1:
            raise BenchboxError(f"bsize must be a positive integer, got {bsize!r}")
        self.bsize = int(bsize)
        self.word_vectors: WordVectors = load_word_vectors(vectors, vocab=vocab)
        self.vocab = str(vocab) if vocab else None
        self.lowercase = self.word_vectors.lowercase_vocab if lowercase is None else lowercase
        if self.word_vectors.dim != self.net.word_dim:
            raise BenchboxError(
                f"the word vectors {self.word_vectors.source} are {self.word_vectors.dim}-d but the InferSent weights "
                f"expect {self.net.word_dim}-d inputs (version {self.version}: {_VECTORS_HINT[self.version]})"
            )
        self.weights_source = str(weights_path)
        self.device = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                                   ("cpu" if device == "auto" else device))
        self.net.to(self.device)
        self._digest: str | None = None

    @classmethod
    def from_path(cls, path: str | os.PathLike, **kwargs: Any) -> InferSentEncoder:
        """Load a ``benchbox train infersent`` run folder; keyword arguments override its recorded options
        (e.g. ``vectors=`` when the word-vector file has moved)."""
        from benchbox.storage.runs import Run

        path = Path(path)
        record = Run.open(path).record
        if record.kind != "train" or record.encoder.name != cls.name:
            raise BenchboxError(f"{path} is not an infersent training run")
        if not (path / WEIGHTS_FILE).is_file():
            raise BenchboxError(f"training run {path} has no {WEIGHTS_FILE} yet (written after the first epoch)")
        config = record.encoder.config
        options = {k: config[k] for k in ("version", "tokenize", "padding", "bsize", "lowercase", "vocab") if k in config}
        options["vectors"] = config.get("vectors")
        options.update(kwargs)
        return cls(weights=path / WEIGHTS_FILE, **options)

    @property
    def dim(self) -> int:
        return self.net.dim

    def config(self) -> dict[str, Any]:
        bos, eos = MARKERS[self.version]
        return {
            "version": self.version, "markers": [bos, eos], "tokenize": self.tokenize,
            "padding": self.net.padding, "bsize": self.bsize, "word_dim": self.net.word_dim,
            "hidden": self.net.hidden, "vectors": self.word_vectors.source, "vocab": self.vocab,
            "lowercase": self.lowercase, "weights": self.weights_source,
        }

    def weights_digest(self) -> str:
        if self._digest is None:
            lstm = digest_arrays(self.net.state_dict())
            self._digest = hashlib.sha256(f"{lstm}|{self.word_vectors.digest}".encode()).hexdigest()
        return self._digest

    def rows(self, sentences: list[str]) -> list[list[int]]:
        """Word-vector rows of each sentence (markers added, unknown words dropped)."""
        index = self.word_vectors.index
        if self.lowercase:
            sentences = [s.lower() for s in sentences]
        return [sentence_rows(self._tokenizer(s), index, self.version) for s in sentences]

    def vectors_of(self, rows: list[int]) -> np.ndarray:
        """[len(rows), word_dim] float32 (row -1: a zero vector)."""
        table = self.word_vectors.vectors
        if rows == [-1]:
            return np.zeros((1, self.net.word_dim), dtype=np.float32)
        return np.asarray(table[np.asarray(rows)], dtype=np.float32)

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        """The official ``encode``: sort by decreasing length, batches of ``bsize``, unsort (``batch_size``
        is not used: with ``padding=v1`` the batches are part of the function)."""
        from benchbox.encoders.infersent_net import embed_batch

        rows = self.rows(sentences)
        lengths = np.array([len(r) for r in rows])
        order = np.argsort(-lengths)
        out = np.empty((len(sentences), self.dim), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, len(order), self.bsize):
                idx = order[start : start + self.bsize]
                words, lens = embed_batch([self.vectors_of(rows[i]) for i in idx])
                out[idx] = self.net(words.to(self.device), lens).cpu().numpy()
        return out

"""Readers for SentEval's data (``senteval/downstream/...``; docs/protocols.md#relatedness and
docs/protocols.md#transfer), parsing as SentEval's ``sts.py``, ``sick.py``, ``binary.py``, ``trec.py``,
``mrpc.py`` and ``sst.py`` do, and SentEval's row order.

Scored sentence pairs (relatedness):
- STS-B (``STS/STSBenchmark/sts-{train,dev,test}.csv``): tab-separated, score in column 5 (index 4), the
  sentences in columns 6 and 7; some lines carry extra trailing columns, so lines are split on tabs with no
  quote handling (as SentEval's ``STSBenchmarkEval.loadFile``).
- SICK (``SICK/SICK_{train,trial,test_annotated}.txt``): a header line, then pair_ID, sentence_A, sentence_B,
  relatedness_score, entailment_judgment; CRLF line ends are accepted.
- A pair ID (SICK's pair_ID; STS-B's genre, file, year and sentence-pair id) on two lines is an error naming
  both: the repeated pair would be scored twice.

Labelled pairs (entailment):
- SICK-E: SICK's files as above, label = entailment_judgment, ids as SentEval's ``SICKEntailmentEval``
  (CONTRADICTION 0, NEUTRAL 1, ENTAILMENT 2).
- SNLI (``senteval/downstream/SNLI`` or a folder the user names): ``s1.<split>``, ``s2.<split>``,
  ``labels.<split>`` for train, dev and test, line i of each is pair i (the layout InferSent training reads,
  :mod:`benchbox.training.nli_data`); label ids as SentEval's ``SNLIEval`` (entailment 0, neutral 1,
  contradiction 2); sentences read as latin-1, as SentEval's ``SNLIEval.loadFile``.

Labelled sentences and pairs (classification transfer):
- MR, CR, SUBJ, MPQA: one sentence per line (latin-1), ``pos`` lines labelled 1 then ``neg`` lines 0 (SUBJ:
  ``subj.objective`` is the 1 class, ``subj.subjective`` the 0 class, as SentEval passes them).
- TREC: ``COARSE:fine question`` (latin-1); the 6 coarse classes ABBR, DESC, ENTY, HUM, LOC, NUM → 0..5.
- MRPC: tab-separated with a header line; label in column 1, the sentences in columns 4 and 5 (utf-8).
- SST-2 (``SST/binary/sentiment-{train,dev,test}``): ``sentence<TAB>label`` (utf-8).
  Transfer sentences are SentEval's whitespace tokens joined by single spaces.

SentEval sorts each split (by token count, then label or score) before encoding and runs its k-fold splitters
and training permutations on that order, so :func:`senteval_order` gives it (Python's stable sort, as
SentEval's). Malformed lines raise a :class:`BenchboxError` naming file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError

ROOT = "senteval/downstream"
STSB_FILES = {split: f"{ROOT}/STS/STSBenchmark/sts-{split}.csv" for split in ("train", "dev", "test")}
SICK_FILES = {
    "train": f"{ROOT}/SICK/SICK_train.txt",
    "dev": f"{ROOT}/SICK/SICK_trial.txt",
    "test": f"{ROOT}/SICK/SICK_test_annotated.txt",
}
BINARY_FILES = {
    "mr": (f"{ROOT}/MR/rt-polarity.pos", f"{ROOT}/MR/rt-polarity.neg"),
    "cr": (f"{ROOT}/CR/custrev.pos", f"{ROOT}/CR/custrev.neg"),
    "subj": (f"{ROOT}/SUBJ/subj.objective", f"{ROOT}/SUBJ/subj.subjective"),
    "mpqa": (f"{ROOT}/MPQA/mpqa.pos", f"{ROOT}/MPQA/mpqa.neg"),
}
TREC_FILES = {"train": f"{ROOT}/TREC/train_5500.label", "test": f"{ROOT}/TREC/TREC_10.label"}
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
MRPC_FILES = {"train": f"{ROOT}/MRPC/msr_paraphrase_train.txt", "test": f"{ROOT}/MRPC/msr_paraphrase_test.txt"}
SST2_FILES = {split: f"{ROOT}/SST/binary/sentiment-{split}" for split in ("train", "dev", "test")}
#: SentEval's SICK-E label ids (``senteval/sick.py`` SICKEntailmentEval.loadFile)
SICK_LABELS = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
#: SNLI's folder in the data root (SentEval's ``data/downstream/SNLI``), its files per split, and SentEval's
#: label ids (``senteval/snli.py`` ``dico_label``; InferSent's ``train_nli.py`` uses the same)
SNLI_FOLDER = f"{ROOT}/SNLI"
SNLI_PARTS = ("s1", "s2", "labels")
SNLI_LABELS = ("entailment", "neutral", "contradiction")
SENTEVAL_BIBTEX = """@inproceedings{conneau2018senteval,
  title = {{SentEval}: An Evaluation Toolkit for Universal Sentence Representations},
  author = {Conneau, Alexis and Kiela, Douwe},
  booktitle = {Proceedings of LREC 2018}, year = {2018}
}"""


@dataclass(frozen=True)
class PairData:
    """Aligned sentence pairs with gold scores, read from ``path``."""

    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    path: Path
    #: SICK's entailment_judgment per pair (empty for STS-B)
    judgments: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class Sentences:
    """Labelled sentences (file order) and the files they came from."""

    sentences: list[str]
    labels: np.ndarray
    paths: list[Path]


@dataclass(frozen=True)
class Pairs:
    """Labelled sentence pairs (file order) and the file they came from."""

    sentences1: list[str]
    sentences2: list[str]
    labels: np.ndarray
    path: Path


def text_lines(path: Path, encoding: str = "UTF-8") -> list[str]:
    """The lines of a text file; a file that is not ``encoding`` text is an error naming it."""
    try:
        return path.read_text(encoding=encoding).splitlines()
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path} is not {encoding} text: {exc}") from None


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


def _once(seen: dict[str, int], pair_id: str, path: Path, lineno: int) -> None:
    """Record that ``pair_id`` is on line ``lineno``; an ID seen before is an error naming both lines (the pair
    would be scored twice, and n would count it twice)."""
    if pair_id in seen:
        raise BenchboxError(f"{path}:{lineno}: pair {pair_id} repeats line {seen[pair_id]}, so it would be scored "
                            "twice: delete the repeated line")
    seen[pair_id] = lineno


def read_stsb(path: Path) -> PairData:
    s1, s2, scores, seen = [], [], [], {}
    for lineno, line in enumerate(text_lines(path), 1):
        fields = line.split("\t")
        if len(fields) < 7:
            raise BenchboxError(f"{path}:{lineno}: expected at least 7 tab-separated columns, found {len(fields)}")
        _once(seen, " ".join(fields[:4]), path, lineno)
        scores.append(_score(fields[4], path, lineno, 0.0, 5.0))
        s1.append(_sentence(fields[5], path, lineno))
        s2.append(_sentence(fields[6], path, lineno))
    if not scores:
        raise BenchboxError(f"{path} holds no sentence pairs")
    return PairData(s1, s2, scores, path)


def read_sick(path: Path) -> PairData:
    lines = text_lines(path)
    if not lines or not lines[0].startswith("pair_ID"):
        raise BenchboxError(f"{path}: expected a SICK header line starting with 'pair_ID'")
    s1, s2, scores, judgments, seen = [], [], [], [], {}
    for lineno, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != 5:
            raise BenchboxError(f"{path}:{lineno}: expected 5 tab-separated columns, found {len(fields)}")
        _once(seen, fields[0], path, lineno)
        s1.append(_sentence(fields[1], path, lineno))
        s2.append(_sentence(fields[2], path, lineno))
        scores.append(_score(fields[3], path, lineno, 1.0, 5.0))
        judgments.append(fields[4].strip())
    if not scores:
        raise BenchboxError(f"{path} holds no sentence pairs")
    return PairData(s1, s2, scores, path, tuple(judgments))


def load_stsb(data: DataRoot, split: str) -> PairData:
    """STS-B ``split`` ("train", "dev" or "test") from the data root or the embedded default."""
    return read_stsb(data.path(STSB_FILES[split]))


def load_sick(data: DataRoot, split: str) -> PairData:
    """SICK ``split`` ("train", "dev" = SICK_trial, "test") from the data root or the embedded default."""
    return read_sick(data.path(SICK_FILES[split]))


def load_sick_entailment(data: DataRoot, split: str) -> Pairs:
    """SICK ``split`` with SentEval's SICK-E label ids (:data:`SICK_LABELS`); sentences as whitespace tokens."""
    pairs = load_sick(data, split)
    for lineno, judgment in enumerate(pairs.judgments, 2):
        if judgment not in SICK_LABELS:
            raise BenchboxError(f"{pairs.path}:{lineno}: entailment_judgment {judgment!r} is not one of "
                                f"{', '.join(SICK_LABELS)}")
    labels = np.array([SICK_LABELS.index(j) for j in pairs.judgments], dtype=np.int64)
    return Pairs([_tokens(s) for s in pairs.sentences1], [_tokens(s) for s in pairs.sentences2], labels, pairs.path)


def snli_paths(folder: Path, split: str) -> list[Path]:
    """``s1.<split>``, ``s2.<split>``, ``labels.<split>`` of an SNLI folder."""
    return [folder / f"{part}.{split}" for part in SNLI_PARTS]


def read_snli(folder: Path, split: str) -> Pairs:
    """SNLI ``split`` of ``folder`` as SentEval reads it: sentences latin-1, whitespace tokens; ``Pairs.path``
    is the labels file."""
    s1_path, s2_path, labels_path = snli_paths(folder, split)
    s1, s2 = ([_tokens(line) for line in text_lines(p, "latin-1")] for p in (s1_path, s2_path))
    raw = text_lines(labels_path)
    if not len(s1) == len(s2) == len(raw):
        raise BenchboxError(f"{folder}: s1.{split}, s2.{split}, labels.{split} have {len(s1)}, {len(s2)}, "
                            f"{len(raw)} lines; line i of each is pair i")
    for lineno, label in enumerate(raw, 1):
        if label not in SNLI_LABELS:
            raise BenchboxError(f"{labels_path}:{lineno}: label {label!r} is not one of {', '.join(SNLI_LABELS)}")
    _require_rows(labels_path, raw, "sentence pairs")
    return Pairs(s1, s2, np.array([SNLI_LABELS.index(label) for label in raw], dtype=np.int64), labels_path)


def _require_rows(path: Path, labels: list, what: str = "labelled sentences") -> None:
    """An empty split is an error before any embedding or fitting (an empty test split once gave accuracy NaN
    with exit 0)."""
    if not labels:
        raise BenchboxError(f"{path} holds no {what}: restore the file (`benchbox data verify`)")


def _tokens(text: str) -> str:
    return " ".join(text.split())


def load_binary(data: DataRoot, task: str) -> Sentences:
    """MR, CR, SUBJ or MPQA: the class-1 file's lines, then the class-0 file's."""
    pos, neg = (data.path(p) for p in BINARY_FILES[task])
    lines = {path: text_lines(path, "latin-1") for path in (pos, neg)}
    for path, found in lines.items():
        if not any(line.strip() for line in found):
            raise BenchboxError(f"{path} holds no sentences: {task} needs sentences of both classes")
    sentences = [_tokens(line) for path in (pos, neg) for line in lines[path]]
    n_pos = len(lines[pos])
    labels = np.r_[np.ones(n_pos, dtype=np.int64), np.zeros(len(sentences) - n_pos, dtype=np.int64)]
    return Sentences(sentences, labels, [pos, neg])


def load_trec(data: DataRoot, split: str) -> Sentences:
    """TREC ``train`` (5452 questions) or ``test`` (500), coarse labels."""
    path = data.path(TREC_FILES[split])
    sentences, labels = [], []
    for lineno, line in enumerate(text_lines(path, "latin-1"), 1):
        target, _, rest = line.strip().partition(":")
        parts = rest.split(" ", 1)
        if target not in TREC_CLASSES or len(parts) != 2:
            raise BenchboxError(f"{path}:{lineno}: expected 'COARSE:fine question' with COARSE in "
                                f"{', '.join(TREC_CLASSES)}")
        sentences.append(_tokens(parts[1]))
        labels.append(TREC_CLASSES.index(target))
    _require_rows(path, labels)
    return Sentences(sentences, np.asarray(labels, dtype=np.int64), [path])


def load_mrpc(data: DataRoot, split: str) -> Pairs:
    """MRPC ``train`` (4076 pairs) or ``test`` (1725); label 1 = paraphrase."""
    path = data.path(MRPC_FILES[split])
    s1, s2, labels = [], [], []
    for lineno, line in enumerate(text_lines(path)[1:], 2):
        fields = line.strip().split("\t")
        if len(fields) < 5 or fields[0] not in ("0", "1"):
            raise BenchboxError(f"{path}:{lineno}: expected label (0/1), two ids and two sentences, tab-separated")
        labels.append(int(fields[0]))
        s1.append(_tokens(fields[3]))
        s2.append(_tokens(fields[4]))
    _require_rows(path, labels, "sentence pairs")
    return Pairs(s1, s2, np.asarray(labels, dtype=np.int64), path)


def load_sst2(data: DataRoot, split: str) -> Sentences:
    """SST-2 ``train`` (67349 phrases), ``dev`` (872) or ``test`` (1821) sentences."""
    path = data.path(SST2_FILES[split])
    sentences, labels = [], []
    for lineno, line in enumerate(text_lines(path), 1):
        fields = line.strip().split("\t")
        if len(fields) != 2 or fields[1] not in ("0", "1"):
            raise BenchboxError(f"{path}:{lineno}: expected 'sentence<TAB>0|1'")
        sentences.append(_tokens(fields[0]))
        labels.append(int(fields[1]))
    _require_rows(path, labels)
    return Sentences(sentences, np.asarray(labels, dtype=np.int64), [path])


def senteval_order(*keys: list) -> np.ndarray:
    """Indices sorting the rows by the given per-row keys in turn (e.g. token count, then label); stable."""
    rows = list(zip(*keys))
    return np.array(sorted(range(len(rows)), key=rows.__getitem__), dtype=np.int64)


def token_counts(sentences: list[str]) -> list[int]:
    return [len(s.split()) for s in sentences]

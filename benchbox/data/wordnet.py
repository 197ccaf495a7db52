"""WordNet 3.0's noun hierarchy and Vendrov et al.'s (2016, §4.1) hypernym-prediction split, read from the
WordNet database files (``data.noun``, ``index.noun``; Debian's ``wordnet-base`` package installs them in
``/usr/share/wordnet``, :data:`DEFAULT_WORDNET`).

- Concepts: every noun synset of ``data.noun``, in file order (NLTK's ``wn.all_synsets('n')`` order), named as
  NLTK names them: ``<first lemma, lower case>.n.<sense number of the synset in index.noun for that lemma>``
  (``dog.n.01``). Database format: wndb(5WN) — ``offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt
  ptr ...``, each pointer ``symbol offset pos source/target``.
- Edges: (hyponym, hypernym) for every ``@`` (hypernym) and ``@i`` (instance hypernym) pointer of a noun synset
  — the authors' ``preprocessWordnet.py`` (ivendrov/order-embeddings-wordnet) takes ``hypernyms() +
  instance_hypernyms()``: 84,427 edges over 82,115 synsets.
- The closure (:func:`closure_paths`): the authors' ``Graph.transitiveClosure`` (a depth-first walk from
  every synset) lists the pair (u, a) once per *path* from u up to its ancestor a, so pairs reachable by
  several paths repeat: 837,888 entries over 743,241 distinct pairs in WordNet 3.0 (the paper reports
  838,073 over 82,192 concepts, from the NLTK WordNet of 2015; Athiwaratkun & Wilson 2018 rerun the same code
  on NLTK 3.2.1 and get 837,888, as here).
- The split (:func:`split_closure`): the closure's entries shuffled, the first ``held_out`` are test, the next
  ``held_out`` dev, the rest train (the authors' ``createDatasets.lua``, 4000 each). A repeated pair can fall
  in test and in train, as in the authors' split.
- Negatives (:func:`corrupt`): one per positive, "following Socher" — one member of the pair, chosen with
  probability ½, replaced by a concept drawn uniformly from all concepts. As in the authors' ``Dataset.lua``
  nothing stops a corrupted pair from being a true hypernym pair (a synset replacing the hyponym of
  (x, entity.n.01) always makes one): such negatives stay labelled negative.
- The transitive-closure baseline (:func:`closure_baseline`): a pair is positive iff it lies in the transitive
  closure of the known (training and dev) edges (the paper's Table 1 baseline, no learning).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchbox.errors import BenchboxError

#: where Debian's ``wordnet-base`` installs the database files
DEFAULT_WORDNET = Path("/usr/share/wordnet")
#: the authors' dev and test size (``createDatasets.lua``: ``splitSize = 4000``)
HELD_OUT = 4000
#: the pointer symbols followed: hypernym and instance hypernym
HYPERNYM_POINTERS = ("@", "@i")
INSTALL_HINT = "install Debian's wordnet-base (apt-get install wordnet-base) or name the folder that holds it"


@dataclass(frozen=True)
class Nouns:
    """WordNet's noun synsets (file order) and their direct hypernym edges (hyponym row, hypernym row)."""

    names: list[str]
    offsets: np.ndarray
    edges: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class HypernymSplit:
    """Positive pairs (hyponym, hypernym) of train, dev and test, and the fixed dev and test negatives."""

    train: np.ndarray
    dev: np.ndarray
    test: np.ndarray
    dev_negatives: np.ndarray
    test_negatives: np.ndarray

    def digest(self) -> str:
        """sha256 (first 16 hex digits) of the held-out pairs and negatives: two splits are the same if equal."""
        h = hashlib.sha256()
        for part in (self.dev, self.test, self.dev_negatives, self.test_negatives):
            h.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
        return h.hexdigest()[:16]


def wordnet_files(folder: str | Path) -> tuple[Path, Path]:
    """``data.noun`` and ``index.noun`` of ``folder``, or one line saying what is missing."""
    folder = Path(folder).expanduser()
    paths = (folder / "data.noun", folder / "index.noun")
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise BenchboxError(f"WordNet 3.0 database not found: {folder} has no {' or '.join(missing)}; "
                            f"{INSTALL_HINT}")
    return paths


def read_nouns(folder: str | Path = DEFAULT_WORDNET) -> Nouns:
    """The noun synsets of the WordNet database in ``folder`` and their hypernym edges (module docstring)."""
    data_path, index_path = wordnet_files(folder)
    offsets, lemmas, pointers = [], [], []
    with open(data_path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.startswith("  "):  # the licence header
                continue
            fields = line.split(" ")
            try:
                words = int(fields[3], 16)
                at = 4 + 2 * words
                count = int(fields[at])
                ptrs = [fields[at + 1 + 4 * k: at + 5 + 4 * k] for k in range(count)]
                offsets.append(int(fields[0]))
                lemmas.append(fields[4].lower())
            except (IndexError, ValueError) as exc:
                raise BenchboxError(f"{data_path}:{number}: not a WordNet data line ({exc})") from exc
            pointers.append([int(p[1]) for p in ptrs if p[0] in HYPERNYM_POINTERS and p[2] == "n"])
    if not offsets:
        raise BenchboxError(f"{data_path} holds no synsets: {INSTALL_HINT}")
    row = {offset: i for i, offset in enumerate(offsets)}
    edges = []
    for i, targets in enumerate(pointers):
        for target in targets:
            if target not in row:
                raise BenchboxError(f"{data_path}: synset {offsets[i]:08d} points to {target:08d}, which is not in "
                                    "the file")
            edges.append((i, row[target]))
    names = _names(index_path, offsets, lemmas)
    return Nouns(names, np.asarray(offsets, dtype=np.int64), np.asarray(edges, dtype=np.int64).reshape(-1, 2))


def _names(index_path: Path, offsets: list[int], lemmas: list[str]) -> list[str]:
    """NLTK's synset names: the first lemma and the synset's 1-based position among that lemma's senses."""
    senses: dict[str, list[int]] = {}
    with open(index_path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("  "):
                continue
            fields = line.split()
            synsets = int(fields[2])
            senses[fields[0]] = [int(o) for o in fields[len(fields) - synsets:]]
    names = []
    for offset, lemma in zip(offsets, lemmas):
        listed = senses.get(lemma, [])
        if offset not in listed:
            raise BenchboxError(f"{index_path}: lemma {lemma!r} does not list synset {offset:08d}")
        names.append(f"{lemma}.n.{listed.index(offset) + 1:02d}")
    return names


def closure_paths(edges: np.ndarray, n: int) -> np.ndarray:
    """The authors' transitive closure of ``edges`` over ``n`` concepts: (u, a) once per path from u up to a,
    u in row order, each u's ancestors in depth-first order (parents in edge order)."""
    parents: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        parents[int(u)].append(int(v))
    paths: list[list[int] | None] = [None] * n
    for start in range(n):  # iterative post-order: a node's list is built after its parents' lists
        stack = [start]
        while stack:
            u = stack[-1]
            if paths[u] is not None:
                stack.pop()
                continue
            pending = [p for p in parents[u] if paths[p] is None]
            if pending:
                if len(stack) > n:
                    raise BenchboxError("the hypernym graph has a cycle: not a WordNet noun hierarchy")
                stack.extend(pending)
                continue
            paths[u] = [a for p in parents[u] for a in [p, *paths[p]]]
            stack.pop()
    counts = np.fromiter((len(p) for p in paths), dtype=np.int64, count=n)
    hyponyms = np.repeat(np.arange(n, dtype=np.int64), counts)
    ancestors = np.fromiter((a for p in paths for a in p), dtype=np.int64, count=int(counts.sum()))
    return np.stack([hyponyms, ancestors], axis=1)


def corrupt(pairs: np.ndarray, n: int, rng: np.random.RandomState) -> np.ndarray:
    """One negative per pair: the hyponym or the hypernym (probability ½ each) replaced by a concept drawn
    uniformly from the ``n`` concepts."""
    negatives = pairs.copy()
    side = rng.randint(0, 2, size=len(pairs))
    negatives[np.arange(len(pairs)), side] = rng.randint(0, n, size=len(pairs))
    return negatives


def split_closure(closure: np.ndarray, n: int, held_out: int = HELD_OUT, seed: int = 1) -> HypernymSplit:
    """The closure's entries shuffled (``seed``): test = the first ``held_out``, dev = the next ``held_out``,
    train = the rest; then one negative per dev and test pair (:func:`corrupt`), dev's first."""
    if held_out < 1 or 2 * held_out >= len(closure):
        raise BenchboxError(f"cannot hold out {held_out} dev and {held_out} test pairs of a closure of "
                            f"{len(closure)}: at least one pair must stay for training")
    rng = np.random.RandomState(seed)
    shuffled = closure[rng.permutation(len(closure))]
    test, dev, train = shuffled[:held_out], shuffled[held_out: 2 * held_out], shuffled[2 * held_out:]
    dev_negatives = corrupt(dev, n, rng)
    return HypernymSplit(train, dev, test, dev_negatives, corrupt(test, n, rng))


def closure_baseline(known: np.ndarray, pairs: np.ndarray, n: int) -> np.ndarray:
    """For each pair (u, a): whether a is reachable from u along the ``known`` edges (their transitive
    closure holds the pair)."""
    parents: list[list[int]] = [[] for _ in range(n)]
    for u, v in np.unique(known, axis=0):
        parents[int(u)].append(int(v))
    reach: dict[int, set[int]] = {}
    out = np.zeros(len(pairs), dtype=bool)
    for i, (u, a) in enumerate(pairs):
        u = int(u)
        if u not in reach:
            seen: set[int] = set()
            stack = list(parents[u])
            while stack:
                v = stack.pop()
                if v not in seen:
                    seen.add(v)
                    stack.extend(parents[v])
            reach[u] = seen
        out[i] = int(a) in reach[u]
    return out

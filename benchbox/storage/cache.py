"""Embedding cache keyed by encoder × sentence text.

The encoder's folder is named by :func:`benchbox.storage.identity.cache_key` (its fingerprint, output width and a
digest of its provider's version; called ``<fingerprint>`` below). Layout:
``<cache dir>/<fingerprint>/<shard>.keys.npy`` (rows of 16 bytes: sha256 prefixes of the UTF-8 text) beside
``<shard>.emb.npy`` (float32 rows in the same order) and ``<shard>.sha256`` (the sha256 of the two files'
bytes, embeddings first). Each file is written atomically (temporary file, then rename), the keys file last,
so an interrupted write leaves no half shard. The cache dir is ``--cache-dir``, else ``$BENCHBOX_CACHE``, else
the user cache dir.

Computation: a folder's name ends in a digest of the versions of what computed its vectors (the encoder's
provider and the libraries its class declares, :func:`benchbox.storage.identity.computation`); the part before
the last ``-`` is the encoder's *family*. The versions are written beside the shards, in :data:`COMPUTED_BY`.
When a family's folder for the current versions is new and an older one of the family holds shards, one line
says which versions changed (``embedding cache: transformers 4.40.0 -> 4.41.0 since these vectors were cached;
re-embedding``) and the sentences are encoded again; the old folder stays until ``benchbox cache clear``.

Integrity: only embeddings that passed :func:`benchbox.embedding_checks.check_encoder_output` (shape
[n, dim], float32, finite) are written. When a fingerprint's shards are opened, every shard's checksum is
recomputed; a shard that fails it (permuted, edited, truncated, bit-flipped), lacks it, or does not parse is
moved to ``<fingerprint>/quarantine/`` with one line on stderr and its sentences are encoded again, so a
damaged shard is never served. ``benchbox cache status|verify|clear`` inspects and repairs the cache.

Ownership: the cache root holds a marker file, :data:`MARKER`, written when the cache first stores a shard in a
folder that is new, empty or holds only encoder folders (a cache written before the marker existed). An
*encoder folder* is a plain folder of the root holding nothing but shard files (and their quarantine); anything
else in the root is not benchbox's. ``benchbox cache clear`` deletes encoder folders of a marked root and nothing
else (:func:`encoder_folders`, :func:`is_encoder_folder`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import platformdirs

from benchbox.storage.atomic import write_bytes
from benchbox.console import log as console_log
from benchbox.embedding_checks import check_encoder_output
from benchbox.errors import BenchboxError

KEY_BYTES = 16
#: the folder (inside a fingerprint's folder) that damaged shards are moved to
QUARANTINE = "quarantine"
#: the file that marks a folder as a benchbox embedding cache root
MARKER = ".benchbox-cache"
#: the file of an encoder folder that records the versions that computed its vectors (JSON: distribution → version)
COMPUTED_BY = "computed_by.json"
#: the files a shard consists of: ``<uuid4 hex>.emb.npy|.keys.npy|.sha256`` (``_add_shard``), and the hidden
#: temporaries :func:`benchbox.storage.atomic.temporary_sibling` names after them
SHARD_FILE = re.compile(r"(\.?[0-9a-f]{32})(\.emb|\.keys)?(\.[0-9a-f]{32})?\.(npy|sha256)")


def default_cache_dir() -> Path:
    if os.environ.get("BENCHBOX_CACHE"):
        return Path(os.environ["BENCHBOX_CACHE"]).expanduser()
    return Path(platformdirs.user_cache_dir("benchbox")) / "embeddings"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def shard_digest(emb_bytes: bytes, keys_bytes: bytes) -> str:
    """The checksum of a shard: sha256 of its embeddings file's bytes, then its keys file's bytes."""
    h = hashlib.sha256(emb_bytes)
    h.update(keys_bytes)
    return h.hexdigest()


def is_encoder_folder(path: Path) -> bool:
    """Whether ``path`` is a folder the cache made for one encoder: a real folder (not a link) holding only
    shard files, its :data:`COMPUTED_BY` record and a quarantine folder that holds only shard files."""
    if path.is_symlink() or not path.is_dir():
        return False
    for entry in path.iterdir():
        if entry.name == QUARANTINE and not entry.is_symlink() and entry.is_dir():
            if not all(SHARD_FILE.fullmatch(f.name) and f.is_file() and not f.is_symlink() for f in entry.iterdir()):
                return False
        elif not ((SHARD_FILE.fullmatch(entry.name) or entry.name == COMPUTED_BY) and entry.is_file()
                  and not entry.is_symlink()):
            return False
    return True


def is_cache_root(directory: Path) -> bool:
    """Whether ``directory`` carries the cache marker."""
    return (directory / MARKER).is_file()


def mark_cache_root(directory: Path) -> None:
    """Write the marker into ``directory`` (created if missing) when it is new, empty or holds only encoder
    folders; a folder holding anything else is left unmarked, so ``cache clear`` never deletes there."""
    if is_cache_root(directory):
        return
    directory.mkdir(parents=True, exist_ok=True)
    if all(is_encoder_folder(entry) for entry in directory.iterdir()):
        write_bytes(directory / MARKER, b"benchbox embedding cache: benchbox cache status|verify|clear\n")


def encoder_folders(directory: Path) -> list[Path]:
    """The encoder folders of the cache root ``directory`` (others, if any, are not benchbox's)."""
    return sorted(p for p in directory.iterdir() if is_encoder_folder(p)) if directory.is_dir() else []


def require_cache_root(directory: Path) -> Path:
    """``directory`` if it carries the marker, else a one-line :class:`BenchboxError`."""
    if not is_cache_root(directory):
        raise BenchboxError(f"{directory} is not a benchbox embedding cache (it has no {MARKER} file): nothing "
                            "was removed; delete it yourself if it is one")
    return directory


def owned_folder(directory: Path, folder: Path, given: str) -> Path:
    """``folder`` if it is an encoder folder directly inside the marked cache root ``directory``, else a
    one-line :class:`BenchboxError` saying why it is not benchbox's to delete (``given``: what the user typed)."""
    root = require_cache_root(directory).resolve()
    if folder.is_symlink() or folder.resolve().parent != root:
        raise BenchboxError(f"{given}: {folder} is not an encoder folder of the cache {directory}: nothing was "
                            "removed")
    if not is_encoder_folder(folder):
        raise BenchboxError(f"{given}: {folder} holds files the embedding cache did not write: nothing was "
                            "removed")
    return folder


class CorruptShard(Exception):
    """A shard that must not be served; the message says why (completes "shard X ...")."""


def shard_key_files(folder: Path) -> list[Path]:
    """The keys files of the shards in one fingerprint's folder (quarantined shards excluded)."""
    return sorted(folder.glob("*.keys.npy")) if folder.is_dir() else []


def shard_files(keys_file: Path) -> list[Path]:
    """All files of the shard whose keys file is ``keys_file``."""
    stem = keys_file.name.removesuffix(".keys.npy")
    return [keys_file.with_name(f"{stem}{suffix}") for suffix in (".emb.npy", ".sha256", ".keys.npy")]


def read_shard(keys_file: Path) -> tuple[np.ndarray, np.ndarray]:
    """(keys [n, 16] uint8, embeddings [n, d] float32) of a shard whose checksum and contents check out."""
    emb_file, sum_file, _ = shard_files(keys_file)
    try:
        emb_bytes, keys_bytes = emb_file.read_bytes(), keys_file.read_bytes()
    except FileNotFoundError as exc:
        raise CorruptShard(f"is incomplete (no {Path(exc.filename).name})") from exc
    if not sum_file.is_file():
        raise CorruptShard("has no checksum (written before checksums, or interrupted)")
    if sum_file.read_text().strip() != shard_digest(emb_bytes, keys_bytes):
        raise CorruptShard("fails its checksum (changed on disk since it was written)")
    try:
        keys = np.load(io.BytesIO(keys_bytes), allow_pickle=False)
        emb = np.load(io.BytesIO(emb_bytes), allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise CorruptShard(f"does not parse ({exc})") from exc
    if (keys.dtype != np.uint8 or keys.shape[1:] != (KEY_BYTES,) or emb.dtype != np.float32 or emb.ndim != 2
            or len(keys) != len(emb) or not np.isfinite(emb).all()):
        raise CorruptShard("holds malformed or non-finite arrays")
    return keys, emb


def quarantine(keys_file: Path) -> Path:
    """Move a shard's files into ``quarantine/`` beside it; returns that folder."""
    folder = keys_file.parent / QUARANTINE
    folder.mkdir(exist_ok=True)
    for path in shard_files(keys_file):
        if path.exists():
            os.replace(path, folder / path.name)
    return folder


class EmbeddingCache:
    """Stores and retrieves sentence embeddings of one or more encoders."""

    def __init__(self, directory: str | os.PathLike | None = None, log: Callable[[str], None] | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self._index: dict[str, dict[bytes, tuple[int, int]]] = {}
        self._shards: dict[str, list[np.ndarray]] = {}
        #: sentences served from the cache / sent to the encoder, since creation
        self.hits = 0
        self.misses = 0
        #: shards that failed their check and were moved aside, since creation
        self.quarantined = 0
        self.log = log or console_log

    def _load(self, fingerprint: str, computed_by: dict[str, str | None] | None = None) -> dict[bytes, tuple[int, int]]:
        if fingerprint in self._index:
            return self._index[fingerprint]
        index: dict[bytes, tuple[int, int]] = {}
        shards: list[np.ndarray] = []
        if computed_by is not None and not shard_key_files(self.directory / fingerprint):
            self._say_superseded(fingerprint, computed_by)
        for keys_file in shard_key_files(self.directory / fingerprint):
            try:
                keys, emb = read_shard(keys_file)
            except CorruptShard as exc:
                moved = quarantine(keys_file)
                self.quarantined += 1
                self.log(f"embedding cache: shard {keys_file.name} of {fingerprint} {exc}; moved to {moved}, its "
                         "sentences will be encoded again")
                continue
            shard_id = len(shards)
            shards.append(emb)
            for row, key in enumerate(keys):
                index[key.tobytes()] = (shard_id, row)
        self._index[fingerprint] = index
        self._shards[fingerprint] = shards
        return index

    def _say_superseded(self, folder: str, computed_by: dict[str, str | None]) -> None:
        """One line when an older folder of ``folder``'s family holds vectors computed by other versions
        (module docstring)."""
        family = folder.rpartition("-")[0]
        older = [p for p in encoder_folders(self.directory)
                 if p.name != folder and p.name.rpartition("-")[0] == family and shard_key_files(p)]
        if not family or not older:
            return
        latest = max(older, key=lambda p: p.stat().st_mtime_ns)
        try:
            before = json.loads((latest / COMPUTED_BY).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = None
        if not isinstance(before, dict):
            self.log(f"embedding cache: the vectors cached in {latest.name} do not record the library versions that "
                     "computed them (an earlier benchbox); re-embedding")
            return
        changed = [f"{name} {before.get(name)} -> {computed_by.get(name)}"
                   for name in sorted(set(before) | set(computed_by)) if before.get(name) != computed_by.get(name)]
        self.log(f"embedding cache: {', '.join(changed) or 'the computation'} since these vectors were cached; "
                 "re-embedding")

    def embed(
        self,
        fingerprint: str,
        sentences: list[str],
        encode: Callable[[list[str]], np.ndarray],
        computed_by: dict[str, str | None] | None = None,
    ) -> np.ndarray:
        """Embeddings of ``sentences``; only sentences never seen for ``fingerprint`` reach ``encode``
        (each distinct text once), and their embeddings are stored as a new shard. ``computed_by``: the
        versions that compute them (:func:`benchbox.storage.identity.computation`), recorded in the folder and
        compared with an older folder of its family (module docstring)."""
        index = self._load(fingerprint, computed_by)
        keys = [text_key(s) for s in sentences]
        todo: dict[bytes, str] = {}
        for key, sentence in zip(keys, sentences):
            if key not in index and key not in todo:
                todo[key] = sentence
        self.misses += len(todo)
        self.hits += len(sentences) - sum(1 for k in keys if k in todo)
        if todo:
            shards = self._shards[fingerprint]
            width = shards[0].shape[1] if shards else None
            new = check_encoder_output(encode(list(todo.values())), list(todo.values()), fingerprint, width)
            self._add_shard(fingerprint, list(todo), new, computed_by)
        if not sentences:
            return np.zeros((0, 0), dtype=np.float32)
        shards = self._shards[fingerprint]
        rows = np.array([index[k] for k in keys])  # [n, 2]: (shard, row) of each sentence
        out = np.empty((len(sentences), shards[rows[0, 0]].shape[1]), dtype=np.float32)
        for shard_id in np.unique(rows[:, 0]):
            in_shard = rows[:, 0] == shard_id
            out[in_shard] = shards[shard_id][rows[in_shard, 1]]
        return out

    def _add_shard(self, fingerprint: str, keys: list[bytes], emb: np.ndarray,
                   computed_by: dict[str, str | None] | None = None) -> None:
        folder = self.directory / fingerprint
        folder.mkdir(parents=True, exist_ok=True)
        record = folder / COMPUTED_BY if computed_by is not None and not (folder / COMPUTED_BY).is_file() else None
        shard = uuid.uuid4().hex
        emb_bytes = _npy_bytes(emb)
        keys_bytes = _npy_bytes(np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, KEY_BYTES))
        keys_file = folder / f"{shard}.keys.npy"
        try:
            write_bytes(folder / f"{shard}.emb.npy", emb_bytes)
            write_bytes(folder / f"{shard}.sha256", shard_digest(emb_bytes, keys_bytes).encode())
            write_bytes(keys_file, keys_bytes)
            if record is not None:  # the folder's first shard: what computed its vectors
                write_bytes(record, json.dumps(computed_by, sort_keys=True).encode())
        except BaseException:  # a full disk, an interrupt: no half shard stays behind
            for path in [*shard_files(keys_file), *([record] if record is not None else [])]:
                path.unlink(missing_ok=True)
            raise
        mark_cache_root(self.directory)  # after the shard: a write that failed leaves no file at all
        shard_id = len(self._shards[fingerprint])
        self._shards[fingerprint].append(emb)
        index = self._index[fingerprint]
        for row, key in enumerate(keys):
            index[key] = (shard_id, row)

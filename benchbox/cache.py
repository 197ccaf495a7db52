"""Embedding cache keyed by encoder fingerprint × sentence text.

Layout: ``<cache dir>/<fingerprint>/<shard>.keys.npy`` (rows of 16 bytes: sha256 prefixes of the UTF-8 text) beside
``<shard>.emb.npy`` (float32 rows in the same order). A shard is written atomically (temporary file, then
rename; the keys file last), so an interrupted write leaves no half shard. The cache dir is ``--cache-dir``,
else ``$BENCHBOX_CACHE``, else the user cache dir.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import platformdirs

from benchbox.errors import BenchboxError

KEY_BYTES = 16


def default_cache_dir() -> Path:
    if os.environ.get("BENCHBOX_CACHE"):
        return Path(os.environ["BENCHBOX_CACHE"]).expanduser()
    return Path(platformdirs.user_cache_dir("benchbox")) / "embeddings"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


def _save_atomic(path: Path, array: np.ndarray) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, array)
    os.replace(tmp, path)


class EmbeddingCache:
    """Stores and retrieves sentence embeddings of one or more encoders."""

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self._index: dict[str, dict[bytes, tuple[int, int]]] = {}
        self._shards: dict[str, list[np.ndarray]] = {}
        #: sentences served from the cache / sent to the encoder, since creation
        self.hits = 0
        self.misses = 0

    def _load(self, fingerprint: str) -> dict[bytes, tuple[int, int]]:
        if fingerprint in self._index:
            return self._index[fingerprint]
        index: dict[bytes, tuple[int, int]] = {}
        shards: list[np.ndarray] = []
        folder = self.directory / fingerprint
        for keys_file in sorted(folder.glob("*.keys.npy")) if folder.is_dir() else []:
            emb_file = keys_file.with_name(keys_file.name.replace(".keys.npy", ".emb.npy"))
            try:
                keys = np.load(keys_file)
                emb = np.load(emb_file, mmap_mode="r")
            except (OSError, ValueError) as exc:
                raise BenchboxError(
                    f"corrupt embedding cache shard {keys_file}: {exc}. Delete {folder} to rebuild it."
                ) from exc
            if len(keys) != len(emb):
                raise BenchboxError(f"corrupt embedding cache shard {keys_file}: delete {folder} to rebuild it.")
            shard_id = len(shards)
            shards.append(emb)
            for row, key in enumerate(keys):
                index[key.tobytes()] = (shard_id, row)
        self._index[fingerprint] = index
        self._shards[fingerprint] = shards
        return index

    def embed(
        self,
        fingerprint: str,
        sentences: list[str],
        encode: Callable[[list[str]], np.ndarray],
    ) -> np.ndarray:
        """Embeddings of ``sentences``; only sentences never seen for ``fingerprint`` reach ``encode``
        (each distinct text once), and their embeddings are stored as a new shard."""
        index = self._load(fingerprint)
        keys = [text_key(s) for s in sentences]
        todo: dict[bytes, str] = {}
        for key, sentence in zip(keys, sentences):
            if key not in index and key not in todo:
                todo[key] = sentence
        self.misses += len(todo)
        self.hits += len(sentences) - sum(1 for k in keys if k in todo)
        if todo:
            new = np.asarray(encode(list(todo.values())), dtype=np.float32)
            self._add_shard(fingerprint, list(todo), new)
        if not sentences:
            return np.zeros((0, 0), dtype=np.float32)
        shards = self._shards[fingerprint]
        rows = [index[k] for k in keys]
        dim = shards[rows[0][0]].shape[1]
        out = np.empty((len(sentences), dim), dtype=np.float32)
        for shard_id in {s for s, _ in rows}:
            positions = [i for i, (s, _) in enumerate(rows) if s == shard_id]
            out[positions] = shards[shard_id][[rows[i][1] for i in positions]]
        return out

    def _add_shard(self, fingerprint: str, keys: list[bytes], emb: np.ndarray) -> None:
        folder = self.directory / fingerprint
        folder.mkdir(parents=True, exist_ok=True)
        shard = uuid.uuid4().hex
        _save_atomic(folder / f"{shard}.emb.npy", emb)
        _save_atomic(folder / f"{shard}.keys.npy", np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, KEY_BYTES))
        shard_id = len(self._shards[fingerprint])
        self._shards[fingerprint].append(emb)
        index = self._index[fingerprint]
        for row, key in enumerate(keys):
            index[key] = (shard_id, row)

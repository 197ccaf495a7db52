"""Clip feature files: several frame vectors per visual item (a video clip), read (checked) and written, keyed by
clip id — the visual side of ``--visual frame | average | attention`` (docs/protocols.md#video-context).

Formats (chosen by the file suffix):

- ``.npz``: arrays ``ids`` [N] (strings), ``features`` [N, F, D] (float) and, when clips differ in length,
  ``frames`` [N] (integers): clip i has ``frames[i]`` frames, rows ``features[i, :frames[i]]``; the rows past
  it are padding and never read (without ``frames`` every clip has all F).
- ``.h5`` / ``.hdf5``: the same datasets ``ids``, ``features`` and optional ``frames``, or — when there is no
  ``features`` dataset — one top-level dataset per clip id, each [F_i, D] (its frames) or [D] (one frame).
- Any image-features file (:mod:`benchbox.data.image_features`: ``.npy``/``.npz``/``.h5`` with [N, D]) is read as
  clips of one frame each, by that module's own reader and checks.

Ids are normalised as image ids are (:func:`benchbox.data.image_features.normalise_id`). A file is refused with one
line naming it for a wrong rank or dtype, zero frames or dimensions, ids and rows that disagree, duplicate ids,
a clip without frames (``frames`` 0, or a per-clip dataset of 0 rows), a frame count above F, requested clips
it lacks, and NaN or infinite values in a requested clip's frames.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from benchbox.storage.atomic import atomic_path
from benchbox.errors import BenchboxError
from benchbox.data.image_features import SHOWN, _as_strings, index_ids, load_features, normalise_id

SUFFIXES = (".npz", ".h5", ".hdf5")


@dataclass(frozen=True)
class Clips:
    """Frame vectors of N clips: ``frames`` [N, F, D] float32 (rows past a clip's count are zero padding) and
    ``counts`` [N] int64 (the frames of each clip, 1 … F)."""

    frames: np.ndarray
    counts: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.frames.shape[2])

    @property
    def valid(self) -> np.ndarray:
        """[N, F] bool: which rows of ``frames`` are frames of their clip."""
        return np.arange(self.frames.shape[1])[None, :] < self.counts[:, None]

    def take(self, rows: np.ndarray) -> Clips:
        """The clips at ``rows``, in that order."""
        return Clips(self.frames[rows], self.counts[rows])


@dataclass(frozen=True)
class _Stored:
    """A clip file's ids as stored, and a reader of (frames [n, F, D], counts [n]) by position."""

    ids: list[str]
    read: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _check_shape(path: Path, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if len(shape) != 3:
        raise BenchboxError(f"{path}: clip features must be a 3-D array [clips, frames, dim] (or an image-features "
                            f"file [images, dim]), found shape {tuple(shape)}")
    if not np.issubdtype(dtype, np.floating):
        raise BenchboxError(f"{path}: features must be floating point (float16/32/64), found dtype {dtype}")
    if shape[1] < 1 or shape[2] < 1:
        raise BenchboxError(f"{path}: clip features of shape {tuple(shape)} have no frames or no dimensions")


def _counts(path: Path, raw: np.ndarray | None, n: int, max_frames: int) -> np.ndarray:
    """The ``frames`` array checked (integers in 1 … F, one per clip); all F when absent."""
    if raw is None:
        return np.full(n, max_frames, dtype=np.int64)
    if raw.ndim != 1 or len(raw) != n or raw.dtype.kind not in "iu":
        raise BenchboxError(f"{path}: 'frames' must be {n} integers (the frames of each clip), found "
                            f"{raw.dtype} of shape {raw.shape}")
    counts = raw.astype(np.int64)
    bad = np.flatnonzero((counts < 1) | (counts > max_frames))
    if len(bad):
        raise BenchboxError(f"{path}: {len(bad)} clips have a frame count outside 1-{max_frames} (0 is an empty "
                            f"clip), e.g. row {int(bad[0])} with {int(counts[bad[0]])}")
    return counts


def _open_npz(path: Path) -> _Stored | None:
    """The clips of a .npz file; None when its features are not 3-D (an image-features file, or not readable as
    clips: the image-features reader says what is wrong with it)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "features" not in archive.files or "ids" not in archive.files:
                return None
            matrix = archive["features"]
            if matrix.ndim != 3:
                return None
            raw_ids = archive["ids"]
            raw_counts = archive["frames"] if "frames" in archive.files else None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):
        return None
    return _in_memory(path, _as_strings(path, raw_ids), matrix, raw_counts)


def _in_memory(path: Path, ids: list[str], matrix: np.ndarray, raw_counts: np.ndarray | None) -> _Stored:
    _check_shape(path, matrix.shape, matrix.dtype)
    if len(ids) != matrix.shape[0]:
        raise BenchboxError(f"{path}: 'ids' has {len(ids)} entries but 'features' has {matrix.shape[0]} clips")
    counts = _counts(path, raw_counts, len(ids), matrix.shape[1])
    return _Stored(ids, lambda rows: (matrix[rows], counts[rows]))


def _open_h5(path: Path, h5: h5py.File) -> _Stored | None:
    """The clips of an open HDF5 file; None for the image-features layouts (vectors [D] or [1, D])."""
    if "features" in h5:
        if "ids" not in h5 or not isinstance(h5["features"], h5py.Dataset) or h5["features"].ndim != 3:
            return None
        counts = np.asarray(h5["frames"][()]) if "frames" in h5 else None
        return _in_memory(path, _as_strings(path, np.asarray(h5["ids"][()])), np.asarray(h5["features"][()]), counts)
    keys = [k for k in h5.keys() if isinstance(h5[k], h5py.Dataset)]
    if all(h5[k].ndim == 1 or (h5[k].ndim == 2 and h5[k].shape[0] == 1) for k in keys):
        return None
    shapes = {k: h5[k].shape if h5[k].ndim == 2 else (1, *h5[k].shape) for k in keys}
    bad = [k for k, s in shapes.items() if len(s) != 2]
    if bad:
        raise BenchboxError(f"{path}: with one dataset per clip, each must be [frames, dim] or [dim]; "
                            f"{bad[0]!r} has shape {h5[bad[0]].shape}")
    empty = [k for k, s in shapes.items() if s[0] == 0]
    if empty:
        raise BenchboxError(f"{path}: {len(empty)} clips have no frames (empty clip), e.g. {empty[:SHOWN]}")
    dims = sorted({s[1] for s in shapes.values()})
    if len(dims) > 1:
        raise BenchboxError(f"{path}: the clips have frames of different dimensions {dims[:SHOWN]}")
    counts = np.array([shapes[k][0] for k in keys], dtype=np.int64)
    dtype = np.result_type(*(h5[k].dtype for k in keys))
    _check_shape(path, (len(keys), int(counts.max()), dims[0]), dtype)

    def read(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros((len(rows), int(counts.max()), dims[0]), dtype=dtype)
        for i, row in enumerate(rows):
            out[i, : counts[row]] = np.asarray(h5[keys[row]][()]).reshape(counts[row], dims[0])
        return out, counts[rows]

    return _Stored(keys, read)


def load_clips(path: str | os.PathLike, clip_ids: Sequence[str]) -> Clips:
    """The frames of ``clip_ids`` (clip i = ``clip_ids[i]``), checked (module docstring); an image-features file
    gives clips of one frame."""
    path = Path(path)
    if not path.is_file():
        raise BenchboxError(f"clip features file {path} not found")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        stored = _open_npz(path)
        if stored is not None:
            return _select(path, stored, clip_ids)
    elif suffix in (".h5", ".hdf5"):
        try:
            h5 = h5py.File(path, "r")
        except OSError as exc:
            raise BenchboxError(f"{path}: not a readable HDF5 file ({exc})") from None
        with h5:
            stored = _open_h5(path, h5)
            if stored is not None:
                return _select(path, stored, clip_ids)
    vectors = load_features(path, clip_ids)  # an image-features file (or none the image reader accepts)
    return Clips(vectors[:, None, :], np.ones(len(vectors), dtype=np.int64))


def _select(path: Path, stored: _Stored, clip_ids: Sequence[str]) -> Clips:
    index = index_ids(path, stored.ids)
    wanted = [normalise_id(i) for i in clip_ids]
    missing = [i for i in dict.fromkeys(wanted) if i not in index]
    if missing:
        raise BenchboxError(f"{path}: {len(missing)} of the {len(set(wanted))} requested clips have no frames, "
                            f"e.g. {missing[:SHOWN]}")
    frames, counts = stored.read(np.asarray([index[i] for i in wanted], dtype=np.int64))
    clips = Clips(np.asarray(frames, dtype=np.float32), np.asarray(counts, dtype=np.int64))
    frames = np.where(clips.valid[..., None], clips.frames, np.float32(0))  # padding is never read: zero it
    bad = ~np.isfinite(frames).all(axis=(1, 2))
    if bad.any():
        shown = [wanted[i] for i in np.flatnonzero(bad)[:SHOWN]]
        raise BenchboxError(f"{path}: {int(bad.sum())} requested clips have NaN or infinite frame features, "
                            f"e.g. {shown}")
    return Clips(frames, clips.counts)


def save_clips(path: str | os.PathLike, ids: Sequence[str], frames: np.ndarray, counts: np.ndarray | None = None) -> None:
    """Write clips (``frames`` [N, F, D], stored as float32; ``counts`` [N], default all F) keyed by ``ids``, as
    ``.npz`` or HDF5 (``ids`` + ``features`` + ``frames``), atomically."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise BenchboxError(f"{path}: clip features are written as {' or '.join(SUFFIXES)}")
    frames = np.asarray(frames, dtype=np.float32)
    ids = [str(i) for i in ids]
    if frames.ndim != 3 or frames.shape[0] != len(ids):
        raise BenchboxError(f"cannot save clip features of shape {frames.shape} with {len(ids)} ids")
    counts = np.full(len(ids), frames.shape[1], dtype=np.int64) if counts is None else np.asarray(counts, np.int64)
    _counts(path, counts, len(ids), frames.shape[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".npz":
            with open(tmp, "wb") as fh:
                np.savez(fh, ids=np.asarray(ids, dtype=str), features=frames, frames=counts)
        else:
            with h5py.File(tmp, "w") as h5:
                h5.create_dataset("ids", data=np.asarray(ids, dtype=object), dtype=h5py.string_dtype("utf-8"))
                h5.create_dataset("features", data=frames)
                h5.create_dataset("frames", data=counts)

"""Image feature files: read (checked) and write (atomically), keyed by image id.

The image side of the grounded encoders (docs/protocols.md#image-features; Merkx & Frank 2019 §3) is one 2048-d ResNet-152
vector per image (He et al. 2016), made by ``benchbox features extract`` or brought from elsewhere.

Formats (chosen by the file suffix):

- ``.npy``: a 2-D float array [N, D] plus a sidecar ``<stem>.ids.txt`` beside it (``feats.npy`` →
  ``feats.ids.txt``), one image id per line, line i naming row i. Optional metadata in ``<stem>.meta.json``.
  Object/pickled arrays are refused (``allow_pickle=False``).
- ``.npz``: arrays ``ids`` (strings) and ``features`` [N, D]; optional ``metadata`` (a JSON string).
- ``.h5`` / ``.hdf5``: either datasets ``ids`` (strings) and ``features`` [N, D], or — when there is no
  ``features`` dataset — one top-level dataset per image id, each a vector [D] (or [1, D]). Optional metadata
  in the file attribute ``benchbox_metadata`` (a JSON string).

Image ids are matched after normalisation (:func:`normalise_id`): surrounding whitespace and one trailing
image extension (``.jpg``, ``.jpeg``, ``.png``, any case) are removed, so ``2513260012_03d33305cf.jpg`` and
``2513260012_03d33305cf`` name the same image, both in the file and in the ids asked for.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.storage.atomic import atomic_path, write_text
from benchbox.errors import BenchboxError

h5py = lazy_module("h5py")  # imported at first use: the command line starts without it

SUFFIXES = (".npy", ".npz", ".h5", ".hdf5")
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")
METADATA_ATTR = "benchbox_metadata"
SHOWN = 5  # how many offending ids an error message lists


def normalise_id(image_id: str) -> str:
    """``image_id`` without surrounding whitespace and without one trailing .jpg/.jpeg/.png (any case)."""
    text = image_id.strip()
    stem, ext = os.path.splitext(text)
    return stem if ext.lower() in IMAGE_EXTENSIONS and stem else text


def ids_path(path: Path) -> Path:
    """The sidecar id list of a ``.npy`` features file."""
    return path.with_suffix(".ids.txt")


def meta_path(path: Path) -> Path:
    """The sidecar metadata of a ``.npy`` features file."""
    return path.with_suffix(".meta.json")


@dataclass
class FeatureSource:
    """An opened features file: its ids (as stored), metadata, and a reader of rows by position."""

    path: Path
    ids: list[str]
    dim: int
    dtype: np.dtype
    take: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    metadata: dict[str, Any] = field(default_factory=dict)


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise BenchboxError(
            f"{path}: unknown image-features format {path.suffix or '(no suffix)'!r}; "
            f"use one of {', '.join(SUFFIXES)} (see `benchbox features extract --help`)"
        )
    return suffix


def _check_matrix(path: Path, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if len(shape) != 2:
        clips = ("; a 3-D array is clips of frames [clips, frames, dim]: train on them with --visual frame, average "
                 "or attention, from a .npz or .h5 file") if len(shape) == 3 else ""
        raise BenchboxError(f"{path}: features must be a 2-D array [images, dim], found shape {tuple(shape)}{clips}")
    if not np.issubdtype(dtype, np.floating):
        raise BenchboxError(f"{path}: features must be floating point (float16/32/64), found dtype {dtype}")
    if shape[1] < 1:
        raise BenchboxError(f"{path}: features have dimension 0 (shape {tuple(shape)}); each image needs a vector")


def _as_strings(path: Path, values: np.ndarray) -> list[str]:
    if values.ndim != 1:
        raise BenchboxError(f"{path}: the image ids must be a 1-D array of strings, found shape {values.shape}")
    if values.dtype.kind == "U":
        return [str(v) for v in values]
    if values.dtype.kind in "SO":
        try:
            return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]
        except UnicodeDecodeError as exc:
            raise BenchboxError(f"{path}: an image id is not valid UTF-8 ({exc})") from exc
    raise BenchboxError(f"{path}: the image ids must be strings, found dtype {values.dtype}")


def _parse_metadata(path: Path, text: Any) -> dict[str, Any]:
    if text is None:
        return {}
    if isinstance(text, np.void):  # an opaque HDF5 attribute
        text = text.tobytes()
    if not isinstance(text, (str, bytes)):
        raise BenchboxError(f"{path}: its metadata must be a JSON string, found {type(text).__name__}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or nested too deep to parse
        raise BenchboxError(f"{path}: its metadata is not valid UTF-8 JSON ({type(exc).__name__}: {exc})") from None
    return value if isinstance(value, dict) else {}


def _read_utf8(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path}: not UTF-8 text ({exc})") from None


def _open_npy(path: Path) -> FeatureSource:
    sidecar = ids_path(path)
    if not sidecar.is_file():
        raise BenchboxError(
            f"{path}: a .npy features file needs its image ids in {sidecar} (one id per line, line i = row i)"
        )
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # EOFError: an empty file
        raise BenchboxError(f"{path}: not a plain numeric .npy array ({type(exc).__name__}: {exc}); "
                            "pickled arrays are not read") from None
    _check_matrix(path, matrix.shape, matrix.dtype)
    ids = _read_utf8(sidecar).splitlines()
    if ids and ids[-1] == "":
        ids = ids[:-1]
    if len(ids) != matrix.shape[0]:
        raise BenchboxError(f"{sidecar} lists {len(ids)} image ids but {path} has {matrix.shape[0]} rows")
    meta = meta_path(path)
    metadata = _parse_metadata(meta, _read_utf8(meta) if meta.is_file() else None)
    return FeatureSource(path, ids, matrix.shape[1], matrix.dtype, lambda rows: np.asarray(matrix[rows]), metadata)


def _open_npz(path: Path) -> FeatureSource:
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:  # EOFError: empty; BadZipFile: truncated
        raise BenchboxError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {exc}); "
                            "write it again (`benchbox features extract`)") from None
    with archive:
        missing = [name for name in ("ids", "features") if name not in archive.files]
        if missing:
            raise BenchboxError(
                f"{path}: a .npz features file needs arrays 'ids' and 'features'; missing {missing}, "
                f"found {archive.files}"
            )
        try:
            matrix, raw_ids = archive["features"], archive["ids"]
            raw_meta = archive["metadata"] if "metadata" in archive.files else None
        except ValueError as exc:
            raise BenchboxError(f"{path}: an array needs pickle to load ({exc}); store ids as a string array") from exc
        except (OSError, EOFError, zipfile.BadZipFile) as exc:  # a member cut short (a truncated archive)
            raise BenchboxError(f"{path}: a truncated or corrupt .npz archive ({type(exc).__name__}: {exc}); "
                                "write it again") from None
    _check_matrix(path, matrix.shape, matrix.dtype)
    ids = _as_strings(path, raw_ids)
    if len(ids) != matrix.shape[0]:
        raise BenchboxError(f"{path}: 'ids' has {len(ids)} entries but 'features' has {matrix.shape[0]} rows")
    text = raw_meta.item() if raw_meta is not None and raw_meta.ndim == 0 and raw_meta.dtype.kind in "US" else raw_meta
    metadata = _parse_metadata(path, None if text is None else text if isinstance(text, (str, bytes)) else str(text))
    return FeatureSource(path, ids, matrix.shape[1], matrix.dtype, lambda rows: matrix[rows], metadata)


def _open_h5(path: Path, h5: h5py.File) -> FeatureSource:
    metadata = _parse_metadata(path, h5.attrs.get(METADATA_ATTR))
    if "features" in h5:
        if "ids" not in h5:
            raise BenchboxError(f"{path}: has a 'features' dataset but no 'ids' dataset naming its rows")
        matrix = h5["features"]
        if not isinstance(matrix, h5py.Dataset):
            raise BenchboxError(f"{path}: 'features' must be a dataset, not a group")
        _check_matrix(path, matrix.shape, matrix.dtype)
        ids = _as_strings(path, np.asarray(h5["ids"][()]))
        if len(ids) != matrix.shape[0]:
            raise BenchboxError(f"{path}: 'ids' has {len(ids)} entries but 'features' has {matrix.shape[0]} rows")

        def take(rows: np.ndarray) -> np.ndarray:
            unique, inverse = np.unique(rows, return_inverse=True)  # h5py reads increasing indices only
            return matrix[unique][inverse] if len(unique) else np.empty((0, matrix.shape[1]), matrix.dtype)

        return FeatureSource(path, ids, matrix.shape[1], matrix.dtype, take, metadata)
    keys = [k for k in h5.keys() if isinstance(h5[k], h5py.Dataset)]
    if not keys:
        raise BenchboxError(
            f"{path}: no image features found; expected datasets 'ids' + 'features' or one dataset per image id"
        )
    shapes = {k: h5[k].shape for k in keys}
    bad = [k for k, s in shapes.items() if not (len(s) == 1 or (len(s) == 2 and s[0] == 1))]
    if bad:
        raise BenchboxError(
            f"{path}: with one dataset per image, each must be a vector [dim] (or [1, dim]); "
            f"{len(bad)} are not, e.g. {bad[0]!r} with shape {shapes[bad[0]]}"
        )
    dims = sorted({s[-1] for s in shapes.values()})
    if len(dims) > 1:
        raise BenchboxError(f"{path}: the per-image datasets have different dimensions {dims[:SHOWN]}")
    dtypes = {h5[k].dtype for k in keys}
    non_float = [d for d in dtypes if not np.issubdtype(d, np.floating)]
    if non_float:
        raise BenchboxError(f"{path}: features must be floating point (float16/32/64), found dtype {non_float[0]}")
    dtype = np.result_type(*dtypes)

    def take_each(rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), dims[0]), dtype=dtype)
        for i, row in enumerate(rows):
            out[i] = np.asarray(h5[keys[row]][()]).reshape(-1)
        return out

    return FeatureSource(path, keys, dims[0], dtype, take_each, metadata)


@contextmanager
def open_features(path: str | os.PathLike) -> Iterator[FeatureSource]:
    """Open a features file (any supported format) with its structure checked; rows are read lazily."""
    path = Path(path)
    suffix = _suffix(path)
    if not path.is_file():
        raise BenchboxError(f"image features file {path} not found (make one with `benchbox features extract`)")
    if suffix == ".npy":
        yield _open_npy(path)
    elif suffix == ".npz":
        yield _open_npz(path)
    else:
        try:
            h5 = h5py.File(path, "r")
        except OSError as exc:
            raise BenchboxError(f"{path}: not a readable HDF5 file ({exc})") from exc
        with h5:
            yield _open_h5(path, h5)


def index_ids(path: Path, ids: Sequence[str]) -> dict[str, int]:
    """Normalised id → row of a features file's ids (``path``: the file, for the message on duplicates)."""
    index: dict[str, int] = {}
    duplicates: list[str] = []
    for row, raw in enumerate(ids):
        key = normalise_id(raw)
        if key in index:
            duplicates.append(key)
        index[key] = row
    if duplicates:
        raise BenchboxError(
            f"{path}: {len(duplicates)} duplicate image ids (after removing .jpg/.jpeg/.png), "
            f"e.g. {sorted(set(duplicates))[:SHOWN]}; each image must appear once"
        )
    return index


def load_features(
    path: str | os.PathLike, image_ids: Sequence[str], *, expected_dim: int | None = None
) -> np.ndarray:
    """float32 [len(image_ids), D]: row i is the features of ``image_ids[i]`` (ids normalised, see module doc).

    Raises :class:`BenchboxError` when the file is missing, of unknown format, not a 2-D floating array,
    has duplicate ids, lacks some of ``image_ids``, has NaN/inf in a requested row, or D ≠ ``expected_dim``.
    """
    with open_features(path) as source:
        if expected_dim is not None and source.dim != expected_dim:
            raise BenchboxError(
                f"{source.path}: features have dimension {source.dim}, expected {expected_dim} "
                "(ResNet-152 penultimate-layer features are 2048-d)"
            )
        index = index_ids(source.path, source.ids)
        wanted = [normalise_id(i) for i in image_ids]
        missing = [i for i in dict.fromkeys(wanted) if i not in index]
        if missing:
            raise BenchboxError(
                f"{source.path}: {len(missing)} of the {len(set(wanted))} requested images have no features, "
                f"e.g. {missing[:SHOWN]}; extract them with `benchbox features extract --resume`"
            )
        rows = np.asarray([index[i] for i in wanted], dtype=np.int64)
        matrix = np.asarray(source.take(rows), dtype=np.float32).reshape(len(rows), source.dim)
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        shown = [wanted[i] for i in np.flatnonzero(bad)[:SHOWN]]
        raise BenchboxError(f"{path}: {int(bad.sum())} requested images have NaN or infinite features, e.g. {shown}")
    return matrix


def read_features(path: str | os.PathLike) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """All of a file: ids (as stored), float32 features [N, D], metadata (``{}`` when absent)."""
    with open_features(path) as source:
        rows = np.arange(len(source.ids), dtype=np.int64)
        matrix = np.asarray(source.take(rows), dtype=np.float32).reshape(len(rows), source.dim)
        return list(source.ids), matrix, dict(source.metadata)


def save_features(
    path: str | os.PathLike,
    ids: Sequence[str],
    features: np.ndarray,
    *,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write ``features`` [N, D] (stored as float32) keyed by ``ids`` in the format of ``path``'s suffix.

    Every file is written to a temporary name and renamed into place, so an interrupted write never leaves a
    truncated file. For ``.npy`` the id sidecar is replaced before the array; a reader checks that the two
    agree in length. HDF5 output uses the ``ids`` + ``features`` layout.
    """
    path = Path(path)
    suffix = _suffix(path)
    matrix = np.asarray(features, dtype=np.float32)
    ids = [str(i) for i in ids]
    if matrix.ndim != 2 or matrix.shape[0] != len(ids):
        raise BenchboxError(f"cannot save features of shape {matrix.shape} with {len(ids)} ids")
    meta_json = json.dumps(metadata or {}, sort_keys=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".npy":
        write_text(ids_path(path), "".join(f"{i}\n" for i in ids))
        write_text(meta_path(path), meta_json)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, matrix, allow_pickle=False)
    elif suffix == ".npz":
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, ids=np.asarray(ids, dtype=str), features=matrix, metadata=np.asarray(meta_json))
    else:
        with atomic_path(path) as tmp:
            with h5py.File(tmp, "w") as h5:
                h5.create_dataset("ids", data=np.asarray(ids, dtype=object), dtype=h5py.string_dtype("utf-8"))
                h5.create_dataset("features", data=matrix)
                h5.attrs[METADATA_ATTR] = meta_json

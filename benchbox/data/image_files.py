"""Image files as a task input, for encoders that embed images themselves (a
:class:`~benchbox.encoding.protocol.VisionLanguageEncoder`, e.g. CLIP; docs/vision-language.md).

Where the images are: the task's ``images`` option (``--images DIR``), else the dataset's folder under the
data root (:data:`DEFAULT_FOLDERS`, the folder names of the official downloads: Flickr8k's
``Flicker8k_Dataset/``, COCO's ``val2014/`` and ``train2014/``). An image id of the caption files (a file name)
names the file of that name anywhere under the folder (ids matched as in :mod:`benchbox.data.image_features`:
``.jpg``/``.jpeg``/``.png`` optional). A missing image is one line naming it and the folder; an unreadable one,
one line naming the file.

An image file is checked before it is opened (:func:`image_file`): two files of one id under the folder (in two
subfolders, or ``x.jpg`` beside ``x.png``) are refused naming both; the file must be a regular file (a FIFO, a
device or a socket would block or never end a read) — a link is followed only to a file inside the folder — and
no larger than the limit of :func:`benchbox.limits.max_image_bytes`. Folders are walked without following links.

Embedding (:func:`image_embedder`): each file is decoded with PIL, converted to RGB and passed through the
encoder's own preprocessing (``preprocess_image``) in a pool of worker threads (PIL's decoding and resizing
release the GIL), the next batch loading while the model embeds the current one. Image embeddings are stored
in the embedding cache (:mod:`benchbox.storage.cache`) like sentence embeddings, under :func:`benchbox.storage.identity.image_cache_key` (the
encoder's cache key — fingerprint, width, provider version — marked as its image side) and keyed by each file's
sha256: a changed file or a changed model is embedded again, a renamed or moved file is not.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchbox.storage.atomic import file_kind
from benchbox.storage.cache import EmbeddingCache
from benchbox.data.root import DataRoot
from benchbox.embedding_checks import check_image_output
from benchbox.encoding.protocol import VisionLanguageEncoder
from benchbox.errors import BenchboxError
from benchbox.limits import IMAGE_ENV_VAR, max_image_bytes
from benchbox.storage.identity import computation, image_cache_key
from benchbox.data.image_features import IMAGE_EXTENSIONS, normalise_id

if TYPE_CHECKING:
    from benchbox.task_contract.protocol import EvalContext

#: per dataset, the image folders under the data root tried when no ``images`` option is given (in order;
#: Flickr8k's official archive unpacks to ``Flicker8k_Dataset``, sic)
DEFAULT_FOLDERS = {
    "flickr8k": ("flickr8k/Flicker8k_Dataset", "flickr8k/images"),
    "coco": ("coco/val2014", "coco/train2014", "coco/images"),
}
SHOWN = 3  # how many missing images a message lists
#: how a task's recorded protocol names this image input
OWN_IMAGES = "image files, embedded by the model's own preprocessing and image tower (zero-shot)"


@dataclass(frozen=True)
class ImageSet:
    """The image files of a split, in split order, and the folder(s) they were found in."""

    folders: tuple[Path, ...]
    paths: tuple[Path, ...]

    def __len__(self) -> int:
        return len(self.paths)


def image_folders(data: DataRoot, dataset: str, given: str | os.PathLike | None) -> tuple[Path, ...]:
    """The folders to look for ``dataset``'s images in: ``given``, else the defaults present in the data root."""
    if given is not None:
        folder = Path(given).expanduser()
        if not folder.is_dir():
            raise BenchboxError(f"image folder {folder} not found: pass --images DIR, a folder holding the image files")
        return (folder,)
    found = tuple(data.root / rel for rel in DEFAULT_FOLDERS.get(dataset, ()) if (data.root / rel).is_dir())
    if not found:
        where = " or ".join(str(data.root / rel) for rel in DEFAULT_FOLDERS.get(dataset, ())) or str(data.root)
        raise BenchboxError(f"no {dataset} images: put the image files in {where}, or pass --images DIR")
    return found


def _index(folders: tuple[Path, ...]) -> dict[str, tuple[Path, list[Path]]]:
    """Normalised image id → the first folder with a file of that id, and every such file in it."""
    index: dict[str, tuple[Path, list[Path]]] = {}
    for folder in folders:
        found: dict[str, list[Path]] = {}
        for root, _, files in os.walk(folder):
            for name in files:
                if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS:
                    found.setdefault(normalise_id(name), []).append(Path(root) / name)
        for key, paths in found.items():
            index.setdefault(key, (folder, sorted(paths)))
    return index


def image_file(image_id: str, folder: Path, paths: list[Path]) -> Path:
    """The one file of ``image_id`` among ``paths`` under ``folder``, checked without opening it (module
    docstring); every refusal is one line naming the file."""
    if len(paths) > 1:
        raise BenchboxError(f"image {image_id} names two files under {folder}: {paths[0]} and {paths[1]}; rename or "
                            "remove one, so that each image id names one file")
    path = paths[0]
    if path.is_symlink() and not path.resolve().is_relative_to(folder.resolve()):
        raise BenchboxError(f"image {path} is a link to {path.resolve()}, outside {folder}: copy the image file into "
                            "the folder, or pass --images with the folder that holds it")
    try:
        info = path.stat()
    except OSError as exc:
        raise BenchboxError(f"cannot read image {path} ({exc.strerror}): replace or remove it") from None
    if not stat.S_ISREG(info.st_mode):
        raise BenchboxError(f"image {path} is {file_kind(info.st_mode)}, not a regular file: replace it with the image "
                            "file")
    limit = max_image_bytes()
    if info.st_size > limit:
        raise BenchboxError(f"image {path} has {info.st_size / 1e6:,.1f} MB, over the limit of {limit / 1e6:,.0f} MB "
                            f"for an image file: shrink it, or raise ${IMAGE_ENV_VAR}")
    return path


def find_images(data: DataRoot, dataset: str, image_ids: list[str], given: str | os.PathLike | None) -> ImageSet:
    """The file of every image in ``image_ids`` (:func:`image_folders`); a missing one, or one that
    :func:`image_file` refuses, is a one-line error."""
    folders = image_folders(data, dataset, given)
    index = _index(folders)
    missing = [i for i in image_ids if normalise_id(i) not in index]
    if missing:
        shown = ", ".join(missing[:SHOWN]) + (f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else "")
        raise BenchboxError(f"image {shown} ({len(missing)} of {len(image_ids)} {dataset} images) not found under "
                            f"{', '.join(map(str, folders))}: add the files, or pass --images DIR")
    return ImageSet(folders, tuple(image_file(i, *index[normalise_id(i)]) for i in image_ids))


def load_image(encoder: VisionLanguageEncoder, path: Path) -> np.ndarray:
    """One image file decoded (RGB) and preprocessed by ``encoder``; an unreadable file is a one-line error."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            rgb = image.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
        raise BenchboxError(f"cannot read image {path} ({type(exc).__name__}: {exc}): replace or remove it") from None
    return np.asarray(encoder.preprocess_image(rgb), dtype=np.float32)


def encode_files(
    encoder: VisionLanguageEncoder,
    paths: list[Path],
    *,
    batch_size: int,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """float32 [len(paths), dim]: the files decoded by ``workers`` threads, embedded ``batch_size`` at a time
    (the next batch decodes while the current one is embedded)."""
    batches = [paths[start : start + batch_size] for start in range(0, len(paths), batch_size)]
    out = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = [pool.submit(load_image, encoder, p) for p in batches[0]] if batches else []
        for k in range(len(batches)):
            current = pending
            pending = [pool.submit(load_image, encoder, p) for p in batches[k + 1]] if k + 1 < len(batches) else []
            pixels = np.stack([future.result() for future in current])
            out.append(check_image_output(encoder.encode_images(pixels), len(current), encoder.name, encoder.dim))
            if progress:
                progress(sum(map(len, out)), len(paths))
    return np.concatenate(out) if out else np.zeros((0, encoder.dim), np.float32)


def image_embedder(
    encoder: VisionLanguageEncoder,
    data: DataRoot,
    cache: EmbeddingCache | None,
    *,
    batch_size: int = 128,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Callable[[ImageSet], np.ndarray]:
    """``embed(images) -> float32 [len(images), dim]``: ``encoder``'s image side behind the embedding cache
    (keyed by each file's sha256, from ``data``'s checksum memo), with progress; see the module docstring."""
    from benchbox.threads import threads_in_use

    threads = workers or threads_in_use() or os.cpu_count() or 1

    def encode(paths: list[Path]) -> np.ndarray:
        return encode_files(encoder, paths, batch_size=batch_size, workers=threads, progress=progress)

    def embed(images: ImageSet) -> np.ndarray:
        if cache is None or not encoder.cacheable:
            return encode(list(images.paths))
        checksums = [data.checksum(p) for p in images.paths]
        by_checksum = dict(zip(checksums, images.paths))
        return cache.embed(image_cache_key(encoder), checksums, lambda keys: encode([by_checksum[k] for k in keys]),
                           computation(encoder))

    return embed


def own_image_embeddings(task: Any, encoder: VisionLanguageEncoder, ctx: EvalContext, image_ids: list[str],
                         folder: str | None) -> tuple[np.ndarray, list[Path]]:
    """``encoder``'s embeddings of the image files of ``task``'s split (``folder``, else the dataset's folder
    under the data root) in split order, and the files read (for the run's data checksums)."""
    if ctx.embed_images is None:
        raise BenchboxError(f"{task.name}: this evaluation has no image embedder for {encoder.name}; run the task "
                            "through benchbox.run_tasks")
    images = find_images(ctx.data, task.dataset, image_ids, folder)
    ctx.log(f"{task.name}: {len(images)} image files under {', '.join(map(str, images.folders))}")
    return ctx.embed_images(images), list(images.paths)

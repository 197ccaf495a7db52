"""ResNet-152 image features for the grounded encoders (docs/protocols.md#image-features; Merkx & Frank 2019 §3).

Per image: resize the shorter side to 256 (bilinear), take ten 224×224 crops — the four corners and the centre,
and the same five of the horizontally mirrored image (the 10-crop test protocol of Krizhevsky et al. 2012,
torchvision's ``TenCrop``) — normalise with the ImageNet mean/std, run each crop through ResNet-152 (He et al.
2016) up to its penultimate layer (global average pooling, 2048-d), and average the ten vectors.

Weights: ``imagenet`` (torchvision's ``ResNet152_Weights.IMAGENET1K_V1`` from its normal cache, downloaded
when absent), a local state-dict file (loaded with ``torch.load(weights_only=True)``), or ``random``
(seeded random initialisation — for testing only; such features carry no visual information).

Output: an image-features file (:mod:`benchbox.data.image_features`) with ids = image file names (e.g.
``27782020_4dab210360.jpg``) and metadata naming the weights, layer and crop protocol. Results are saved
every ``save_every_s`` seconds and when the run stops (also on Ctrl-C), with ``"complete": false`` until
every image is done; ``resume=True`` keeps the rows already in the file and computes only the others.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torchvision
from PIL import Image, UnidentifiedImageError
from torch import nn
from torchvision import transforms

from benchbox.console import log
from benchbox.storage.checksums import sha256_file
from benchbox.device import resolve_device
from benchbox.processes import safe_start_method
from benchbox.errors import BenchboxError
from benchbox.data.image_features import IMAGE_EXTENSIONS, normalise_id, read_features, save_features

FORMAT = "benchbox-image-features/1"
LAYER = "resnet152 penultimate layer (global average pool, 2048-d)"
CROP_PROTOCOL = (
    "resize shorter side to 256 (bilinear, antialiased); ten 224x224 crops: 4 corners + centre of the image and "
    "of its horizontal mirror (torchvision TenCrop); ImageNet mean/std normalisation; mean over the 10 crops"
)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
RANDOM_SEED = 0
DOWNLOAD_TIMEOUT_S = 30.0
IMAGENET_WEIGHTS = torchvision.models.ResNet152_Weights.IMAGENET1K_V1


@dataclass
class FeatureModel:
    """A network mapping crops [B, 3, 224, 224] to vectors [B, D], and the identity of its weights."""

    net: nn.Module
    weights: str


class TenCropTransform:
    """PIL RGB image → the ten normalised crops [10, 3, 224, 224] of :data:`CROP_PROTOCOL`.

    Resizing and cropping are torchvision's ``Resize(256)`` and ``TenCrop(224)``; the conversion to floats
    (``/ 255``, then ``(x - mean) / std``, as ``ToTensor`` + ``Normalize``) is done in numpy on all ten crops
    at once, which is much faster than per-crop tensor ops on a busy CPU. A plain class (no closure), so a
    loader worker started by forkserver or spawn can unpickle it.
    """

    def __init__(self) -> None:
        self.crop = transforms.Compose([transforms.Resize(256), transforms.TenCrop(224)])
        self.mean = np.asarray(IMAGENET_MEAN, dtype=np.float32)
        self.std = np.asarray(IMAGENET_STD, dtype=np.float32)

    def __call__(self, image: Image.Image) -> torch.Tensor:
        crops = self.crop(image)
        pixels = np.stack([np.asarray(c, dtype=np.uint8) for c in crops]).astype(np.float32) / np.float32(255)
        return torch.from_numpy(np.ascontiguousarray(((pixels - self.mean) / self.std).transpose(0, 3, 1, 2)))


@contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(previous)


def _pretrained() -> nn.Module:
    spec = IMAGENET_WEIGHTS
    try:
        with _socket_timeout(DOWNLOAD_TIMEOUT_S):
            return torchvision.models.resnet152(weights=spec)
    except (OSError, RuntimeError) as exc:  # URLError/timeouts are OSErrors; a bad cached file a RuntimeError
        raise BenchboxError(
            f"could not get the pretrained ResNet-152 weights ({spec.url}): {exc}. Offline, download that file "
            f"elsewhere and pass --weights PATH (or put it in torch's hub cache, {torch.hub.get_dir()}/checkpoints)"
        ) from exc


def _from_file(path: Path) -> nn.Module:
    if not path.is_file():
        raise BenchboxError(f"weights file {path} not found (pass a ResNet-152 state dict, 'imagenet' or 'random')")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError or EOFError for unusable files
        raise BenchboxError(f"{path}: not a loadable state dict ({type(exc).__name__}: {exc})") from exc
    if not isinstance(state, dict):
        raise BenchboxError(f"{path}: expected a ResNet-152 state dict (name → tensor), found {type(state).__name__}")
    net = torchvision.models.resnet152(weights=None)
    try:
        net.load_state_dict(state)
    except RuntimeError as exc:
        raise BenchboxError(f"{path}: not a torchvision ResNet-152 state dict: {str(exc)[:400]}") from exc
    return net


def load_resnet152(weights: str) -> FeatureModel:
    """ResNet-152 without its classifier (outputs the 2048-d pooled features), in eval mode.

    ``weights``: ``"imagenet"``, ``"random"`` (testing only) or a path to a state dict.
    """
    if weights == "imagenet":
        net = _pretrained()
        identity = f"torchvision ResNet152_Weights.IMAGENET1K_V1 ({IMAGENET_WEIGHTS.url})"
    elif weights == "random":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(RANDOM_SEED)
            net = torchvision.models.resnet152(weights=None)
        identity = f"random initialisation (torch seed {RANDOM_SEED}) - FOR TESTING ONLY, not visual features"
    else:
        path = Path(weights)
        net, identity = _from_file(path), f"file {path.name} sha256 {sha256_file(path)}"
    net.fc = nn.Identity()
    return FeatureModel(net.eval(), identity)


def list_images(directory: Path) -> dict[str, Path]:
    """Image id (file name) → path, for every .jpg/.jpeg/.png under ``directory`` (recursively), sorted by id."""
    if not directory.is_dir():
        raise BenchboxError(f"image folder {directory} not found")
    found: dict[str, Path] = {}
    seen: dict[str, Path] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in IMAGE_EXTENSIONS:
            continue
        key = normalise_id(path.name)
        if key in seen:
            raise BenchboxError(f"two images share the id {key!r}: {seen[key]} and {path}; image ids must be unique")
        seen[key] = path
        found[path.name] = path
    if not found:
        raise BenchboxError(f"no images (.jpg/.jpeg/.png) under {directory}")
    return dict(sorted(found.items()))


class TenCropImages(torch.utils.data.Dataset):
    """Ten-crop tensors of image files; an unreadable file yields its error text instead of raising."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.transform = TenCropTransform()

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> tuple[int, torch.Tensor | None, str | None]:
        try:
            with Image.open(self.paths[i]) as image:
                return i, self.transform(image.convert("RGB")), None
        except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
            return i, None, f"{type(exc).__name__}: {exc}"


def _collate(items: list[tuple[int, torch.Tensor | None, str | None]]) -> list:
    return items


@dataclass
class ExtractionSummary:
    total: int
    computed: int
    reused: int
    skipped: list[str]
    seconds: float


def _metadata(model: FeatureModel, complete: bool, skipped: list[str]) -> dict:
    return {"format": FORMAT, "layer": LAYER, "weights": model.weights, "crops": CROP_PROTOCOL,
            "torchvision": torchvision.__version__, "complete": complete, "unreadable": skipped}


def _previous(out: Path, model: FeatureModel, resume: bool) -> dict[str, np.ndarray]:
    exists = out.is_file()
    if exists and not resume:
        raise BenchboxError(f"{out} already exists: pass --resume to continue it, or remove it to start afresh")
    if not exists:
        return {}
    ids, matrix, meta = read_features(out)
    wanted = _metadata(model, False, [])
    for key in ("layer", "weights", "crops"):
        if meta.get(key) != wanted[key]:
            raise BenchboxError(
                f"cannot resume {out}: it was made with {key} {meta.get(key)!r}, this run uses "
                f"{wanted[key]!r}; write to a new --out file"
            )
    return dict(zip(ids, matrix))


def extract_features(
    images: Path,
    out: Path,
    model: FeatureModel,
    *,
    batch_size: int = 16,
    device: str = "auto",
    resume: bool = False,
    workers: int = 0,
    skip_unreadable: bool = False,
    save_every_s: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
    named: dict[str, Path] | None = None,
) -> ExtractionSummary:
    """Features of every image under ``images`` (or of ``named``, id → image file) into ``out`` (see the module
    docstring for the protocol)."""
    if batch_size < 1:
        raise BenchboxError("--batch-size must be at least 1")
    start = time.perf_counter()
    all_images = list_images(images) if named is None else named
    done = _previous(out, model, resume)
    done_keys = {normalise_id(name) for name in done}
    todo = [name for name in all_images if normalise_id(name) not in done_keys]
    reused = len(all_images) - len(todo)
    if reused:
        log(f"resuming {out}: {reused} of {len(all_images)} images already done")
    target = resolve_device(device)
    net = model.net.to(target)
    loader = torch.utils.data.DataLoader(
        TenCropImages([all_images[n] for n in todo]), batch_size=batch_size, num_workers=workers, collate_fn=_collate,
        multiprocessing_context=safe_start_method() if workers else None,
    )
    skipped: list[str] = []
    last_save = time.perf_counter()

    def save(complete: bool) -> None:
        names = list(done)
        matrix = np.stack([done[n] for n in names]) if names else np.empty((0, 0), np.float32)
        save_features(out, names, matrix, metadata=_metadata(model, complete, skipped))

    computed = 0
    try:
        with torch.inference_mode():
            for batch in loader:
                for i, _, error in batch:
                    if error is not None:
                        if not skip_unreadable:
                            raise BenchboxError(f"cannot read image {all_images[todo[i]]}: {error} "
                                                "(remove it, or pass --skip-unreadable)")
                        log(f"warning: skipping unreadable image {all_images[todo[i]]}: {error}")
                        skipped.append(todo[i])
                good = [(i, crops) for i, crops, _ in batch if crops is not None]
                if good:
                    crops = torch.cat([c for _, c in good]).to(target)
                    vectors = net(crops).float().view(len(good), 10, -1).mean(dim=1).cpu().numpy()
                    for (i, _), vector in zip(good, vectors):
                        done[todo[i]] = vector
                    computed += len(good)
                if progress:
                    progress(reused + computed + len(skipped), len(all_images))
                if time.perf_counter() - last_save >= save_every_s:
                    save(complete=False)
                    last_save = time.perf_counter()
    except BaseException:  # an error or Ctrl-C: keep what was computed, for --resume
        if computed:
            save(complete=False)
        raise
    save(complete=computed == len(todo))  # every image in the folder has its features
    return ExtractionSummary(len(all_images), computed, reused, skipped, time.perf_counter() - start)

"""ResNet-152 10-crop feature extraction: the crop protocol computed independently, the real ResNet-152 path
with random weights (saved to and loaded from a state-dict file), resume, unreadable images, offline errors.

The real ResNet-152 runs on 3 images in all (about a minute on a loaded 2-core CPU); the bookkeeping tests
(resume, skipping, periodic saves) use a tiny convolutional net with the same interface.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision
from PIL import Image, ImageOps
from torch import nn
from torchvision import transforms
from typer.testing import CliRunner

from benchbox.data import feature_extraction as fx
from benchbox.cli import app
from benchbox.device import resolve_device
from benchbox.errors import BenchboxError
from benchbox.data.image_features import load_features, read_features

REAL_IMAGE = Path(os.environ.get("BENCHBOX_DATA", "/nonexistent")) / "flickr8k/images/27782020_4dab210360.jpg"
MEAN = np.asarray([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.asarray([0.229, 0.224, 0.225], dtype=np.float32)


def real_image() -> Path:
    if not REAL_IMAGE.is_file():
        pytest.skip(f"the real Flickr8k image {REAL_IMAGE} is not present: set BENCHBOX_DATA")
    return REAL_IMAGE


def generate_images(folder: Path, n: int, seed: int = 0) -> list[str]:
    """``n`` random images of varied size and mode (RGB/L/RGBA, jpg/png), as Flickr8k-like names."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for k in range(n):
        h, w = (int(v) for v in rng.integers(230, 420, size=2))
        mode, ext = [("RGB", "jpg"), ("L", "jpg"), ("RGBA", "png")][k % 3]
        pixels = rng.integers(0, 256, size=(h, w, len(mode)), dtype=np.uint8)
        image = Image.fromarray(pixels.squeeze(-1) if mode == "L" else pixels, mode)
        name = f"{1000 + k}_gen{seed}.{ext}"
        image.save(folder / name)
        names.append(name)
    return sorted(names)


def explicit_ten_crops(path: Path) -> torch.Tensor:
    """The protocol written out by hand: shorter side → 256, corners + centre 224, the same on the mirror."""
    with Image.open(path) as raw:
        image = raw.convert("RGB")
    w, h = image.size
    size = (256, int(256 * h / w)) if w <= h else (int(256 * w / h), 256)
    image = image.resize(size, Image.BILINEAR)
    w, h = image.size
    top, left = int(round((h - 224) / 2)), int(round((w - 224) / 2))
    corners = [(0, 0), (w - 224, 0), (0, h - 224), (w - 224, h - 224), (left, top)]
    crops = []
    for view in (image, ImageOps.mirror(image)):
        for x, y in corners:
            pixels = np.asarray(view.crop((x, y, x + 224, y + 224)), dtype=np.float32) / 255.0
            crops.append(((pixels - MEAN) / STD).transpose(2, 0, 1))
    return torch.from_numpy(np.stack(crops))


class TinyNet(nn.Module):
    """A small seeded conv net [B, 3, 224, 224] → [B, 6]; counts the crops it has seen."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(3, 6, kernel_size=16, stride=16)
        self.crops_seen = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.crops_seen += x.shape[0]
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


def tiny() -> fx.FeatureModel:
    return fx.FeatureModel(TinyNet().eval(), "tiny test net")


def test_ten_crop_transform_is_the_protocol():
    path = real_image()
    with Image.open(path) as image:
        got = fx.TenCropTransform()(image.convert("RGB"))
    assert got.shape == (10, 3, 224, 224) and got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), explicit_ten_crops(path).numpy(), atol=1e-5)  # same crops, same order
    tensor = transforms.Compose([transforms.ToTensor(), transforms.Normalize(fx.IMAGENET_MEAN, fx.IMAGENET_STD)])
    with Image.open(path) as image:
        reference = torch.stack([tensor(c) for c in transforms.TenCrop(224)(transforms.Resize(256)(image.convert("RGB")))])
    assert torch.equal(got, reference)  # bit-identical to torchvision's ToTensor + Normalize


@pytest.fixture(scope="module")
def resnet_run(tmp_path_factory):
    """The CLI on the real image + one generated image, ResNet-152 weights loaded from a saved state dict of the
    seeded random initialisation."""
    root = tmp_path_factory.mktemp("resnet")
    images = root / "images"
    generate_images(images, 1)
    shutil.copy(real_image(), images / REAL_IMAGE.name)
    torch.manual_seed(fx.RANDOM_SEED)
    torch.save(torchvision.models.resnet152(weights=None).state_dict(), root / "random.pt")
    out = root / "feats.h5"
    result = CliRunner().invoke(app, ["features", "extract", "--images", str(images), "--out", str(out),
                                      "--weights", str(root / "random.pt"), "--batch-size", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    return out, root / "random.pt"


@pytest.mark.realdata
def test_resnet152_features_are_the_ten_crop_mean_of_the_penultimate_layer(resnet_run):
    out, weights_file = resnet_run
    ids, features, meta = read_features(out)
    assert ids == ["1000_gen0.jpg", REAL_IMAGE.name] and features.shape == (2, 2048)
    assert np.isfinite(features).all() and not np.allclose(features[0], features[1])
    assert meta["weights"].startswith("file random.pt sha256 ") and meta["complete"] is True
    assert meta["crops"] == fx.CROP_PROTOCOL and "2048" in meta["layer"]
    model = fx.load_resnet152("random")  # the same seeded init, independently of the file
    assert "FOR TESTING ONLY" in model.weights
    with torch.inference_mode():
        per_crop = model.net(explicit_ten_crops(REAL_IMAGE))
    assert per_crop.shape == (10, 2048)
    np.testing.assert_allclose(features[1], per_crop.mean(dim=0).numpy(), rtol=1e-4, atol=1e-4 * float(per_crop.abs().max()))
    np.testing.assert_allclose(load_features(out, ["27782020_4dab210360"], expected_dim=2048), features[1:])


def test_weights_file_errors(tmp_path):
    with pytest.raises(BenchboxError, match="weights file .* not found"):
        fx.load_resnet152(str(tmp_path / "none.pt"))
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(BenchboxError, match="not a loadable state dict"):
        fx.load_resnet152(str(tmp_path / "junk.pt"))
    torch.save([torch.zeros(1)], tmp_path / "list.pt")
    with pytest.raises(BenchboxError, match="expected a ResNet-152 state dict .* found list"):
        fx.load_resnet152(str(tmp_path / "list.pt"))
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), tmp_path / "r18.pt")
    with pytest.raises(BenchboxError, match="not a torchvision ResNet-152 state dict"):
        fx.load_resnet152(str(tmp_path / "r18.pt"))


def test_offline_pretrained_weights_say_to_pass_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))  # an empty cache: torchvision must download
    timeouts = []

    def offline(*args, **kwargs):
        timeouts.append(socket.getdefaulttimeout())
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    with pytest.raises(BenchboxError, match=r"could not get the pretrained ResNet-152 weights .*pass --weights PATH"):
        fx.load_resnet152("imagenet")
    assert timeouts and timeouts[0] == fx.DOWNLOAD_TIMEOUT_S  # a download never waits forever
    assert socket.getdefaulttimeout() is None  # and the global default is restored


def test_tiny_net_output_is_the_ten_crop_mean_and_deterministic(tmp_path):
    names = generate_images(tmp_path / "images", 3)
    model = tiny()
    fx.extract_features(tmp_path / "images", tmp_path / "a.npy", model, batch_size=2)
    fx.extract_features(tmp_path / "images", tmp_path / "b.npz", tiny(), batch_size=3, workers=1)
    ids, a, meta = read_features(tmp_path / "a.npy")
    assert ids == names and a.shape == (3, 6) and model.net.crops_seen == 30
    assert meta["weights"] == "tiny test net" and meta["complete"] is True
    np.testing.assert_allclose(read_features(tmp_path / "b.npz")[1], a, rtol=1e-6)
    for name, row in zip(names, a):
        with torch.inference_mode():
            expected = TinyNet()(explicit_ten_crops(tmp_path / "images" / name)).mean(dim=0).numpy()
        np.testing.assert_allclose(row, expected, rtol=1e-5, atol=1e-6)


def test_interrupted_run_resumes_to_the_uninterrupted_result(tmp_path):
    images = tmp_path / "images"
    generate_images(images, 5)
    fx.extract_features(images, tmp_path / "full.npz", tiny(), batch_size=2)
    out = tmp_path / "part.npz"
    rows_seen_at_call = []

    def interrupt(done, total):
        rows_seen_at_call.append(len(read_features(out)[0]) if out.is_file() else 0)
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fx.extract_features(images, out, tiny(), batch_size=2, save_every_s=0.0, progress=interrupt)
    assert rows_seen_at_call == [0, 2]  # saved after every batch (save_every_s=0)
    ids, _, meta = read_features(out)
    assert len(ids) == 4 and meta["complete"] is False  # the interrupted batch's results were kept

    with pytest.raises(BenchboxError, match="already exists: pass --resume"):
        fx.extract_features(images, out, tiny())
    with pytest.raises(BenchboxError, match="cannot resume .* made with weights 'tiny test net'"):
        fx.extract_features(images, out, fx.FeatureModel(TinyNet(), "other weights"), resume=True)
    model = tiny()
    summary = fx.extract_features(images, out, model, batch_size=2, resume=True)
    assert (summary.computed, summary.reused, model.net.crops_seen) == (1, 4, 10)
    full_ids, full, _ = read_features(tmp_path / "full.npz")
    ids, resumed, meta = read_features(out)
    assert meta["complete"] is True and sorted(ids) == full_ids
    np.testing.assert_allclose(load_features(out, full_ids), full, rtol=1e-6)
    summary = fx.extract_features(images, out, tiny(), resume=True)  # nothing left to do
    assert (summary.computed, summary.reused) == (0, 5)


def test_unreadable_image_stops_or_is_skipped(tmp_path):
    images = tmp_path / "images"
    generate_images(images, 2)
    (images / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    with pytest.raises(BenchboxError, match=r"cannot read image .*broken\.jpg.*--skip-unreadable"):
        fx.extract_features(images, tmp_path / "a.npz", tiny())
    summary = fx.extract_features(images, tmp_path / "b.npz", tiny(), skip_unreadable=True)
    ids, _, meta = read_features(tmp_path / "b.npz")
    assert summary.skipped == ["broken.jpg"] and "broken.jpg" not in ids and len(ids) == 2
    assert meta["unreadable"] == ["broken.jpg"] and meta["complete"] is False


def test_image_folder_checks(tmp_path):
    with pytest.raises(BenchboxError, match="image folder .* not found"):
        fx.list_images(tmp_path / "nope")
    (tmp_path / "notes.txt").write_text("not an image")
    with pytest.raises(BenchboxError, match="no images"):
        fx.list_images(tmp_path)
    generate_images(tmp_path / "a", 1)
    generate_images(tmp_path / "b", 1)
    with pytest.raises(BenchboxError, match="two images share the id '1000_gen0'"):
        fx.list_images(tmp_path)
    with pytest.raises(BenchboxError, match="--batch-size must be at least 1"):
        fx.extract_features(tmp_path / "a", tmp_path / "x.npz", tiny(), batch_size=0)
    with pytest.raises(BenchboxError, match="unknown device 'gpu0'"):
        resolve_device("gpu0")


def test_cli_refuses_to_overwrite_without_resume(tmp_path):
    generate_images(tmp_path / "images", 1)
    (tmp_path / "f.npz").write_bytes(b"")
    result = CliRunner().invoke(app, ["features", "extract", "--images", str(tmp_path / "images"),
                                      "--out", str(tmp_path / "f.npz"), "--weights", "random", "--quiet"])
    assert isinstance(result.exception, BenchboxError) and "already exists" in str(result.exception)

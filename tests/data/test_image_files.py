"""Image folders are read safely (issue #40): only regular files, never opened when they are not (a FIFO, or a link
to ``/dev/zero``, hung retrieval for ever), links only to files inside the folder, a size limit, and one image id
naming two files refused with both paths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchbox.data.image_files import find_images
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from tests.vl_models import flickr8k_root, save_tiny_clip

ROOT = Path(__file__).resolve().parents[2]
#: how long a check that must never open a file may take before the test calls it a hang
PATIENCE_S = 60


def _folder(tmp_path: Path, names: tuple[str, ...] = ("a.jpg", "b.jpg")) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"\xff\xd8 not decoded by the checks")
    return folder


def _find(tmp_path: Path, folder: Path, ids: list[str]):
    """find_images in a thread, so that a check that opened a FIFO fails the test instead of hanging it."""
    outcome: list = []

    def run():
        try:
            outcome.append(find_images(DataRoot(tmp_path), "flickr8k", ids, folder))
        except BenchboxError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(PATIENCE_S)
    assert outcome, f"find_images did not return within {PATIENCE_S} s"
    return outcome[0]


def test_a_fifo_is_refused_without_being_opened(tmp_path):
    folder = _folder(tmp_path)
    os.mkfifo(folder / "c.jpg")
    refused = _find(tmp_path, folder, ["a.jpg", "c.jpg"])
    assert isinstance(refused, BenchboxError)
    assert str(refused) == f"image {folder / 'c.jpg'} is a FIFO, not a regular file: replace it with the image file"


def test_a_link_out_of_the_folder_is_refused(tmp_path):
    folder = _folder(tmp_path)
    (folder / "zero.jpg").symlink_to("/dev/zero")
    (tmp_path / "outside.jpg").write_bytes(b"elsewhere")
    (folder / "out.jpg").symlink_to(tmp_path / "outside.jpg")
    for name, target in (("zero.jpg", "/dev/zero"), ("out.jpg", tmp_path / "outside.jpg")):
        refused = _find(tmp_path, folder, [name])
        assert isinstance(refused, BenchboxError)
        assert str(refused) == (f"image {folder / name} is a link to {target}, outside {folder}: copy the image file "
                                "into the folder, or pass --images with the folder that holds it")


def test_a_link_to_a_file_inside_the_folder_is_read(tmp_path):
    folder = _folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "alias.jpg").symlink_to(folder / "a.jpg")
    (folder / "sub" / "fifo-alias.jpg").symlink_to(folder / "pipe")
    os.mkfifo(folder / "pipe")
    assert _find(tmp_path, folder, ["alias.jpg", "b"]).paths == (folder / "sub" / "alias.jpg", folder / "b.jpg")
    refused = _find(tmp_path, folder, ["fifo-alias.jpg"])
    assert str(refused).endswith("fifo-alias.jpg is a FIFO, not a regular file: replace it with the image file")


def test_one_id_naming_two_files_is_refused_with_both_paths(tmp_path):
    folder = _folder(tmp_path)
    for sub in ("x", "y"):
        (folder / sub).mkdir()
        (folder / sub / "same.jpg").write_bytes(b"one of two")
    (folder / "pair.png").write_bytes(b"png")
    (folder / "pair.jpg").write_bytes(b"jpg")
    refused = _find(tmp_path, folder, ["a.jpg", "same.jpg"])
    assert str(refused) == (f"image same.jpg names two files under {folder}: {folder / 'x/same.jpg'} and "
                            f"{folder / 'y/same.jpg'}; rename or remove one, so that each image id names one file")
    assert f"{folder / 'pair.jpg'} and {folder / 'pair.png'}" in str(_find(tmp_path, folder, ["pair"]))
    assert _find(tmp_path, folder, ["a", "b"]).paths == (folder / "a.jpg", folder / "b.jpg")  # the others still read


def test_an_image_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    (folder / "big.jpg").write_bytes(b"\0" * 1_500_000)
    assert _find(tmp_path, folder, ["big.jpg"]).paths == (folder / "big.jpg",)  # under the default 50 MB
    monkeypatch.setenv("BENCHBOX_MAX_IMAGE_MB", "1")
    assert str(_find(tmp_path, folder, ["big.jpg"])) == (
        f"image {folder / 'big.jpg'} has 1.5 MB, over the limit of 1 MB for an image file: shrink it, or raise "
        "$BENCHBOX_MAX_IMAGE_MB")
    monkeypatch.setenv("BENCHBOX_MAX_IMAGE_MB", "huge")
    with pytest.raises(BenchboxError, match=r"\$BENCHBOX_MAX_IMAGE_MB must be a positive whole number of megabytes"):
        find_images(DataRoot(tmp_path), "flickr8k", ["a.jpg"], folder)


def test_retrieval_with_a_fifo_among_the_images_ends_in_one_line(tmp_path):
    root, ids = flickr8k_root(tmp_path / "root", n_images=4)
    model = save_tiny_clip(tmp_path / "clip")
    folder = root / "flickr8k/Flicker8k_Dataset"
    (folder / ids[1]).unlink()
    os.mkfifo(folder / ids[1])
    try:
        done = subprocess.run([sys.executable, "-m", "benchbox", "eval", "clip", "-e", f"model={model}", "-t",
                               "retrieval", "--data-dir", str(root), "--no-save", "--no-cache"],
                              capture_output=True, text=True, cwd=ROOT, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("benchbox eval hung on a FIFO among the images")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (f"error: image {folder / ids[1]} is a FIFO, not a regular file: "
                                                    "replace it with the image file")

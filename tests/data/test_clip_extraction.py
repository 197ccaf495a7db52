"""``benchbox features extract --clips``: frame images in clip folders → the clip file that ``--visual frame |
average | attention`` reads; each frame the image protocol's vector, clips of different lengths kept as they are,
malformed folders refused in one line. The bookkeeping runs on the tiny conv net of the image-features tests; the
command itself on the seeded random ResNet-152 (slow)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.data.clip_extraction import extract_clip_features, frames_file, list_clip_frames
from benchbox.data.clip_features import load_clips
from benchbox.data.feature_extraction import extract_features
from benchbox.data.image_features import load_features
from benchbox.errors import BenchboxError
from benchbox.training.clips import average_frames, fixed_clip_vectors
from tests.data.test_feature_extraction import generate_images, tiny


def _clip_folder(root: Path, frames: dict[str, int]) -> Path:
    """``root``/<clip>/frame_NNN.<ext> with ``frames[clip]`` generated frames each."""
    for seed, (clip, n) in enumerate(frames.items()):
        generate_images(root / "tmp", n, seed=seed)
        for k, made in enumerate(sorted((root / "tmp").iterdir())):
            (root / clip).mkdir(parents=True, exist_ok=True)
            made.rename(root / clip / f"frame_{k:03d}{made.suffix}")
        shutil.rmtree(root / "tmp")
    return root


def test_clip_file_holds_every_frame_of_every_clip_in_file_name_order(tmp_path):
    folder = _clip_folder(tmp_path / "frames", {"-4wsuPCjDBc_5_15": 3, "vidB_0_4": 1, "vidC": 2})
    out = tmp_path / "clips.npz"
    summary = extract_clip_features(folder, out, tiny(), batch_size=2)
    assert summary.computed == 6 and frames_file(out).is_file()
    clips = load_clips(out, ["vidB_0_4", "-4wsuPCjDBc_5_15", "vidC"])
    assert clips.counts.tolist() == [1, 3, 2] and clips.frames.shape == (3, 3, 6)
    for i, clip in enumerate(["vidB_0_4", "-4wsuPCjDBc_5_15", "vidC"]):  # independently: the clip's own folder
        extract_features(folder / clip, tmp_path / f"{clip}.npz", tiny())
        names = [p.name for p in sorted((folder / clip).iterdir())]
        np.testing.assert_array_equal(clips.frames[i, : len(names)], load_features(tmp_path / f"{clip}.npz", names))
    np.testing.assert_array_equal(fixed_clip_vectors("frame", clips)[1], clips.frames[1, 0])  # F: frame_000
    np.testing.assert_allclose(average_frames(clips)[2], clips.frames[2, :2].mean(axis=0), rtol=1e-6)
    with pytest.raises(BenchboxError, match="already exists: pass --resume"):
        extract_clip_features(folder, out, tiny())
    again = extract_clip_features(folder, out, tiny(), resume=True)  # every frame kept from before
    assert (again.computed, again.reused) == (0, 6)
    np.testing.assert_array_equal(load_clips(out, ["vidC"]).frames, clips.frames[2:])


@pytest.mark.parametrize("make, message", [
    (lambda root: generate_images(root, 1), "is directly in .*one folder per clip, FOLDER/<clip id>/<frame images>"),
    (lambda root: generate_images(root / "a" / "deeper", 1), "more than one folder below"),
    (lambda root: (generate_images(root / "a", 1), (root / "empty").mkdir()),
     "1 clip folders hold no frame image .*\\['empty'\\]"),
    (lambda root: root.mkdir(), "no clip folders with frame images"),
    (lambda root: None, "frame folder .* not found"),
])
def test_a_malformed_frame_folder_is_one_line(tmp_path, make, message):
    root = tmp_path / "frames"
    make(root)
    with pytest.raises(BenchboxError, match=message) as error:
        list_clip_frames(root)
    assert "\n" not in str(error.value)


def test_two_suffixes_of_one_frame_and_an_unreadable_clip_are_refused(tmp_path):
    folder = _clip_folder(tmp_path / "frames", {"a": 2})
    (folder / "a" / "frame_000.png").write_bytes((folder / "a" / "frame_000.jpg").read_bytes())
    with pytest.raises(BenchboxError, match="a: frames \\['frame_000'\\] exist with two image suffixes"):
        list_clip_frames(folder)
    (folder / "a" / "frame_000.png").unlink()
    (folder / "broken").mkdir()
    (folder / "broken" / "frame_000.jpg").write_bytes(b"\xff\xd8 not a jpeg")
    with pytest.raises(BenchboxError, match="cannot read image .*broken/frame_000.jpg"):
        extract_clip_features(folder, tmp_path / "c.npz", tiny())
    with pytest.raises(BenchboxError, match="1 clips have no readable frame, e.g. \\['broken'\\]"):
        extract_clip_features(folder, tmp_path / "d.npz", tiny(), skip_unreadable=True)


def test_the_command_refuses_a_malformed_folder_before_loading_a_model(tmp_path):
    generate_images(tmp_path / "frames", 1)
    result = CliRunner().invoke(app, ["features", "extract", "--clips", "--images", str(tmp_path / "frames"),
                                      "--out", str(tmp_path / "clips.npz"), "--weights", str(tmp_path / "none.pt")])
    assert isinstance(result.exception, BenchboxError) and "is directly in" in str(result.exception)


@pytest.mark.slow
def test_the_command_writes_the_clip_file_training_reads(tmp_path):
    """The seeded random ResNet-152 on two clips of 2 and 1 frames: a clip file of 2048-d frames."""
    folder = _clip_folder(tmp_path / "frames", {"vidA": 2, "vidB": 1})
    out = tmp_path / "clips.h5"
    result = CliRunner().invoke(app, ["features", "extract", "--clips", "--images", str(folder), "--out", str(out),
                                      "--weights", "random", "--batch-size", "3", "--quiet"])
    assert result.exit_code == 0, result.output
    clips = load_clips(out, ["vidA", "vidB"])
    assert clips.frames.shape == (2, 2, 2048) and clips.counts.tolist() == [2, 1]
    frames = load_features(frames_file(out), ["vidA/frame_000.jpg", "vidA/frame_001.jpg", "vidB/frame_000.jpg"])
    np.testing.assert_array_equal(clips.frames[0], frames[:2])
    np.testing.assert_array_equal(clips.frames[1, 0], frames[2])

"""Video context (issue #30): clip-features files, Bordes et al.'s clip models F (first frame), A (frame average),
T (sentence-driven attention over frames) and R (random anchors), MSVD-format captions, and training on
generated clips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from benchbox.data.clip_features import Clips, load_clips, save_clips
from benchbox.encoders.frame_attention import FrameAttention
from benchbox.errors import BenchboxError
from benchbox.data.image_features import load_features, save_features
from benchbox.training.clips import (attended_clip_vectors, average_frames, caption_queries, clip_queries,
                                     first_frame, make_query_encoder, middle_frame)
from benchbox.training.config import TrainConfig
from benchbox.training.data import SplitData, TrainingData, random_anchors
from benchbox.training.distributed import Distributed
from benchbox.training.trainer import Trainer, build_net
from benchbox.data.video_captions import load_video_captions

TOPICS = ["dog", "car", "piano", "beach", "horse", "train", "guitar", "snow"]
VERBS = ["runs", "moves", "plays", "waits", "turns"]
DIM, FRAMES = 16, 4


def _word_vectors(folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A GloVe-format text file of one random 16-d vector per topic word (the other caption words are unknown,
    so a caption's query is its topic's vector)."""
    rng = np.random.default_rng(0)
    vectors = {w: rng.standard_normal(DIM).astype(np.float32) for w in TOPICS}
    path = folder / "words.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.7f}' for x in v)}\n" for w, v in vectors.items()))
    return path, vectors


def _planted_clips(n: int, seed: int, vectors: dict[str, np.ndarray]) -> tuple[list[str], list[str], Clips, np.ndarray]:
    """``n`` clips of 4 random frames, one of which (at a random position) is the clip's topic word vector plus a
    little noise; the clip's five captions name the topic. Returns ids, captions, clips, planted positions."""
    rng = np.random.default_rng(seed)
    ids, captions, frames, planted = [], [], [], []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        ids.append(f"clip{seed}_{i}")
        captions += [f"a {topic} {verb} ." for verb in VERBS]
        clip = rng.standard_normal((FRAMES, DIM))
        planted.append(rng.integers(FRAMES))
        clip[planted[-1]] = vectors[topic] + 0.1 * rng.standard_normal(DIM)
        frames.append(clip)
    return ids, captions, Clips(np.asarray(frames, np.float32), np.full(n, FRAMES, np.int64)), np.asarray(planted)


# ---------------------------------------------------------------- clip-features files
@pytest.mark.parametrize("suffix", [".npz", ".h5"])
def test_clip_file_round_trip_with_ragged_clips(tmp_path, suffix):
    frames = np.arange(3 * 3 * 2, dtype=np.float32).reshape(3, 3, 2)
    frames[0, 2] = np.nan  # padding of clip a (2 frames): never read, returned as zeros
    path = tmp_path / f"clips{suffix}"
    save_clips(path, ["a.jpg", "b", "c"], frames, counts=[2, 3, 1])
    clips = load_clips(path, ["c", "a", "b"])
    assert clips.counts.tolist() == [1, 2, 3] and clips.frames.dtype == np.float32
    np.testing.assert_array_equal(clips.frames[1], [frames[0, 0], frames[0, 1], [0, 0]])
    np.testing.assert_array_equal(clips.frames[0], [frames[2, 0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(clips.frames[2], frames[1])


def test_per_clip_hdf5_datasets_of_different_lengths(tmp_path):
    path = tmp_path / "clips.h5"
    with h5py.File(path, "w") as h5:
        h5["long"] = np.ones((3, 2), np.float32)
        h5["short"] = np.full((1, 2), 5.0, np.float32)
        h5["vector"] = np.array([7.0, 8.0], np.float32)
    clips = load_clips(path, ["short", "long", "vector"])
    assert clips.counts.tolist() == [1, 3, 1]
    np.testing.assert_array_equal(clips.frames[2], [[7, 8], [0, 0], [0, 0]])


@pytest.mark.parametrize("suffix", [".npz", ".npy", ".h5"])
def test_an_image_features_file_is_clips_of_one_frame(tmp_path, suffix):
    vectors = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    path = tmp_path / f"images{suffix}"
    save_features(path, ["w", "x", "y", "z"], vectors)
    clips = load_clips(path, ["y", "w"])
    assert clips.frames.shape == (2, 1, 5) and clips.counts.tolist() == [1, 1]
    np.testing.assert_array_equal(clips.frames[:, 0], load_features(path, ["y", "w"]))


def _npz(path: Path, **arrays) -> Path:
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("arrays, message", [
    (dict(ids=np.array(["a"]), features=np.zeros((1, 2, 3, 4), np.float32)), "2-D array"),
    (dict(ids=np.array(["a"]), features=np.zeros((1, 2, 3), np.int32)), "floating point"),
    (dict(ids=np.array(["a", "b"]), features=np.zeros((2, 0, 3), np.float32)), "no frames or no dimensions"),
    (dict(ids=np.array(["a", "b"]), features=np.zeros((2, 2, 3), np.float32), frames=np.array([2, 0])),
     "outside 1-2 \\(0 is an empty clip\\), e.g. row 1 with 0"),
    (dict(ids=np.array(["a", "b"]), features=np.zeros((2, 2, 3), np.float32), frames=np.array([3, 1])),
     "outside 1-2"),
    (dict(ids=np.array(["a", "b"]), features=np.zeros((2, 2, 3), np.float32), frames=np.array([1.0, 2.0])),
     "'frames' must be 2 integers"),
    (dict(ids=np.array(["a"]), features=np.zeros((2, 2, 3), np.float32)), "'ids' has 1 entries but 'features' has 2"),
    (dict(ids=np.array(["a", "a.jpg"]), features=np.zeros((2, 2, 3), np.float32)), "duplicate"),
    (dict(ids=np.array(["b", "c"]), features=np.zeros((2, 2, 3), np.float32)), "1 of the 1 requested clips have no frames"),
    (dict(ids=np.array(["a", "b"]), features=np.array([[[0, 0], [np.nan, 0]], [[1, 1], [1, 1]]], np.float32)),
     "1 requested clips have NaN or infinite frame features, e.g. \\['a'\\]"),
])
def test_bad_clip_files_are_one_clear_error(tmp_path, arrays, message):
    path = _npz(tmp_path / "bad.npz", **arrays)
    with pytest.raises(BenchboxError, match=message) as error:
        load_clips(path, ["a"])
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_an_empty_per_clip_dataset_is_an_error(tmp_path):
    path = tmp_path / "clips.h5"
    with h5py.File(path, "w") as h5:
        h5["a"] = np.ones((3, 2), np.float32)
        h5["b"] = np.ones((0, 2), np.float32)
    with pytest.raises(BenchboxError, match="1 clips have no frames \\(empty clip\\), e.g. \\['b'\\]"):
        load_clips(path, ["a"])


def test_a_three_d_array_given_as_image_features_names_the_clip_modes(tmp_path):
    path = _npz(tmp_path / "clips.npz", ids=np.array(["a"]), features=np.zeros((1, 2, 3), np.float32))
    with pytest.raises(BenchboxError, match="2-D array .*; a 3-D array is clips of frames .* --visual frame, average or attention"):
        load_features(path, ["a"])


# ---------------------------------------------------------------- F, A, T, R
def test_middle_frame_and_average_by_hand():
    frames = np.zeros((4, 4, 1), np.float32)
    frames[:, :, 0] = [[1, 9, 9, 9], [1, 2, 9, 9], [1, 2, 3, 9], [1, 2, 3, 4]]  # 9: padding past each count
    clips = Clips(np.where(np.arange(4)[None, :, None] < np.arange(1, 5)[:, None, None], frames, 0), np.arange(1, 5))
    assert middle_frame(clips)[:, 0].tolist() == [1, 1, 2, 2]  # row ⌊(n − 1)/2⌋: 0, 0, 1, 1
    np.testing.assert_allclose(average_frames(clips)[:, 0], [1, 1.5, 2, 2.5])


def test_attention_weights_sum_to_one_per_clip_and_skip_padding():
    torch.manual_seed(0)
    attention = FrameAttention(3, 5)
    torch.nn.init.normal_(attention.project.weight)
    frames, counts, queries = torch.randn(6, 4, 5), torch.tensor([1, 2, 3, 4, 4, 2]), torch.randn(6, 3)
    weights = attention.weights(frames, counts, queries)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(6))
    assert (weights[torch.arange(4)[None, :] >= counts[:, None]] == 0).all() and (weights[0, 0] == 1)
    # clip 3 by hand: the softmax of (W q) · x_f over its 4 frames, and the weighted sum of the frames
    torch.testing.assert_close(weights[3], torch.softmax(frames[3] @ (attention.project.weight @ queries[3]), 0))
    torch.testing.assert_close(attention(frames, counts, queries)[3], (weights[3, :, None] * frames[3]).sum(0))


def test_on_clips_of_one_frame_F_A_and_T_are_the_frame_exactly():
    frames = np.random.default_rng(2).standard_normal((5, 1, 7)).astype(np.float32)
    clips = Clips(frames, np.ones(5, np.int64))
    attention = FrameAttention(3, 7)
    torch.nn.init.normal_(attention.project.weight)
    queries = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    for vectors in (first_frame(clips), middle_frame(clips), average_frames(clips), attended_clip_vectors(attention, clips, queries)):
        np.testing.assert_array_equal(vectors, frames[:, 0])


def test_untrained_T_is_A_and_clip_queries_are_caption_means(tmp_path):
    words, vectors = _word_vectors(tmp_path)
    _, captions, clips, _ = _planted_clips(3, 0, vectors)
    queries = caption_queries(captions, make_query_encoder(str(words)))
    np.testing.assert_allclose(queries[0], vectors["dog"], rtol=1e-6)  # the only known word of "a dog runs ."
    per_clip = clip_queries(queries, 5)
    np.testing.assert_allclose(per_clip[1], queries[5:10].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(attended_clip_vectors(FrameAttention(DIM, DIM), clips, per_clip), average_frames(clips),
                               rtol=1e-6)  # W starts at zero: uniform weights


def _attention_trainer(tmp_path: Path, loss: str, epochs: int) -> tuple[Trainer, SplitData, np.ndarray]:
    words, vectors = _word_vectors(tmp_path)
    encoder = make_query_encoder(str(words))
    splits = []
    for n, seed in ((32, 1), (8, 2)):
        ids, captions, clips, planted = _planted_clips(n, seed, vectors)
        splits.append((SplitData(ids, captions, None, {}, clips=clips, queries=caption_queries(captions, encoder)),
                       planted))
    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="attention", features="generated.npz",
                         hidden=8, epochs=epochs, cycle_epochs=epochs, batch_size=8, loss=loss, lr_max=1e-2,
                         checkpoint_every=0)
    data = TrainingData(splits[0][0], splits[1][0], root="memory", features_sha256=None)
    torch.manual_seed(0)
    dist = Distributed()
    net = build_net(config, data, None, dist.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.resolved_lr_max)
    return Trainer(config, tmp_path / "run", data, net, optimizer, dist=dist), splits[0][0], splits[0][1]


def _planted_mass(trainer: Trainer, train: SplitData, planted: np.ndarray) -> float:
    """Mean attention weight, over the training captions, on their clip's planted frame."""
    rows = np.repeat(np.arange(len(train.image_ids)), 5)
    clips = train.clips.take(rows)
    with torch.no_grad():
        weights = trainer.net.frame_attention.weights(torch.from_numpy(clips.frames), torch.from_numpy(clips.counts),
                                                      torch.from_numpy(train.queries))
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(len(rows)))
    return float(weights[np.arange(len(rows)), planted[rows]].mean())


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("loss, epochs, reached", [("hinge-sum", 3, 0.35), ("bordes-p", 2, 0.6)])
def test_training_T_moves_attention_to_the_frame_of_the_planted_caption(tmp_path, loss, epochs, reached):
    """With the ranking loss (image branch) or the perceptual loss alone (Bordes et al.'s L_P on the attended
    vectors), 60 or 40 steps move the attention from uniform (0.25) toward the frame that is the caption's word
    (to 0.42 and 0.83 on one thread)."""
    trainer, train, planted = _attention_trainer(tmp_path, loss, epochs)
    assert _planted_mass(trainer, train, planted) == pytest.approx(0.25)
    trainer.run()
    assert _planted_mass(trainer, train, planted) > reached
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["visual"] == "attention" and manifest["encoder"]["config"]["clip_query_dim"] == DIM
    assert manifest["snapshots"][-1]["dev"]["t2i_r10"] > 0


# ---------------------------------------------------------------- MSVD captions
DESCRIPTIONS = """# MSVD English descriptions
# <video_id> <description>

vidA_1_5 a man is playing a guitar
vidA_1_5 someone plays guitar.
vidB_0_4 a dog runs
vidA_1_5 a man plays an instrument
vidA_1_5 a person is playing music
vidA_1_5 a guitarist performs
vidA_1_5 a sixth description
vidB_0_4\ta dog is running
vidB_0_4 the dog runs fast
vidB_0_4 a puppy runs
vidB_0_4 a dog runs on grass
"""


def _msvd(folder: Path, descriptions: str = DESCRIPTIONS, train: str = "vidB_0_4\nvidA_1_5\n", dev: str = "vidA_1_5\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AllVideoDescriptions.txt").write_text(descriptions, encoding="utf-8")
    (folder / "train.txt").write_text(train)
    (folder / "dev.txt").write_text(dev)
    return folder


def test_msvd_reader_keeps_every_description_of_a_clip_in_list_order(tmp_path):
    split = load_video_captions(_msvd(tmp_path / "msvd"), "train")
    assert split.dataset == "msvd" and split.image_ids == ["vidB_0_4", "vidA_1_5"]
    assert split.counts.tolist() == [5, 6]  # all of them, as Bordes et al. train on
    assert split.captions[:5] == ["a dog runs .", "a dog is running .", "the dog runs fast .", "a puppy runs .",
                                  "a dog runs on grass ."]
    assert split.captions[5:] == ["a man is playing a guitar .", "someone plays guitar.", "a man plays an instrument .",
                                  "a person is playing music .", "a guitarist performs .", "a sixth description ."]
    assert [p.name for p in split.source_files] == ["AllVideoDescriptions.txt", "train.txt"]
    capped = load_video_captions(_msvd(tmp_path / "msvd"), "train", max_descriptions=5)
    assert capped.counts.tolist() == [5, 5] and capped.captions == split.captions[:10]  # the sixth is not kept
    with pytest.raises(BenchboxError, match="--max-descriptions must be at least 5"):
        load_video_captions(_msvd(tmp_path / "msvd"), "train", max_descriptions=4)


@pytest.mark.parametrize("change, message", [
    (dict(descriptions=DESCRIPTIONS + "vidC_2_3\n"), "AllVideoDescriptions.txt:15: expected '<video_id> <description>'"),
    (dict(train="vidB_0_4\nvidZ\n"), "clip vidZ of train.txt has 0 descriptions; training needs at least 5"),
    (dict(descriptions="# only comments\n"), "no descriptions"),
    (dict(train="vidB_0_4\nvidB_0_4\n"), "listed more than once"),
])
def test_msvd_reader_errors_name_the_file_and_line(tmp_path, change, message):
    with pytest.raises(BenchboxError, match=message):
        load_video_captions(_msvd(tmp_path / "msvd", **change), "train")


def test_msvd_reader_missing_files(tmp_path):
    with pytest.raises(BenchboxError, match="is not a folder"):
        load_video_captions(tmp_path / "nowhere", "train")
    folder = _msvd(tmp_path / "msvd")
    with pytest.raises(BenchboxError, match="test.txt not found"):
        load_video_captions(folder, "test")
    (folder / "AllVideoDescriptions.txt").write_bytes(b"vidA \xff\xfe bad\n")
    with pytest.raises(BenchboxError, match="not UTF-8"):
        load_video_captions(folder, "train")


# ---------------------------------------------------------------- F/A/T/R through the command's path
def _msvd_clips(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, np.ndarray]]:
    """An MSVD-format folder (16 training clips, 8 dev clips), their clip features (4 frames, one planted) and
    the word vectors."""
    words, vectors = _word_vectors(tmp_path)
    lines, features, lists = [], {}, {}
    for split, n, seed in (("train", 16, 1), ("dev", 8, 2)):
        ids, captions, clips, _ = _planted_clips(n, seed, vectors)
        lines += [f"{ids[i // 5]} {c.removesuffix(' .')}" for i, c in enumerate(captions)]
        features.update(zip(ids, clips.frames))
        lists[split] = "".join(f"{i}\n" for i in ids)
    folder = _msvd(tmp_path / "msvd", "\n".join(lines) + "\n", lists["train"], lists["dev"])
    save_clips(tmp_path / "clips.npz", list(features), np.stack(list(features.values())))
    return folder, tmp_path / "clips.npz", words, features


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_F_A_T_R_train_on_generated_clips_and_are_recorded(tmp_path):
    folder, clips_file, words, frames = _msvd_clips(tmp_path)
    common = dict(encoder="char-gru", dataset="msvd", video_captions=str(folder), hidden=4, epochs=1, cycle_epochs=1,
                  batch_size=8, checkpoint_every=0, data_dir=str(tmp_path), loss="bordes-b")
    runs = {}
    for visual in ("frame", "average", "attention", "random"):
        extra = {} if visual == "random" else {"features": str(clips_file)}
        extra.update({"word_vectors": str(words)} if visual == "attention" else {})
        trainer = Trainer.from_config(TrainConfig(visual=visual, **common, **extra), tmp_path / visual)
        runs[visual] = trainer
        manifest = json.loads((trainer.run() / "manifest.json").read_text())
        assert manifest["status"] == "complete" and manifest["config"]["visual"] == visual
        assert manifest["config"]["video_captions"] == str(folder)
        assert manifest["data"]["train_images"] == 16 and manifest["data"]["dev_images"] == 8
        assert (manifest["data"]["word_vectors"] is not None) == (visual == "attention")
    ids = runs["frame"].data.train.image_ids
    stacked = np.stack([frames[i] for i in ids])
    np.testing.assert_array_equal(runs["frame"].data.train.visual, stacked[:, 0])  # F: the first frame, v = i_1
    np.testing.assert_allclose(runs["average"].data.train.visual, stacked.mean(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(runs["random"].data.train.visual, random_anchors(ids, runs["random"].config.seed))
    attention = runs["attention"]
    assert attention.data.train.visual is None and attention.net.frame_attention.project.weight.abs().sum() > 0
    assert attention.data.word_vectors["dim"] == DIM


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_stopped_and_resumed_T_run_equals_an_uninterrupted_one(tmp_path):
    """T's projection is part of the model: checkpointed, restored and trained on as if never stopped."""
    folder, clips_file, words, _ = _msvd_clips(tmp_path)
    config = TrainConfig(encoder="char-gru", dataset="msvd", video_captions=str(folder), visual="attention",
                         features=str(clips_file), word_vectors=str(words), hidden=4, epochs=2, cycle_epochs=1,
                         batch_size=8, checkpoint_every=0, data_dir=str(tmp_path))
    full = Trainer.from_config(config, tmp_path / "full")
    full.run()
    Trainer.from_config(config, tmp_path / "cut", step_hook=lambda step: step == 7).run()
    resumed = Trainer.from_config(config, tmp_path / "cut", resume=True)
    resumed.run()
    a, b = full.net.state_dict(), resumed.net.state_dict()
    assert a["frame_attention.project.weight"].abs().sum() > 0
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_on_an_image_features_file_F_A_and_T_train_exactly_as_features(tmp_path):
    """Clips of one frame: F, A and T are the frame, T's attention gets no gradient (one frame: weight 1), so
    all four runs end with the same weights, bit for bit (the single-image path is untouched)."""
    folder, _, words, frames = _msvd_clips(tmp_path)
    save_features(tmp_path / "images.npz", list(frames), np.stack([f[0] for f in frames.values()]))
    common = dict(encoder="char-gru", dataset="msvd", video_captions=str(folder), hidden=4, epochs=1, cycle_epochs=1,
                  batch_size=8, checkpoint_every=0, data_dir=str(tmp_path), loss="bordes-b",
                  features=str(tmp_path / "images.npz"))
    weights = {}
    for visual in ("features", "frame", "average", "attention"):
        extra = {"word_vectors": str(words)} if visual == "attention" else {}
        trainer = Trainer.from_config(TrainConfig(visual=visual, **common, **extra), tmp_path / visual)
        trainer.run()
        weights[visual] = trainer.net.state_dict()
    assert not weights["attention"].pop("frame_attention.project.weight").any()
    for visual in ("frame", "average", "attention"):
        assert weights[visual].keys() == weights["features"].keys()
        assert all(torch.equal(weights[visual][k], weights["features"][k]) for k in weights["features"]), visual


@pytest.mark.parametrize("options, message", [
    (dict(dataset="msvd", visual="random"), "--dataset msvd needs --video-captions DIR"),
    (dict(dataset="flickr8k", visual="random", video_captions="msvd"),
     "--video-captions is only read with --dataset msvd, not --dataset flickr8k"),
    (dict(dataset="flickr8k", visual="average", features="x.npz", word_vectors="w.txt"),
     "--vectors drives --visual attention only, not --visual average"),
    (dict(dataset="flickr8k", visual="attention", features="x.npz", loss="bordes-c"),
     "--visual attention learns its projection through a term that reads the visual side .*; --loss bordes-c has none"),
    (dict(dataset="flickr8k", visual="frame"), "--visual frame needs --features FILE"),
    (dict(dataset="flickr8k", visual="random", features="x.npz"),
     "--features is only used with --visual features, frame, average, attention, not --visual random"),
])
def test_bad_video_options_are_clear_errors(options, message):
    with pytest.raises(BenchboxError, match=message):
        TrainConfig(encoder="char-gru", **options)


@pytest.mark.parametrize("args, expected", [
    (["--dataset", "flickr8k", "--visual", "middle", "--features", "x.npz"],
     "error: --visual must be one of features, cluster, random, frame, average, attention, not 'middle'"),
    (["--dataset", "msvd", "--visual", "random"], "error: --dataset msvd needs --video-captions DIR"),
])
@pytest.mark.slow
def test_a_bad_video_option_on_the_command_line_is_one_line_and_exit_2(tmp_path, args, expected):
    done = subprocess.run([sys.executable, "-m", "benchbox", "train", "char-gru", "--hidden", "4", *args,
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(expected), done.stderr
    assert not (tmp_path / "run").exists()


def test_structure_measures_on_clip_vectors_match_pairs_by_hand(tmp_path):
    """ρ_vis of captions against one vector per clip (here A's) is the Pearson r over caption pairs of
    different clips of the caption cosine and the clip-vector cosine."""
    from benchbox.tasks.structure_measures import rho_vis

    _, vectors = _word_vectors(tmp_path)
    _, _, clips, _ = _planted_clips(6, 3, vectors)
    captions = np.random.default_rng(4).standard_normal((30, 8))
    visual = average_frames(clips)
    unit = captions / np.linalg.norm(captions, axis=1, keepdims=True)
    vis = visual / np.linalg.norm(visual, axis=1, keepdims=True)
    clip_of = np.repeat(np.arange(6), 5)
    pairs = [(i, j) for i in range(30) for j in range(30) if clip_of[i] != clip_of[j]]
    text = [unit[i] @ unit[j] for i, j in pairs]
    seen = [vis[clip_of[i]] @ vis[clip_of[j]] for i, j in pairs]
    assert rho_vis(captions, visual, 5) == pytest.approx(np.corrcoef(text, seen)[0, 1], abs=1e-6)

"""Training on the real Flickr8k captions (subsets): learning, resumption, DistributedDataParallel."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.evaluation import load_encoder
from benchbox.training.config import TrainConfig
from benchbox.training.trainer import Trainer

ROOT = DataRoot()
pytestmark = pytest.mark.realdata("flickr8k/Flickr8k.token.txt")
TINY = dict(encoder="char-gru", dataset="flickr8k", visual="random", hidden=12, epochs=2, cycle_epochs=1,
            max_captions=320, threads=1, checkpoint_every=3)


def _weights(run: Path, snapshot: str) -> dict[str, torch.Tensor]:
    return torch.load(run / "snapshots" / snapshot, weights_only=True)["state_dict"]


def test_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    config = TrainConfig(**TINY)
    full = Trainer.from_config(config, tmp_path / "full").run()
    steps = int(json.loads((full / "manifest.json").read_text())["steps_per_epoch"])
    assert steps == 10  # 64 images, batch 32: 2 per pass, 5 passes

    # a clean stop (as on SIGINT) in the middle of epoch 1, then --resume
    stopped = Trainer.from_config(config, tmp_path / "stopped", step_hook=lambda step: step == 7).run()
    manifest = json.loads((stopped / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["stopped_at_step"] == 7  # the report says where it stopped
    Trainer.from_config(config, stopped, resume=True).run()
    assert "stopped_at_step" not in json.loads((stopped / "manifest.json").read_text())

    # a crash after step 14 (last checkpoint at step 12, in epoch 2): resume replays steps 13-14
    def crash(step: int) -> bool:
        if step == 14:
            raise RuntimeError("simulated crash")
        return False

    with pytest.raises(RuntimeError):
        Trainer.from_config(config, tmp_path / "crashed", step_hook=crash).run()
    Trainer.from_config(config, tmp_path / "crashed", resume=True).run()

    for run in (stopped, tmp_path / "crashed"):
        for snap in ("epoch-001.pt", "epoch-002.pt"):
            a, b = _weights(full, snap), _weights(run, snap)
            assert all(torch.equal(a[k], b[k]) for k in a), (run, snap)
        losses = [pd.read_csv(r / "history.csv")["loss"].tolist() for r in (full, run)]
        assert losses[0] == losses[1] and len(losses[0]) == 2
    manifest = json.loads((full / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["ensemble"]) == 2
    encoder = load_encoder(full)
    assert encoder.name == "char-gru" and len(encoder.members) == 2
    assert encoder.encode(["A dog runs ⚽ on the grass ."]).shape == (1, 24)


def test_resume_refuses_other_options_and_missing_runs(tmp_path):
    with pytest.raises(BenchboxError, match="nothing to resume"):
        Trainer.from_config(TrainConfig(**TINY), tmp_path / "none", resume=True)
    run = Trainer.from_config(TrainConfig(**{**TINY, "epochs": 1}), tmp_path / "one").run()
    with pytest.raises(BenchboxError, match="hidden"):
        Trainer.from_config(TrainConfig(**{**TINY, "epochs": 1, "hidden": 8}), run, resume=True)
    with pytest.raises(BenchboxError, match="already holds a run"):
        Trainer.from_config(TrainConfig(**{**TINY, "epochs": 1}), run)


def test_torchrun_two_processes_match_one(tmp_path):
    """2-process gloo DDP: each global batch split over the ranks, embeddings all-gathered: same training."""
    args = ["train", "char-gru", "--dataset", "flickr8k", "--visual", "random", "--hidden", "12", "--epochs", "1",
            "--cycle-epochs", "1", "--max-captions", "320", "--threads", "1", "--quiet"]
    torchrun = Path(sys.executable).with_name("torchrun")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BENCHBOX_DATA": str(ROOT.root)}
    proc = subprocess.run([str(torchrun), "--standalone", "--nproc_per_node", "2", "-m", "benchbox", *args,
                           "--out", str(tmp_path / "ddp")], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    single = Trainer.from_config(TrainConfig(**{**TINY, "epochs": 1}), tmp_path / "single").run()
    a, b = _weights(single, "epoch-001.pt"), _weights(tmp_path / "ddp", "epoch-001.pt")
    for key in a:
        # b_v of the attention gets a gradient that is exactly zero in exact arithmetic (the softmax over time
        # is invariant to a per-dimension shift), so Adam turns summation-order noise into steps there; it
        # cannot change any output, which the encodings below check
        if key != "caption.attention.out.bias":
            torch.testing.assert_close(b[key], a[key], rtol=1e-5, atol=1e-6)
    sentences = ["A dog runs on the grass .", "Two children play in the snow .", "a"]
    np.testing.assert_allclose(load_encoder(tmp_path / "ddp").encode(sentences), load_encoder(single).encode(sentences),
                               atol=1e-5)
    manifest = json.loads((tmp_path / "ddp" / "manifest.json").read_text())
    assert manifest["world_size"] == 2


def _bag_of_words_features(path: Path) -> None:
    """Generated image features: each image gets the sum of fixed random 64-d word vectors over the words of
    its five captions, so a caption encoder can learn to find its image (and does on unseen dev images only
    if it learns words from characters)."""
    from benchbox.data.captions import load_caption_dataset
    from benchbox.data.image_features import save_features

    table: dict[str, np.ndarray] = {}

    def vector(word: str) -> np.ndarray:
        if word not in table:
            key = int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "little")
            table[word] = np.random.default_rng([7, key]).standard_normal(64)
        return table[word]

    ids, rows = [], []
    for split in ("train", "dev"):
        caps = load_caption_dataset(ROOT, "flickr8k", split)
        for i, image in enumerate(caps.image_ids):
            words = [w for c in caps.captions[5 * i : 5 * i + 5] for w in c.lower().split()]
            ids.append(image)
            rows.append(np.sum([vector(w) for w in words], axis=0))
    save_features(path, ids, np.asarray(rows, dtype=np.float32))


@pytest.mark.realdata
def test_training_on_real_captions_beats_chance_by_far(tmp_path):
    """300 steps (n = 32) on 1600 real Flickr8k training captions; retrieval on the 1000 unseen dev images."""
    from benchbox.encoders.char_rnn import CharGRU
    from benchbox.training.data import load_split
    from benchbox.training.selection import dev_scores

    _bag_of_words_features(tmp_path / "features.npz")
    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="features",
                         features=str(tmp_path / "features.npz"), hidden=32, epochs=6, cycle_epochs=6,
                         max_captions=1600, threads=1, checkpoint_every=0)
    run = Trainer.from_config(config, tmp_path / "run").run()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["steps_per_epoch"] * 6 == 300
    dev = manifest["snapshots"][-1]["dev"]
    # chance: R@10 = 1% caption→image, ≈ 5% image→caption (best of 5 captions); median ranks ≈ 500 and ≈ 100+
    assert dev["t2i_r10"] > 8 and dev["i2t_r10"] > 10 and dev["t2i_medr"] < 200
    dev_data = load_split(ROOT, "flickr8k", "dev", visual="features", features=tmp_path / "features.npz", seed=0)
    vocab = load_encoder(run).members[0].vocab
    untrained = dev_scores(CharGRU.untrained(vocab, hidden=32, feature_dim=64), dev_data)
    assert untrained["t2i_r10"] < 3 and dev["t2i_r10"] > 4 * untrained["t2i_r10"]

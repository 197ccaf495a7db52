"""Training you can watch (issue #41): it says what it is doing from its first second (it was silent for
over 3 minutes before its first step), one SIGINT prints one message (it printed two), and a resumed epoch's
history row records the epoch's true time (a resumed epoch recorded 6.28 s and 458.7 captions/s: only the time
since the resume, against all its captions). No data root: an MSVD-format folder written here, or a Trainer
from in-memory parts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from benchbox.training import trainer as trainer_module
from benchbox.training.checkpoint import CHECKPOINT_FILE, load_checkpoint, restore
from benchbox.training.config import TrainConfig
from benchbox.training.data import SplitData, TrainingData, random_anchors
from benchbox.training.distributed import Distributed
from benchbox.training.trainer import Trainer, build_net

WORDS = ["dog", "cat", "runs", "sits", "red", "ball", "grass", "snow", "child", "plays", "a", "the"]


def _msvd(folder: Path, clips: dict[str, int]) -> Path:
    """An MSVD-format folder: per split, ``clips[split]`` clips of 5 random captions each."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    lines = []
    for split, n in clips.items():
        ids = [f"{split}{i}_0_1" for i in range(n)]
        lines += [f"{i} {' '.join(rng.choice(WORDS, 4))}" for i in ids for _ in range(5)]
        (folder / f"{split}.txt").write_text("".join(f"{i}\n" for i in ids))
    (folder / "AllVideoDescriptions.txt").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def interrupted_training(tmp_path_factory) -> tuple[int, str, Path]:
    """``benchbox train char-gru`` on a written MSVD folder, with stderr to a pipe (as a log file), sent one
    SIGINT once its first checkpoint is written: (exit status, stderr, run folder)."""
    tmp = tmp_path_factory.mktemp("watch")
    folder = _msvd(tmp / "msvd", {"train": 40, "dev": 8})
    run = tmp / "run"
    command = [sys.executable, "-m", "benchbox", "train", "char-gru", "--dataset", "msvd", "--video-captions",
               str(folder), "--visual", "random", "--hidden", "4", "--epochs", "500", "--batch-size", "8",
               "--checkpoint-every", "3", "--threads", "1", "--out", str(run)]
    env = {k: v for k, v in os.environ.items() if k != "BENCHBOX_DATA"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not (run / CHECKPOINT_FILE).exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)
    return proc.returncode, stderr, run


def test_training_says_what_it_does_before_its_first_step(interrupted_training):
    code, stderr, run = interrupted_training
    assert code == 128 + signal.SIGINT, stderr
    lines = stderr.splitlines()
    first_step = next(i for i, line in enumerate(lines) if line.startswith("step 1/"))
    before = "\n".join(lines[:first_step])
    for said in ("loading torch", "loading the msvd captions", "loaded 200 training and 40 dev captions",
                 "building the network (hidden 4) on cpu, 1 CPU thread", "training 500 epochs of"):
        assert said in before, stderr
    assert "first step in" in lines[first_step] and "eta" not in lines[first_step]


def test_one_sigint_is_one_message(interrupted_training):
    code, stderr, run = interrupted_training
    assert code == 128 + signal.SIGINT, stderr
    said = [line for line in stderr.splitlines() if "--resume" in line or "stopped" in line or "interrupt" in line]
    assert len(said) == 1, stderr
    assert said[0].startswith("interrupted by SIGINT") and said[0].endswith(f"--out {run} --resume")


def _split(n_images: int, seed: int) -> SplitData:
    rng = np.random.default_rng(seed)
    ids = [f"img{seed}-{i}" for i in range(n_images)]
    captions = [" ".join(rng.choice(WORDS, 4)) for _ in range(5 * n_images)]
    return SplitData(image_ids=ids, captions=captions, visual=random_anchors(ids, 0, dim=16), source_files={})


CONFIG = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=4, epochs=1, cycle_epochs=1,
                     batch_size=8, checkpoint_every=0)
DATA = TrainingData(_split(16, 1), _split(8, 2), root="memory", features_sha256=None)


def _trainer(out: Path, hook, position_from: Path | None = None) -> Trainer:
    """A Trainer of :data:`CONFIG` on :data:`DATA`; with ``position_from``, resumed from that checkpoint."""
    torch.manual_seed(CONFIG.seed)
    dist = Distributed()
    net = build_net(CONFIG, DATA, None, dist.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=CONFIG.resolved_lr_max)
    position = None
    if position_from is not None:
        path = position_from / CHECKPOINT_FILE
        position = restore(load_checkpoint(path), net, optimizer, path)
    return Trainer(CONFIG, out, DATA, net, optimizer, dist=dist, position=position, step_hook=hook)


@pytest.mark.usefixtures("one_thread")
def test_a_resumed_epoch_records_its_true_time(tmp_path, monkeypatch):
    """A clock that advances 2 s per step (the step hook moves it): the epoch of 10 steps took 20 s, whether
    it ran at once or stopped after step 4 and was resumed."""
    now = [1000.0]
    monkeypatch.setattr(trainer_module, "time", SimpleNamespace(perf_counter=lambda: now[0]))

    def tick(stop_at: int | None):
        def hook(step: int) -> bool:
            now[0] += 2.0
            return step == stop_at
        return hook

    uninterrupted = _trainer(tmp_path / "whole", tick(None))
    assert uninterrupted.steps_per_epoch == 10
    whole = uninterrupted.run()
    cut = _trainer(tmp_path / "cut", tick(4)).run()
    now[0] += 3600.0  # an hour before the resume: not the epoch's time
    _trainer(cut, tick(None), position_from=cut).run()
    for run in (whole, cut):
        row = pd.read_csv(run / "history.csv").iloc[0]
        assert row["seconds"] == pytest.approx(20.0) and row["captions_per_s"] == pytest.approx(80 / 20.0)

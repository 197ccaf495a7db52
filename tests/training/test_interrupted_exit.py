"""Interrupted training exits 128 + signal after saving (issue #16: Ctrl-C exited 0, so
``benchbox train ... && benchbox eval ...`` carried on), says the resume command, and resumes to the weights
of an uninterrupted run."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from benchbox.commands.interrupted import resume_command

TRAIN = ["train", "char-gru", "--dataset", "flickr8k", "--visual", "random", "--hidden", "12", "--epochs", "4",
         "--cycle-epochs", "4", "--max-captions", "320", "--threads", "1", "--checkpoint-every", "3"]
needs_flickr8k = pytest.mark.realdata("flickr8k/Flickr8k.token.txt")


def _benchbox(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchbox", *args]


def _weights(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "snapshots" / "epoch-004.pt", weights_only=True)["state_dict"]


def test_resume_command_replaces_out_and_resume():
    argv = ["/x/bin/benchbox", "train", "char-gru", "--out=old dir", "--dataset", "flickr8k", "--resume", "--out", "b"]
    assert resume_command(argv, Path("runs/my run")) == \
        "benchbox train char-gru --dataset flickr8k --out 'runs/my run' --resume"


ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    full = tmp_path_factory.mktemp("uninterrupted") / "run"
    subprocess.run(_benchbox(*TRAIN, "--out", str(full)), env=ENV, check=True, capture_output=True)
    return full


@needs_flickr8k
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signalled_training_exits_128_plus_signal_and_resumes_to_the_same_weights(tmp_path, sig, uninterrupted):
    env, full, cut = ENV, uninterrupted, tmp_path / "cut"

    proc = subprocess.Popen(_benchbox(*TRAIN, "--out", str(cut)), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (cut / "checkpoint.pt").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the first checkpoint (step 3 of 40) says the loop is running
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, stderr
    manifest = json.loads((cut / "manifest.json").read_text())
    assert manifest["status"] == "stopped"
    assert not (cut / "snapshots" / "epoch-004.pt").exists()
    hint = [line for line in stderr.splitlines() if line.startswith(f"interrupted by {sig.name}")]
    assert len(hint) == 1, stderr
    command = shlex.split(hint[0].split("resume with ", 1)[1])
    assert command[:3] == ["benchbox", "train", "char-gru"] and command[-3:] == ["--out", str(cut), "--resume"]

    resumed = subprocess.run(_benchbox(*command[1:]), env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((cut / "manifest.json").read_text())["status"] == "complete"
    a, b = _weights(full), _weights(cut)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

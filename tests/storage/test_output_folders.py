"""Output folders (issue #19): checked writable before any work, locked while a command writes into them (an
OS lock, released however the holder exits), results printed before they are saved, and a training run
stopped before its first checkpoint restarts cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torch
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.options import DEFAULT_SEED
from benchbox.storage.outdir import output_lock
from tests.helpers import AS_NOBODY

runner = CliRunner()




@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="drops from root to nobody")
def test_read_only_runs_dir_fails_before_the_evaluation(tmp_path):
    """As the unprivileged user 'nobody' (root ignores permission bits), on a folder owned by root."""
    read_only = tmp_path / "runs"
    read_only.mkdir(mode=0o755)
    proc = subprocess.run([sys.executable, "-c", AS_NOBODY, "eval", "glove-bow", "--task", "stsb-cosine",
                           "--runs-dir", str(read_only)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"error: cannot write into {read_only} (Permission denied): "
                                   "pass a writable folder as --runs-dir")
    assert proc.stdout == ""  # nothing was evaluated


def test_results_are_printed_before_a_failing_save(tmp_path, monkeypatch):
    from benchbox.evaluation import Evaluation

    def full_disk(self, runs_dir):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Evaluation, "save", full_disk)
    (tmp_path / "none").mkdir()
    result = runner.invoke(app, ["eval", "glove-bow", "--task", "stsb-cosine", "--data-dir", str(tmp_path / "none"),
                                 "--runs-dir", str(tmp_path / "runs"), "--json", "-", "--quiet"])
    assert isinstance(result.exception, BenchboxError)
    assert str(result.exception).startswith(f"the results above could not be saved under {tmp_path / 'runs'}")
    records = json.loads(result.stdout)["records"]
    assert [r["metric"] for r in records] == ["pearson", "spearman"] and records[0]["n"] == 1379


HOLD = textwrap.dedent("""
    import sys, time
    from benchbox.storage.outdir import output_lock
    with output_lock(sys.argv[1]):
        print("holding", flush=True)
        time.sleep(600)
""")


@pytest.mark.slow
def test_lock_refuses_a_second_writer_and_dies_with_its_holder(tmp_path):
    folder = tmp_path / "out"
    (tmp_path / "none").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        # a second training into the same --out stops at once, before reading any data
        proc = subprocess.run([sys.executable, "-m", "benchbox", "train", "char-gru", "--dataset", "flickr8k",
                               "--visual", "random", "--out", str(folder), "--data-dir", str(tmp_path / "none")],
                              capture_output=True, text=True)
        assert proc.returncode == 2
        *started, refused = proc.stderr.strip().splitlines()  # training says what it does from its first second
        assert refused == (f"error: another benchbox process is writing into {folder} (it holds "
                           f"{folder / '.benchbox.lock'}): wait for it to finish or pass another --out")
        assert started == ["train char-gru: loading torch and the training code ..."]
        with pytest.raises(BenchboxError, match="another benchbox process is writing into"):
            with output_lock(folder):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)  # no clean-up runs: the OS drops the lock
        holder.wait()
    with output_lock(folder) as locked:
        assert locked == folder


needs_flickr8k = pytest.mark.realdata("flickr8k/Flickr8k.token.txt")
TINY = dict(encoder="char-gru", dataset="flickr8k", visual="random", hidden=12, epochs=1, cycle_epochs=1,
            max_captions=320, threads=1, checkpoint_every=3)


@needs_flickr8k
def test_run_killed_before_its_first_checkpoint_restarts_cleanly(tmp_path):
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    config = TrainConfig(**TINY)
    fresh = Trainer.from_config(config, tmp_path / "fresh").run()

    def killed(step: int) -> bool:
        if step == 2:  # before the first checkpoint (step 3)
            raise KeyboardInterrupt
        return False

    out = tmp_path / "killed"
    with pytest.raises(KeyboardInterrupt):
        Trainer.from_config(TrainConfig(**{**TINY, "seed": 7}), out, step_hook=killed).run()
    assert (out / "manifest.json").is_file() and not (out / "checkpoint.pt").exists()
    with pytest.raises(BenchboxError, match="stopped before its first checkpoint; run the same command without --resume"):
        Trainer.from_config(config, out, resume=True)
    Trainer.from_config(config, out).run()  # restarted from scratch, with the new options (the default seed)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["config"]["seed"] == DEFAULT_SEED and "resumed" not in manifest
    a = torch.load(fresh / "snapshots" / "epoch-001.pt", weights_only=True)["state_dict"]
    b = torch.load(out / "snapshots" / "epoch-001.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)

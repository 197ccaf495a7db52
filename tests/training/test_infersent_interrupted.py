"""``benchbox train infersent`` stopped by SIGINT/SIGTERM exits 128 + signal after the epoch in progress,
keeps the best model so far and marks the run ``interrupted`` (issue #16: honest exit codes)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_exits_128_plus_signal_and_keeps_the_best_model(tmp_path, signum):
    nli = tmp_path / "nli"
    nli.mkdir()
    for split in ("train", "dev", "test"):
        (nli / f"s1.{split}").write_text("a dog runs .\na cat sits .\n" * 200)
        (nli / f"s2.{split}").write_text("an animal moves .\na dog sleeps .\n" * 200)
        (nli / f"labels.{split}").write_text("entailment\ncontradiction\n" * 200)
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "benchbox", "train", "infersent", "--nli", str(nli), "--hidden", "2",
                             "--epochs", "1000", "--batch-size", "1", "--threads", "1", "--out", str(run)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("epoch 1:"):
            proc.send_signal(signum)
            break
    stdout, rest = proc.communicate(timeout=120)
    stderr = "".join(lines) + rest
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and f"interrupted by {signal.Signals(signum).name}" in stderr
    assert "best model so far is kept" in stderr and stdout.strip() == str(run)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["best"]["epoch"] >= 1
    assert (run / "encoder.pkl").is_file()

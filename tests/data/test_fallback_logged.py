"""A fallback to the embedded STS-B/SICK is said on screen (one log line) and recorded in the run manifest
(issue #16: a data root missing STS-B fell back to the embedded copy without a word)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_eval_says_and_records_the_embedded_fallback(tmp_path):
    root, runs = tmp_path / "root", tmp_path / "runs"
    root.mkdir()
    env = {**os.environ, "BENCHBOX_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "benchbox", "eval", "glove-bow", "--task", "stsb-cosine",
                           "--task", "sickr-cosine", "--data-dir", str(root), "--runs-dir", str(runs)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "embedded copy" in line]
    assert said == [f"2 data files are not under {root}: reading the embedded copy shipped with benchbox "
                    "(senteval/downstream/SICK, senteval/downstream/STS/STSBenchmark); the run manifest records "
                    "them as embedded:<path>"]  # issue 41: it ended on a dangling "embedded:"
    manifest = json.loads(next(runs.iterdir()).joinpath("manifest.json").read_text())
    files = json.dumps(manifest["tasks"])
    assert "embedded:senteval/downstream/STS/STSBenchmark/sts-test.csv" in files
    assert "embedded:senteval/downstream/SICK/SICK_test_annotated.txt" in files

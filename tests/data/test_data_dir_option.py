"""``--data-dir`` that is not an existing folder is one line and exit 2 before any work (issue #16: it was
ignored, the embedded STS-B/SICK used and the nonexistent root recorded in the run manifest)."""

from __future__ import annotations

import subprocess
import sys

import pytest

COMMANDS = [
    ["eval", "glove-bow", "--task", "stsb-cosine"],
    ["compare", "glove-bow", "sbert", "--task", "stsb-cosine"],
    ["train", "char-gru", "--dataset", "flickr8k", "--visual", "cluster"],
    ["neighbours", "glove-bow"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_nonexistent_data_dir_is_refused_before_any_work(tmp_path, command):
    missing = tmp_path / "no such root"
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "benchbox", *command, "--data-dir", str(missing)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"error: --data-dir {missing} is not an existing folder: give the data root "
                                        "(see `benchbox data status`), or leave the option out to use $BENCHBOX_DATA"]
    assert list(work.iterdir()) == [] and not missing.exists()

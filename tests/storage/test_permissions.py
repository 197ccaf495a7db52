"""Issue #18: a file or folder the user cannot read or write gives one line naming it, exit 2 (no traceback).

Root reads everything, so each command runs in a child process that imports benchbox, then drops to the
unprivileged user ``nobody`` and runs the CLI (tests/helpers.py, ``AS_NOBODY``); the files are made readable to
``nobody`` except the one under test.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from benchbox.data.root import EMBEDDED_ROOT
from tests.helpers import AS_NOBODY

SHARED = Path(os.environ.get("BENCHBOX_DATA", "/work/shared/data"))

pytestmark = [
    # a child process per case, each importing torch: about 2.5 minutes on 2 cores
    pytest.mark.realdata("senteval/downstream/STS/STS12-en-test"),
    pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges: needs to start as root (as CI does)"),
]


@pytest.fixture
def world():
    """A small data root (STS12, STS-B, MR), a word-vector file, a features file and an eval run, all readable by
    ``nobody`` (in a fresh folder under /tmp: pytest's own temporary folders are private to root)."""
    tmp_path = Path(tempfile.mkdtemp(prefix="benchbox-perm-"))
    try:
        yield _build_world(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _build_world(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    sts = root / "senteval" / "downstream" / "STS"
    sts.mkdir(parents=True)
    shutil.copytree(SHARED / "senteval" / "downstream" / "STS" / "STS12-en-test", sts / "STS12-en-test")
    shutil.copytree(SHARED / "senteval" / "downstream" / "STS" / "STSBenchmark", sts / "STSBenchmark")
    shutil.copytree(SHARED / "senteval" / "downstream" / "MR", root / "senteval" / "downstream" / "MR")
    (tmp_path / "vectors.txt").write_text("the 1 0\ndog 0 1\na 1 1\n")
    np.savez(tmp_path / "features.npz", ids=np.array(["x"]), features=np.ones((1, 4), np.float32))
    (tmp_path / "cache").mkdir()
    (tmp_path / "out").mkdir()
    proc = run(tmp_path, "eval", "glove-bow", "--task", "stsb-cosine", "--runs-dir", str(tmp_path / "runs"), "-q",
               as_root=True)
    assert proc.returncode == 0, proc.stderr
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o644)
    return tmp_path


def run(tmp_path, *args, as_root=False):
    # every command reads this world's data root (nobody may not be able to read $BENCHBOX_DATA's folders)
    env = {**os.environ, "BENCHBOX_DATA": str(tmp_path / "root"), "BENCHBOX_CACHE": str(tmp_path / "cache"),
           "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "benchbox", *args] if as_root else [sys.executable, "-c", AS_NOBODY, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)


def _run_dir(world):
    return next((world / "runs").iterdir())


CASES = {
    "sts": (lambda w: w / "root/senteval/downstream/STS/STS12-en-test/STS.input.MSRvid.txt",
            lambda w: ["eval", "glove-bow", "--task", "sts12", "--data-dir", str(w / "root"), "--no-save"]),
    "transfer": (lambda w: w / "root/senteval/downstream/MR/rt-polarity.neg",
                 lambda w: ["eval", "glove-bow", "--task", "mr", "--data-dir", str(w / "root"), "--no-save"]),
    "word-vectors": (lambda w: w / "vectors.txt",
                     lambda w: ["eval", "glove-bow", "-e", f"vectors={w / 'vectors.txt'}", "--task", "stsb-cosine",
                                "--no-save"]),
    "run-folder": (lambda w: _run_dir(w) / "manifest.json",
                   lambda w: ["report", str(_run_dir(w)), "--out", str(w / "out" / "r.md")]),
    "run-items": (lambda w: _run_dir(w) / "items" / "stsb-cosine.csv",
                  lambda w: ["compare", str(_run_dir(w)), "glove-bow", "--task", "stsb-cosine",
                             "--runs-dir", str(w / "out")]),
    "data-verify": (lambda w: w / "root/senteval/downstream/MR/rt-polarity.pos",
                    lambda w: ["data", "verify", "--data-dir", str(w / "root")]),
    "data-import": (lambda w: w / "root/senteval/downstream/MR/rt-polarity.pos",
                    lambda w: ["data", "import", str(w / "root/senteval/downstream"), "--data-dir", str(w / "out")]),
    "output-folder": (lambda w: w / "out",
                      lambda w: ["eval", "glove-bow", "--task", "stsb-cosine", "--runs-dir", str(w / "out" / "runs")]),
}


def _others_can_enter(folder: Path) -> bool:
    """Whether a user other than the owner may reach files in ``folder`` (it and every folder above it
    searchable by others)."""
    return all(f.stat().st_mode & stat.S_IXOTH for f in [folder, *folder.parents])


@pytest.mark.parametrize("case", list(CASES))
def test_unreadable_or_unwritable_path_is_one_line_exit_2(world, case):
    if case == "data-verify" and not _others_can_enter(EMBEDDED_ROOT):
        pytest.skip("data verify also checks the embedded copy, which the user nobody may not read in this checkout")
    target_of, args_of = CASES[case]
    target = target_of(world)
    target.chmod(0o555 if target.is_dir() else 0o000)  # a folder: readable, not writable
    proc = run(world, *args_of(world))
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "Permission denied" in errors[0] and str(target) in errors[0], errors[0]

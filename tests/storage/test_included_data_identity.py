"""Data identity is content, not paths (issue #39): a task file included with a relative ``--include`` path recorded
its data files relative to the working directory, so ``compare`` from another folder (or with a moved copy of the
same files) said the task's data changed and evaluated again. The files are now recorded by resolved path and
matched by sha256; an edited copy is still different data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchbox.storage.runs import MANIFEST
from tests.tasks.test_task_bases import PAIRS

ROOT = Path(__file__).resolve().parents[2]
TOML = '[[task]]\nname = "moved-sts"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n'
MODELS = ["tests.helpers:LetterCounts", "tests.core.test_task_metadata:Vowels"]


def _task_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "pairs.tsv").write_text("sentence1\tsentence2\tgold\n" + "".join(f"{a}\t{b}\t{s}\n" for a, b, s, _ in PAIRS))
    (folder / "tasks.toml").write_text(TOML)
    return folder


def _compare(include: str, runs: Path, cwd: Path) -> subprocess.CompletedProcess:
    (cwd / "empty").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "benchbox", "--include", include, "compare", *MODELS, "-t",
                           "moved-sts", "--runs-dir", str(runs), "--data-dir", "empty", "--bootstrap", "0",
                           "--test-resamples", "20"], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def test_a_relatively_named_or_moved_task_file_is_the_same_data(tmp_path):
    project, elsewhere, runs = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "runs"
    _task_folder(project / "tasks")
    _compare("tasks/tasks.toml", runs, cwd=project)  # evaluates both models
    written = sorted(p.name for p in runs.iterdir())
    manifest = json.loads((runs / written[0] / MANIFEST).read_text())
    assert list(manifest["tasks"]["moved-sts"]["data_checksums"]) == [str((project / "tasks/pairs.tsv").resolve())]

    elsewhere.mkdir()
    again = _compare("../project/tasks/tasks.toml", runs, cwd=elsewhere)  # the same file, named from elsewhere
    assert again.stderr.count("reusing run") == 2, again.stderr
    shutil.copytree(project / "tasks", elsewhere / "copy")  # a copy of the same files, in another folder
    moved = _compare("copy/tasks.toml", runs, cwd=elsewhere)
    assert moved.stderr.count("reusing run") == 2, moved.stderr
    assert sorted(p.name for p in runs.iterdir()) == written

    edited = elsewhere / "copy" / "pairs.tsv"
    edited.write_text(edited.read_text().replace("4.5", "1.5"))  # different data: evaluated again
    changed = _compare("copy/tasks.toml", runs, cwd=elsewhere)
    assert "the data files of moved-sts changed since it was written" in changed.stderr
    assert len(list(runs.iterdir())) == 4

"""Issue #26: environment variables are checked like options, options a task ignores are refused or warned,
the run records the options used, and ``neighbours`` refuses a constant encoder.

On the old code ``BENCHBOX_DEBUG=no`` turned debug on, ``BENCHBOX_MAX_CHARS=lots`` was ignored by every command
that encoded nothing, ``--device tpu`` and ``--retrieval-ci bogus`` were accepted and recorded for tasks that
do not read them, ``--text raw -t sts12:text=senteval`` recorded ``text = raw`` for a run that used senteval,
and ``neighbours`` with a constant encoder printed ``cos 1.000`` for every neighbour.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchbox.errors import BenchboxError
from benchbox.neighbours import neighbours
from tests.core.test_hostile_inputs import files_under, run_cli

REPO = Path(__file__).resolve().parents[2]


def _benchbox(tmp_path: Path, env: dict[str, str], *argv: str):
    clean = {k: v for k, v in os.environ.items() if k not in ("BENCHBOX_DEBUG", "BENCHBOX_MAX_CHARS")}
    return subprocess.run([sys.executable, "-m", "benchbox", *argv], capture_output=True, text=True, cwd=tmp_path,
                          env={**clean, "PYTHONPATH": str(REPO), **env}, timeout=300)


@pytest.mark.parametrize("value,traceback", [("no", False), ("off", False), ("FALSE", False), ("", False),
                                             ("yes", True), ("true", True), ("1", True)])
def test_benchbox_debug_values(tmp_path, value, traceback):
    done = _benchbox(tmp_path, {"BENCHBOX_DEBUG": value}, "eval", "no-such-encoder", "-t", "sickr-cosine",
                     "--no-save")
    assert "unknown encoder 'no-such-encoder'" in done.stderr
    assert done.stderr.startswith("Traceback") is traceback
    assert done.returncode == (1 if traceback else 2)


@pytest.mark.parametrize("env,names", [({"BENCHBOX_DEBUG": "maybe"}, "$BENCHBOX_DEBUG must be one of"),
                                       ({"BENCHBOX_MAX_CHARS": "lots"}, "$BENCHBOX_MAX_CHARS must be a positive"),
                                       ({"BENCHBOX_MAX_CHARS": "0"}, "not '0'")])
def test_a_bad_environment_variable_is_one_line_for_any_command(tmp_path, env, names):
    done = _benchbox(tmp_path, env, "list", "tasks")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(done.stderr.splitlines()) == 1 and names in done.stderr


@pytest.mark.parametrize("flags,names", [
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--retrieval-ci", "bogus"], "--retrieval-ci bogus: none of the tasks evaluated (sickr-cosine) reads it"),
    (["--retrieval-ties", "pessimistic"], "--retrieval-ties pessimistic: none of the tasks"),
    (["--text", "raw"], "--text raw: none of the tasks"),
    (["--features", "f.npz"], "--features f.npz: none of the tasks"),
])
def test_options_a_task_ignores_are_refused_before_any_work(tmp_path, capsys, flags, names):
    argv = ["eval", "tests.helpers:LetterCounts", "-t", "sickr-cosine", "--runs-dir", str(tmp_path / "runs"), *flags]
    before = files_under(tmp_path)
    outcome = run_cli(argv, tmp_path, lambda: capsys.readouterr().err)
    assert outcome.code == 2 and not outcome.traceback and len(outcome.error_lines()) == 1, outcome
    assert names in outcome.error_lines()[0] and files_under(tmp_path) == before


def test_an_overridden_flag_is_recorded_as_used(tmp_path, capsys, data_root):
    argv = ["eval", "tests.helpers:LetterCounts", "-t", "sts12:text=senteval", "--text", "raw", "--data-dir",
            str(data_root.root), "--runs-dir", str(tmp_path / "runs"), "--no-cache", "--bootstrap", "0"]
    outcome = run_cli(argv, tmp_path, lambda: capsys.readouterr().err)
    assert outcome.code == 0, outcome
    assert "warning: --text raw is overridden by -t TASK:KEY=VALUE for every task that reads it (sts12)" in outcome.stderr
    manifest = json.loads(next((tmp_path / "runs").glob("*/manifest.json")).read_text())
    assert manifest["options"] == {"seed": 1111, "bootstrap": 0, "device": "auto"}
    assert manifest["tasks"]["sts12"]["options"]["text"] == "senteval"


def test_neighbours_refuses_a_constant_encoder():
    constant = lambda sentences: np.ones((len(sentences), 3), np.float32)  # noqa: E731
    with pytest.raises(BenchboxError, match="all 3 embeddings of encoder 'flat' are identical"):
        neighbours({"flat": constant}, ["dog?"], ["a dog", "a cat", "a bird"], k=2, corpus_name="toy")

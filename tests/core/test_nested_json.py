"""Issue #26, the last tracebacks: a deeply nested run manifest or neighbours JSON (``RecursionError`` on the old
code) and Ctrl-C while the command line's modules import (a ``KeyboardInterrupt`` traceback from inside an
import on the old code) each end with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.core.test_hostile_inputs import files_under, run_cli

REPO = Path(__file__).resolve().parents[2]
NESTED = "[" * 100_000 + "]" * 100_000


def _one_line(outcome, name: str) -> None:
    assert outcome.code == 2 and not outcome.traceback, outcome
    errors = outcome.error_lines()
    assert len(errors) == 1 and outcome.stderr.strip().splitlines()[-1] == errors[0] and name in errors[0], outcome


def test_a_deeply_nested_run_manifest_is_one_line(tmp_path, capsys):
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(NESTED)
    before = files_under(tmp_path)
    for argv in (["runs", str(tmp_path / "runs")], ["leaderboard", str(tmp_path / "runs")]):
        _one_line(run_cli(argv, tmp_path, lambda: capsys.readouterr().err), str(run / "manifest.json"))
    assert files_under(tmp_path) == before


def test_a_deeply_nested_neighbours_file_is_one_line(tmp_path, capsys):
    from benchbox import run_tasks
    from tests.helpers import LetterCounts

    run = run_tasks(LetterCounts(), ["stsb-cosine"], cache=False).save(tmp_path / "runs")
    (tmp_path / "n.json").write_text(NESTED)
    argv = ["report", str(run), "--neighbours", str(tmp_path / "n.json"), "--out", str(tmp_path / "r.md")]
    _one_line(run_cli(argv, tmp_path, lambda: capsys.readouterr().err), str(tmp_path / "n.json"))
    assert not (tmp_path / "r.md").exists()


#: benchbox's command line with a Ctrl-C delivered exactly while ``benchbox.cli`` imports typer
CTRL_C_DURING_IMPORT = """
import builtins, os, signal, sys
real_import = builtins.__import__
def ctrl_c_at_typer(name, *args, **kwargs):
    if name == "typer" and not getattr(ctrl_c_at_typer, "sent", False):
        ctrl_c_at_typer.sent = True
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = ctrl_c_at_typer
sys.argv = ["benchbox", "list", "tasks"]
from benchbox.cli import main
main()
"""


def test_ctrl_c_while_modules_import_is_one_line_and_status_130(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", CTRL_C_DURING_IMPORT], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines() == ["error: interrupted while benchbox was starting; nothing was done"]
    assert proc.stdout == ""


def test_importing_benchbox_leaves_ctrl_c_alone():
    """The handler covers the imports alone: once ``benchbox`` or ``benchbox.cli`` is imported, Ctrl-C is
    Python's again (a library user, pytest)."""
    code = ("import signal, benchbox, benchbox.cli; benchbox.run_tasks; "
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)

"""Issue #26: one rule for output targets (``benchbox.storage.atomic``), and one line for every failed write.

On the old code every ``--json``/``--csv``/``--out`` target was replaced by rename: a symlink became a regular
file (the file it named was never written), ``--json /dev/full`` replaced the device node with a JSON file, a
FIFO's reader got nothing; and a full disk or standard output ended in an ``OSError`` traceback.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchbox.storage.atomic import write_text
from tests.core.test_hostile_inputs import device, files_under, run_cli

REPO = Path(__file__).resolve().parents[2]
HAS_DEV_FULL = Path("/dev/full").exists()


def _cli(capsys, cwd: Path, *argv: str):
    return run_cli(list(argv), cwd, lambda: capsys.readouterr().err)


def _one_line(outcome, names: str) -> str:
    assert outcome.code == 2 and not outcome.traceback, outcome
    errors = outcome.error_lines()
    assert len(errors) == 1 and outcome.stderr.strip().splitlines()[-1] == errors[0], outcome.stderr
    assert names in errors[0], errors[0]
    return errors[0]


def _subprocess(argv: list[str], cwd: Path, *, stdout=subprocess.PIPE, file_limit: int | None = None):
    """``benchbox ARGV`` as its own process (``file_limit``: the largest file it may write, in bytes)."""

    def limit() -> None:
        if file_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "benchbox", *argv], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=env, preexec_fn=limit, timeout=300)


def _only_error_line(proc, names: str) -> None:
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines() == [line for line in proc.stderr.strip().splitlines()
                                                  if line.startswith("error: ")], proc.stderr
    assert names in proc.stderr, proc.stderr


def test_a_symlinked_json_target_is_followed_and_stays_a_link(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert _cli(capsys, tmp_path, "list", "tasks", "--json", str(link)).code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["kind"] == "tasks"
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["real.json"]  # no temporary left


def test_a_dangling_symlink_writes_the_file_it_names(tmp_path, capsys):
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "new.csv")
    (tmp_path / "runs").mkdir()
    assert _cli(capsys, tmp_path, "runs", str(tmp_path / "runs"), "--csv", str(link)).code == 0
    assert link.is_symlink() and (tmp_path / "new.csv").read_text().startswith("run_id,")


def test_a_fifo_is_written_in_place(tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    outcome = _cli(capsys, tmp_path, "list", "encoders", "--json", str(fifo))
    reader.join(timeout=60)
    assert outcome.code == 0 and stat.S_ISFIFO(fifo.lstat().st_mode), outcome
    if not received:  # the old code renamed a file over the FIFO: unblock the reader
        with open(fifo, "w"):
            pass
    assert json.loads(received[0])["kind"] == "encoders"


def test_dev_null_stays_a_device(tmp_path, capsys):
    null = device(tmp_path, "null")
    assert _cli(capsys, tmp_path, "list", "tasks", "--json", str(null)).code == 0
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_a_folder_target_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    _one_line(_cli(capsys, tmp_path, "list", "tasks", "--json", str(tmp_path / "out")), str(tmp_path / "out"))
    with pytest.raises(IsADirectoryError):
        write_text(tmp_path / "out", "x")
    assert (tmp_path / "out").is_dir() and not list((tmp_path / "out").iterdir())


@pytest.mark.skipif(not HAS_DEV_FULL, reason="needs /dev/full")
def test_dev_full_as_target_is_one_line_and_stays_a_device(tmp_path, capsys):
    full = device(tmp_path, "full")
    _one_line(_cli(capsys, tmp_path, "list", "tasks", "--json", str(full)), f"{full}: No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DEV_FULL, reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["list", "tasks", "--json", "-"], ["list", "tasks"], ["runs", "runs", "--csv", "-"]])
def test_a_full_standard_output_is_one_line(tmp_path, argv):
    (tmp_path / "runs").mkdir()
    with open("/dev/full", "w") as full:
        proc = _subprocess(argv, tmp_path, stdout=full)
    _only_error_line(proc, "error: standard output: No space left on device")


@pytest.mark.slow
def test_a_write_past_the_file_size_limit_names_the_target_and_leaves_nothing(tmp_path):
    """EFBIG (RLIMIT_FSIZE) stands for ENOSPC/EDQUOT: the same write path fails the same way."""
    target = tmp_path / "tasks.json"
    target.write_text("old")
    proc = _subprocess(["list", "tasks", "--json", str(target)], tmp_path, file_limit=1000)
    _only_error_line(proc, f"error: {target}: File too large")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["tasks.json"]


def test_a_full_cache_leaves_no_half_shard(tmp_path):
    cache = tmp_path / "cache"
    argv = ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--cache-dir", str(cache), "--no-save", "-q"]
    proc = _subprocess(argv, tmp_path, file_limit=20_000)
    _only_error_line(proc, f"error: {cache}/")
    assert "File too large" in proc.stderr
    assert not [p for p in cache.rglob("*") if p.is_file() and p.name != ".benchbox-cache"]


def test_a_full_disk_on_report_names_the_report_and_leaves_nothing(tmp_path, capsys):
    from benchbox import run_tasks
    from tests.helpers import LetterCounts

    run = run_tasks(LetterCounts(), ["stsb-cosine"], cache=False).save(tmp_path / "runs")
    before = files_under(tmp_path)
    proc = _subprocess(["report", str(run), "--out", str(tmp_path / "r.md")], tmp_path, file_limit=2000)
    _only_error_line(proc, f"error: {tmp_path / 'r'}")  # the report or its first figure, r_figures/semantic.svg
    assert "File too large" in proc.stderr
    assert {p for p in files_under(tmp_path) if not p.endswith(".lock")} == set(before)

"""Stopping a study and resuming it (issue #25): Ctrl-C and SIGTERM stop the running cell with its children and
start no queued cell (exit 130 / 143), a second study on the same folder fails at once, ``--status`` reads the
cells from another shell, and the resume redoes only the unfinished cells with the numbers of an uninterrupted
run. Real ``benchbox study`` subprocesses; a gated encoder (tests/gated_encoder.py) holds the second cell
mid-evaluation until the test has done its part, so nothing depends on timing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchbox.study_cells import cell_folder, read_done, safe_name, wipe

ROOT = Path(__file__).resolve().parents[1]
STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 1

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "tests.gated_encoder:GatedBow"
options = { lowercase = "false" }

[[encoder]]
name = "glove-bow"
options = { lowercase = "false", vectors = "glove-6b-50d" }
"""
GATED = "02-tests.gated_encoder-GatedBow"


def _env(gate: Path) -> dict[str, str]:
    return {**os.environ, "BENCHBOX_TEST_GATE": str(gate),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _study(tmp_path: Path, name: str, gate: Path, *args: str) -> subprocess.Popen:
    path = tmp_path / f"{name}.toml"
    path.write_text(STUDY)
    return subprocess.Popen([sys.executable, "-m", "benchbox", "study", str(path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_env(gate), cwd=ROOT)


def _wait_for(predicate, process: subprocess.Popen, what: str, seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert process.poll() is None, f"the study ended before {what}: {process.communicate()[0]}"
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.1)


def _evaluating(folder: Path) -> bool:
    """Whether the gated cell's `benchbox eval` has started (its stage marker says so and its process runs)."""
    try:
        return json.loads((folder / "stage.json").read_text())["stage"] == "evaluating" and bool(_processes(folder))
    except (OSError, ValueError):
        return False


def _processes(folder: Path) -> list[int]:
    """Live processes whose command line names ``folder`` (a cell's `benchbox eval`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(folder) in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def _comparison(folder: Path) -> dict:
    """The comparisons and models of a study, run ids masked (two models of one fingerprint are told apart by
    their run ids, which differ between two executions)."""
    data = json.loads((folder / "comparison.json").read_text())
    text = json.dumps({"comparisons": data["comparisons"], "models": data["models"]})
    return json.loads(re.sub(r"/\d{8}-\d{6}-[\w-]+?-[0-9a-f]{6}", "/<run>", text))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    """The comparison of the study run without interruption (the gate open from the start)."""
    tmp = tmp_path_factory.mktemp("whole")
    gate = tmp / "gate"
    gate.touch()
    process = _study(tmp, "whole", gate)
    output, _ = process.communicate(timeout=400)
    assert process.returncode == 0, output
    return _comparison(tmp / "whole")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the cells' processes")
def test_sigterm_stops_the_cell_and_its_children_and_the_resume_gives_the_uninterrupted_numbers(tmp_path, uninterrupted):
    gate = tmp_path / "gate"
    process = _study(tmp_path, "s", gate)
    cells = tmp_path / "s" / "cells"
    _wait_for(lambda: _evaluating(cells / GATED), process, "the gated cell's evaluation")
    children = _processes(cells / GATED)

    second = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml")], capture_output=True,
                            text=True, env=_env(gate), cwd=ROOT, timeout=120)
    assert second.returncode == 2 and "another benchbox process is writing into" in second.stderr
    errors = [line for line in second.stderr.splitlines() if not line.startswith("warning:")]  # (the test plugin's)
    assert len(errors) == 1 and GATED in os.listdir(cells)

    status = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--status"],
                            capture_output=True, text=True, env=_env(gate), cwd=ROOT, timeout=120)
    assert status.returncode == 0, status.stderr
    assert "a study is running here" in status.stdout and "cells: 1 queued, 1 evaluating, 1 done" in status.stdout

    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 143, output
    assert "interrupted by SIGTERM: 1 cells done and kept, 2 stopped or not started" in output
    assert not _processes(cells / GATED) and not any(Path(f"/proc/{pid}").exists() for pid in children)
    assert sorted(os.listdir(cells)) == ["01-glove-bow", GATED]  # the queued cell never started
    assert not (tmp_path / "s" / "comparison.json").exists()
    status = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--status"],
                            capture_output=True, text=True, env=_env(gate), cwd=ROOT, timeout=120)
    assert "stopped" in status.stdout and "no study is running here" in status.stdout

    stamp = (cells / "01-glove-bow" / "done.json").stat().st_mtime_ns
    gate.touch()
    resumed = _study(tmp_path, "s", gate)
    output, _ = resumed.communicate(timeout=400)
    assert resumed.returncode == 0, output
    assert "cells: 1 done, 2 to run" in output
    assert (cells / "01-glove-bow" / "done.json").stat().st_mtime_ns == stamp  # not redone
    assert _comparison(tmp_path / "s") == uninterrupted


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the cells' processes")
def test_ctrl_c_cancels_the_queued_cells_and_exits_130(tmp_path):
    gate = tmp_path / "gate"
    process = _study(tmp_path, "s", gate)
    cells = tmp_path / "s" / "cells"
    _wait_for(lambda: _evaluating(cells / GATED), process, "the gated cell's evaluation")
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    assert "interrupted by SIGINT" in output and "Traceback" not in output
    assert not _processes(cells / GATED)
    assert sorted(os.listdir(cells)) == ["01-glove-bow", GATED]


def test_a_cell_name_never_leads_outside_the_cells_folder(tmp_path):
    """`name = "x/../../../victim"` once made the resume's wipe delete ./victim."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    out = tmp_path / "a" / "b" / "study"
    assert safe_name("x/../../../victim") == "x-victim" and safe_name("../..") == "cell"
    with pytest.raises(Exception, match="would leave"):
        cell_folder(out, "x/../../../victim")
    with pytest.raises(Exception, match="would leave"):
        cell_folder(out, "..")
    (out / "cells").mkdir(parents=True)
    link = out / "cells" / "01-x"
    link.symlink_to(victim)  # a cell folder replaced by a link: the wipe removes the link, not what it names
    wipe(cell_folder(out, "01-x"))
    assert not link.exists() and (victim / "keep.txt").read_text() == "mine"


def test_a_corrupt_done_marker_redoes_the_cell_with_one_line(tmp_path):
    folder = tmp_path / "cell"
    folder.mkdir()
    (folder / "done.json").write_bytes(b"\x00{not json")
    assert read_done(folder) == (None, "its done.json is unreadable (UnicodeDecodeError)") or \
        read_done(folder)[1].startswith("its done.json is unreadable")
    (folder / "done.json").write_text('{"run": "/nonexistent/run"}')
    assert read_done(folder) == (None, "the run its done.json names is gone (/nonexistent/run)")

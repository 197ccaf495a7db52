"""Stopping a study and resuming it (issue #25): Ctrl-C and SIGTERM stop the running cell with its children and
start no queued cell (exit 130 / 143), a second study on the same folder fails at once, ``--status`` reads the
cells from another shell, and the resume redoes only the unfinished cells with the numbers of an uninterrupted
run. Real ``benchbox study`` subprocesses; a gated encoder (tests/gated_encoder.py) holds the second cell
mid-evaluation until the test has done its part, so nothing depends on timing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.study.cells import cell_folder, read_done, safe_name, wipe
from tests.study_helpers import FIRST, GATED, ROOT, comparison, env, evaluating, processes, stopped_at_the_end, study, wait_for


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    """The comparison of the study run without interruption (the gate open from the start)."""
    tmp = tmp_path_factory.mktemp("whole")
    gate = tmp / "gate"
    gate.touch()
    process = study(tmp, "whole", gate)
    output, _ = process.communicate(timeout=400)
    assert process.returncode == 0, output
    return comparison(tmp / "whole")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the cells' processes")
def test_sigterm_stops_the_cell_and_its_children_and_the_resume_gives_the_uninterrupted_numbers(tmp_path, uninterrupted):
    gate = tmp_path / "gate"
    process = study(tmp_path, "s", gate)
    with stopped_at_the_end(process):
        cells = tmp_path / "s" / "cells"
        wait_for(lambda: evaluating(cells / GATED), process, "the gated cell's evaluation")
        children = processes(cells / GATED)

        second = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml")], capture_output=True,
                                text=True, env=env(gate), cwd=ROOT, timeout=120)
        assert second.returncode == 2 and "another benchbox process is writing into" in second.stderr
        errors = [line for line in second.stderr.splitlines() if not line.startswith("warning:")]  # (the test plugin's)
        assert len(errors) == 1 and GATED in os.listdir(cells)

        status = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--status"],
                                capture_output=True, text=True, env=env(gate), cwd=ROOT, timeout=120)
        assert status.returncode == 0, status.stderr
        assert "a study is running here" in status.stdout and "cells: 1 queued, 1 evaluating, 1 done" in status.stdout

        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 143, output
        assert "interrupted by SIGTERM: 1 cells done and kept, 2 stopped or not started" in output
        assert not processes(cells / GATED) and not any(Path(f"/proc/{pid}").exists() for pid in children)
        assert sorted(os.listdir(cells)) == sorted([FIRST, GATED])  # the queued cell never started
        assert not (tmp_path / "s" / "comparison.json").exists()
        status = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--status"],
                                capture_output=True, text=True, env=env(gate), cwd=ROOT, timeout=120)
        assert "stopped" in status.stdout and "no study is running here" in status.stdout

        stamp = (cells / FIRST / "done.json").stat().st_mtime_ns
        gate.touch()
        resumed = study(tmp_path, "s", gate)
        output, _ = resumed.communicate(timeout=400)
        assert resumed.returncode == 0, output
        assert "cells: 1 done, 2 to run" in output
        assert (cells / FIRST / "done.json").stat().st_mtime_ns == stamp  # not redone
        assert comparison(tmp_path / "s") == uninterrupted


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the cells' processes")
def test_ctrl_c_cancels_the_queued_cells_and_exits_130(tmp_path):
    gate = tmp_path / "gate"
    process = study(tmp_path, "s", gate)
    with stopped_at_the_end(process):
        cells = tmp_path / "s" / "cells"
        wait_for(lambda: evaluating(cells / GATED), process, "the gated cell's evaluation")
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 130, output
        assert "interrupted by SIGINT" in output and "Traceback" not in output
        assert not processes(cells / GATED)
        assert sorted(os.listdir(cells)) == sorted([FIRST, GATED])


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


def test_a_study_redoes_a_cell_whose_done_marker_is_corrupt_and_says_so_in_one_line(tmp_path, monkeypatch):
    """A corrupt `done.json` once ended the study in a traceback."""
    from benchbox.study import run as study_module

    ran = []

    def fake_cell(cell, study, processes=None):
        ran.append(cell.name)
        return {"cell": cell.name, "run": str(tmp_path / cell.name), "seconds": 1.0}

    monkeypatch.setattr(study_module, "run_cell", fake_cell)
    monkeypatch.setattr(study_module, "_compare_and_report", lambda *args: {})
    cells = [study_module.Cell("01-a", "glove-bow"), study_module.Cell("02-b", "glove-bow")]
    study = study_module.Study(tmp_path / "s.toml", tmp_path / "s", ["stsb-cosine"], cells, None, 1, None)
    (tmp_path / "s" / "cells" / "01-a").mkdir(parents=True)
    (tmp_path / "s" / "cells" / "01-a" / "done.json").write_text('{"run": ')
    lines = []
    study_module.run_study(study, log=lines.append)
    assert ran == ["01-a", "02-b"]
    assert "cell 01-a: its done.json is unreadable (JSONDecodeError); it is run again" in lines

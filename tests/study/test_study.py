"""``benchbox study``: a real two-cell study (GloVe-BOW cased vs uncased lookup on the embedded STS-B and SICK),
interrupted by SIGKILL and resumed without redoing the finished cell; failures; progress lines. Bad study files:
tests/study/test_study_schema.py; stopping and resuming: tests/study/test_study_stop.py; Ray: tests/study/test_study_ray.py."""

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

from tests.study_helpers import cell_names

STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 1

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "glove-bow"
options = {{ lowercase = "false" }}
{extra}
"""


def _study(tmp_path: Path, name: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(STUDY.format(extra=extra))
    return path


def _run(path: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchbox", "study", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **kwargs)


def _finished(process: subprocess.Popen) -> int:
    """The exit status of a study run to completion, its output pipe read and closed."""
    process.communicate(timeout=300)
    return process.returncode


def _without_run_ids(text: str) -> str:
    """A report without what differs between two executions: run ids, creation times, temporary paths."""
    text = re.sub(r"\d{8}-\d{6}-[\w-]+?-[0-9a-f]{6}", "<run>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", "<time>", text)
    return re.sub(r"/tmp\S*", "<path>", text)


@pytest.mark.slow
def test_study_killed_and_resumed_gives_the_uninterrupted_result(tmp_path):
    whole = _study(tmp_path, "whole")
    assert _finished(_run(whole)) == 0
    killed = _study(tmp_path, "killed")
    process = _run(killed)
    first = tmp_path / "killed" / "cells" / cell_names(killed.read_text())[0]
    deadline = time.time() + 240
    while not (first / "done.json").is_file():
        assert process.poll() is None and time.time() < deadline, "the first cell never finished"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the whole process group: the study and its running cell
    process.communicate()
    assert not (tmp_path / "killed" / "comparison.json").exists()
    stamp = (first / "done.json").stat().st_mtime_ns, (first / "log.txt").stat().st_mtime_ns
    resumed = _run(killed)
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    assert "cells: 1 done, 1 to run" in output
    assert ((first / "done.json").stat().st_mtime_ns, (first / "log.txt").stat().st_mtime_ns) == stamp  # not redone
    one, two = (json.loads((tmp_path / n / "comparison.json").read_text()) for n in ("whole", "killed"))
    assert one["comparisons"] == two["comparisons"] and one["models"] == two["models"]
    reports = [_without_run_ids((tmp_path / n / "report.md").read_text()) for n in ("whole", "killed")]
    assert reports[0] == reports[1]


@pytest.mark.slow
def test_a_failed_cell_is_reported_and_does_not_stop_the_others(tmp_path):
    path = _study(tmp_path, "failing", extra='\n[[encoder]]\nname = "glove-bow"\noptions = { vectors = "nonexistent-vectors" }\n')
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1
    assert f"cell {cell_names(path.read_text())[2]} failed: exit status 2" in result.stdout
    assert "nonexistent-vectors" in result.stdout
    assert (tmp_path / "failing" / "comparison.json").is_file()  # the two good cells were compared
    assert "cells: 2 done, 0 running, 1 failed" in result.stderr


def test_a_study_logs_progress_while_cells_run(tmp_path, monkeypatch):
    """While a cell runs, progress lines come at the heartbeat's interval (here a fake clock: 60 s a reading, and
    a 0.01 s wait), with an ETA from the mean duration of the finished cells; the last line names what was
    written and what to run next. No wall-clock assertion: the slow cell waits until the line it needs was
    logged."""
    import threading

    from benchbox.study import run as study_module
    from benchbox.console import Heartbeat

    release = threading.Event()

    def fake_cell(cell, study, processes=None):
        if cell.name == "slow":
            assert release.wait(timeout=60), "no progress line while the slow cell ran"
        return {"cell": cell.name, "run": str(tmp_path / cell.name), "seconds": 120.0}

    written = {"comparison": str(tmp_path / "comparison.json"), "csv": str(tmp_path / "comparison.csv"),
               "report": str(tmp_path / "report.md"), "headlines": ""}
    monkeypatch.setattr(study_module, "run_cell", fake_cell)
    monkeypatch.setattr(study_module, "_compare_and_report", lambda *args: written)
    lines = []

    def log(message):
        lines.append(message)
        if "1 done, 1 running, 0 failed" in message and "ETA" in message:
            release.set()

    readings = iter(range(0, 10**6, 60))
    study = study_module.Study(tmp_path / "s.toml", tmp_path, ["stsb-cosine"],
                               [study_module.Cell("fast", "glove-bow"), study_module.Cell("slow", "glove-bow")],
                               None, 2, None)
    result = study_module.run_study(study, log=log, heartbeat=Heartbeat(0.01, clock=lambda: next(readings)))
    assert result["failed"] == {} and len(result["runs"]) == 2
    assert lines[0] == "cells: 0 done, 2 to run, 0 failed"
    beats = [line for line in lines if line.startswith("cells: 1 done, 1 running, 0 failed; ")]
    assert beats and "min elapsed, ETA about 2 min (mean cell 2 min)" in beats[-1]
    assert lines[-2].startswith("cells: 2 done, 0 running, 0 failed; ") and "ETA" not in lines[-2]
    assert lines[-1] == (f"study {tmp_path / 's.toml'}: 2 cells done, 0 failed; wrote {written['comparison']}, "
                         f"{written['csv']} and {written['report']}; next: read {written['report']}; after editing "
                         f"{tmp_path / 's.toml'}, `benchbox study {tmp_path / 's.toml'} --out {tmp_path}` runs "
                         "only the cells whose identity changed")

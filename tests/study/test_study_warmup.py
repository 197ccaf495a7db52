"""The study's warm-up (benchbox.study.warmup): the comparison's and the report's imports done while the cells run.
It starts only after the first cell's process has started, is waited for before the comparison, never starts
when no cell runs, leaves comparison.json, comparison.csv and report.md byte-identical to a comparison made
without it, and covers what the comparison and the report import. No timing is asserted."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchbox.study import run as study_module
from benchbox.study import warmup as warmup_module
from benchbox.study.cells import Processes

STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 2

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "glove-bow"
options = { lowercase = "false" }
"""
OUTPUTS = ["comparison.json", "comparison.csv", "report.md"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A real two-cell study run to the end by `benchbox study` (with its warm-up); its folder."""
    tmp = tmp_path_factory.mktemp("study")
    path = tmp / "s.toml"
    path.write_text(STUDY)
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path), "-q"], capture_output=True,
                            text=True, timeout=600, env={**os.environ, "BENCHBOX_CACHE": str(tmp / "cache")})
    assert result.returncode == 0, result.stderr
    return tmp / "s"


def _in_a_fresh_process(finished: Path, out: Path, warm: bool) -> list[str]:
    """``_compare_and_report`` on the finished study's cells into ``out``, in a new interpreter that imported what
    ``benchbox study`` has imported when its cells end (the CLI, the lock), after :func:`warm` if ``warm``;
    returns the modules the comparison and the report imported."""
    script = f"""
import json, sys
from pathlib import Path
import benchbox.cli, filelock
from benchbox.study.run import load_study, _compare_and_report
from benchbox.study.warmup import warm
study = load_study({str(finished.parent / 's.toml')!r}, {str(out)!r})
runs = [str(Path({str(finished)!r}) / json.loads((Path({str(finished)!r}) / 'cells' / c.name / 'done.json').read_text())['run'])
        for c in study.cells]
if {warm!r}:
    warm(False)
before = set(sys.modules)
_compare_and_report(study, study.cells, runs, lambda line: None)
print(json.dumps(sorted(set(sys.modules) - before)))
"""
    out.mkdir(parents=True)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_outputs_are_byte_identical_with_and_without_the_warmup(finished, tmp_path):
    _in_a_fresh_process(finished, tmp_path / "cold", warm=False)
    for name in OUTPUTS:
        assert (finished / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name
    figures = sorted(p.name for p in (finished / "report_figures").iterdir())
    assert figures and figures == sorted(p.name for p in (tmp_path / "cold" / "report_figures").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(finished / "report_figures", tmp_path / "cold" / "report_figures",
                                           figures, shallow=False)
    assert not mismatch and not errors


@pytest.mark.slow
def test_the_warmup_leaves_no_heavy_import_to_the_comparison_and_the_report(finished, tmp_path):
    """After the warm-up, the comparison and the report import no new library and nothing more of scipy,
    matplotlib, statsmodels or jinja2 (a lazy import added to them later shows here); of benchbox, only the
    task modules, which the study resolves by name (the warm-up resolves nothing, so no plugin warning moves)."""
    cold = _in_a_fresh_process(finished, tmp_path / "cold", warm=False)
    assert any(m.startswith("matplotlib.") for m in cold) and "benchbox.comparison.compare" in cold  # it matters
    after = _in_a_fresh_process(finished, tmp_path / "warm", warm=True)
    heavy = [m for m in after if m.split(".")[0] in ("scipy", "matplotlib", "statsmodels", "jinja2", "deepsig",
                                                     "torch", "sklearn", "PIL")]
    assert heavy == []
    assert [m for m in after if m.startswith("benchbox.") and not m.startswith("benchbox.tasks")] == []
    for name in OUTPUTS:
        assert (tmp_path / "warm" / name).read_bytes() == (finished / name).read_bytes(), name


def test_checking_the_study_leaves_the_statistics_libraries_to_the_warmup(finished):
    """The check before the first cell (the command line, then ``load_study``: tasks resolved, options and
    encoders checked) imports neither scipy.stats nor statsmodels: benchbox.stats and the STS tasks import them
    inside the functions that compute, so a study starts about a second sooner and the warm-up imports them
    while the cells run (the test above shows the comparison then imports nothing of them)."""
    script = f"""
import json, sys
import benchbox.cli
from benchbox.study.run import load_study
study = load_study({str(finished.parent / 's.toml')!r}, {str(finished.parent / 'checked')!r})
assert [c.encoder for c in study.cells] == ['glove-bow', 'glove-bow'], study.cells
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'statsmodels' or m.startswith('scipy.stats'))))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == []


@pytest.mark.slow
def test_seed_groups_warm_the_seed_tests_too():
    script = ("import sys; from benchbox.study.warmup import warm; warm(False); a = 'deepsig' in sys.modules; "
              "warm(True); print(a, 'deepsig' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


def _fake_study(tmp_path, monkeypatch, events: list[str], done: tuple[str, ...] = ()):
    """A study of two cells whose fake ``run_cell`` starts a real (trivial) process through the study's
    :class:`Processes`, a fake warm-up and a fake comparison, each recording what happened in ``events``."""
    lock = threading.Lock()

    def record(event: str) -> None:
        with lock:
            events.append(event)

    def fake_cell(cell, study, processes=None):
        record(f"cell {cell.name} starts")
        process = subprocess.Popen([sys.executable, "-c", "pass"])
        processes.add(process)
        process.wait()
        processes.discard(process)
        return {"cell": cell.name, "run": str(tmp_path / cell.name), "seconds": 1.0}

    def fake_warm(seeds):
        record("warm-up begins")
        record("warm-up ends")

    def fake_compare(study, cells, runs, log):
        record("compare")
        return {}

    monkeypatch.setattr(study_module, "run_cell", fake_cell)
    monkeypatch.setattr(warmup_module, "warm", fake_warm)
    monkeypatch.setattr(study_module, "_compare_and_report", fake_compare)
    cells = [study_module.Cell("01-a", "glove-bow"), study_module.Cell("02-b", "glove-bow")]
    study = study_module.Study(tmp_path / "s.toml", tmp_path / "s", ["stsb-cosine"], cells, None, 1, None)
    for name in done:  # cells finished by an earlier run
        folder = tmp_path / "s" / "cells" / name
        folder.mkdir(parents=True)
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
        (folder / "done.json").write_text(json.dumps({"run": str(tmp_path / name), "key": {}}))
    return study


def test_the_warmup_starts_after_the_first_cell_and_ends_before_the_comparison(tmp_path, monkeypatch):
    import gc

    events: list[str] = []
    study = _fake_study(tmp_path, monkeypatch, events)
    frozen = gc.get_freeze_count()
    study_module.run_study(study)
    assert gc.get_freeze_count() == frozen  # only the CLI freezes the collector, at its exit: never a caller's
    assert events.index("cell 01-a starts") < events.index("warm-up begins")
    assert events.count("warm-up begins") == 1
    assert events.index("warm-up ends") < events.index("compare") and events[-1] == "compare"


def test_a_study_with_no_cell_to_run_starts_no_warmup(tmp_path, monkeypatch):
    events: list[str] = []
    study = _fake_study(tmp_path, monkeypatch, events, done=("01-a", "02-b"))
    study_module.run_study(study)
    assert events == ["compare"]


def test_processes_call_on_start_once_and_never_after_a_stop():
    started = []
    processes = Processes(on_start=lambda: started.append(1))
    for _ in range(2):
        process = subprocess.Popen([sys.executable, "-c", "pass"])
        processes.add(process)
        process.wait()
        processes.discard(process)
    assert started == [1]

    stopped = Processes(on_start=lambda: started.append(2))
    stopped.stop()
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    stopped.add(process)  # started while the stop was under way: terminated, and no warm-up
    assert process.wait(timeout=30) != 0 and started == [1]
    stopped.mark_started()
    assert started == [1]

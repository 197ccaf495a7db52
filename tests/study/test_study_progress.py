"""The cells' states as the live table and `benchbox study --status` show them, read from the cells' folders
alone (issue #25)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from rich.console import Console

from benchbox.storage.jsonio import write_json
from benchbox.storage.runs import MANIFEST
from benchbox.study.run import Cell, Study
from benchbox.study.progress import cell_rows, cells_table, minutes


def _study(tmp_path: Path) -> Study:
    cells = [Cell(name, "glove-bow", seed) for name, seed in
             (("done", None), ("failed", None), ("training", 1), ("evaluating", 2), ("queued", 3))]
    return Study(tmp_path / "s.toml", tmp_path / "s", ["stsb-cosine"], cells, None, 2, None)


def _markers(study: Study) -> None:
    cells = study.out / "cells"
    run = study.out / "runs" / "r"
    run.mkdir(parents=True)
    (run / MANIFEST).write_text("{}")
    for name in ("done", "failed", "training", "evaluating"):
        (cells / name).mkdir(parents=True)
    now = time.time()
    write_json(cells / "done" / "done.json", {"run": str(run), "seconds": 125.0})
    write_json(cells / "failed" / "failed.json", {"reason": "exit status 2", "since": now - 10, "seconds": 10.0})
    write_json(cells / "training" / "stage.json", {"stage": "training", "since": now - 30})
    (cells / "training" / "log.txt").write_text("$ benchbox train ...\nstep 10/40 epoch 1 loss 0.5\n"
                                                "step 20/80 epoch 1 loss 0.4 lr 1e-3 5.0 captions/s eta 1.0 min\n")
    write_json(cells / "evaluating" / "stage.json", {"stage": "evaluating", "since": now - 200})


def test_each_state_comes_from_the_cells_folder(tmp_path):
    study = _study(tmp_path)
    _markers(study)
    rows = {r["cell"]: r for r in cell_rows(study, running=True)}
    assert {name: r["state"] for name, r in rows.items()} == {
        "done": "done", "failed": "failed", "training": "training", "evaluating": "evaluating", "queued": "queued"}
    assert rows["done"]["seconds"] == 125.0 and 29 <= rows["training"]["seconds"] < 100
    assert rows["training"]["done"] == 0.25 and 87 <= rows["training"]["eta"] < 300  # 3 × its 30 s so far
    stopped = {r["cell"]: r["state"] for r in cell_rows(study, running=False)}
    assert stopped["training"] == stopped["evaluating"] == "stopped"  # caught mid-way, and no study runs


def test_the_table_lists_every_cell_with_its_state_and_elapsed_time(tmp_path):
    study = _study(tmp_path)
    _markers(study)
    console = Console(width=120, record=True, file=open(tmp_path / "table.txt", "w"))
    console.print(cells_table(study, running=True))
    text = console.export_text()
    assert "cells: 1 queued, 1 training, 1 evaluating, 1 done, 1 failed" in text
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("│")}
    assert "2 min" in rows["done"] and "3 min" in rows["evaluating"]
    assert re.search(r"training 25% +│ +30 s +│ +2 min", rows["training"])  # 90 s to go at its pace


def test_a_corrupt_marker_reads_as_not_started(tmp_path):
    study = _study(tmp_path)
    (study.out / "cells" / "done").mkdir(parents=True)
    (study.out / "cells" / "done" / "done.json").write_bytes(b"\xff")
    (study.out / "cells" / "training").mkdir(parents=True)
    (study.out / "cells" / "training" / "stage.json").write_text("[1, 2")
    states = {r["cell"]: r["state"] for r in cell_rows(study, running=True)}
    assert states["done"] == states["training"] == "queued"


def test_the_eta_counts_down_while_a_cell_runs():
    """Issue #41: the ETA stood still while a cell ran; it is the mean cell's duration less what the running cells
    have run, spread over the cells that run at once."""
    from benchbox.console import Heartbeat
    from benchbox.study.progress import Progress

    elapsed = [20.0]
    progress = Progress(1, Heartbeat(30.0), lambda line: None, running=lambda: list(elapsed))
    progress.finished(80.0)
    assert progress.eta(1) == ", ETA about 60 s (mean cell 80 s)"
    elapsed[0] = 50.0
    assert progress.eta(1) == ", ETA about 30 s (mean cell 80 s)"
    assert progress.eta(3) == f", ETA about {minutes(30 + 2 * 80)} (mean cell 80 s)"  # one at a time


def test_running_seconds_are_read_from_the_cells_folders(tmp_path):
    from benchbox.study.progress import running_seconds

    study = _study(tmp_path)
    _markers(study)
    assert sorted(round(s) for s in running_seconds(study)) == [30, 200]

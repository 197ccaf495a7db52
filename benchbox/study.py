"""``benchbox study STUDY.toml``: train what is missing, evaluate, compare and report, in parallel and resumable.

A study file declares the tasks, the encoders and the comparison::

    [study]
    tasks = ["semantic"]          # task names or groups
    baseline = "glove-bow"        # optional: compare every other model with it (else every pair)
    jobs = 2                      # optional: cells at once (default: CPU count)

    [[encoder]]
    name = "glove-bow"            # a registered encoder, evaluated as it is

    [[encoder]]
    name = "char-gru"             # a trained encoder: one cell per seed, `benchbox train <name> ... --seed S`
    seeds = [1, 2, 3]
    train = { dataset = "flickr8k", visual = "cluster", hidden = 64, epochs = 1, cycle-epochs = 1 }

    [[encoder]]
    run = "runs/some-eval-run"    # an existing evaluation run (relative to the study file)

Every encoder × seed is a *cell*, run as ``benchbox`` subprocesses (train, then eval) in the cell's folder
``<out>/cells/<cell>/`` with its log in ``log.txt``. A cell that finished writes ``done.json`` last (atomically)
and is never redone; a cell without it is wiped and restarted from the beginning. A failed cell is reported
with the tail of its log and does not stop the others; the comparison and the report use the cells that
finished, and the study exits non-zero if any failed. While cells run, a plain progress line is logged at the
steady interval of :class:`benchbox.console.Heartbeat` (cells done, running, failed and queued, the time
elapsed and, once a cell has finished, a rough ETA from the mean duration of the finished cells), so a study
whose output goes to a file is never silent for long; the last line names what was written and what to run
next. Cells run on a local pool of ``jobs`` worker threads,
each driving one subprocess, or, with ``ray_address`` (``benchbox study --ray ADDRESS``; the optional extra
``benchbox[ray]``), as Ray tasks (one CPU each) on an existing Ray cluster, whose nodes must see the study
folder at the same path (a shared file system) and have benchbox installed; the study file is the same. The outputs: ``<out>/comparison.json``, ``comparison.csv`` (+ ``.claims.csv``) and
``report.md``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchbox.console import Heartbeat
from benchbox.errors import BenchboxError
from benchbox.jsonio import write_json
from benchbox.store import MANIFEST

DONE = "done.json"
LOG = "log.txt"
TRAIN_KEYS = {"dataset", "visual", "features", "hidden", "epochs", "cycle-epochs", "batch-size", "loss", "margin",
              "lr-max", "lr-min", "max-captions", "threads"}


@dataclass(frozen=True)
class Cell:
    """One encoder × seed: its folder name, the train command (if any) and the encoder to evaluate."""

    name: str
    encoder: str
    seed: int | None = None
    train: dict[str, Any] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    run: str | None = None
    #: the model this cell is a seed of, when its [[encoder]] has several seeds
    group: str | None = None


@dataclass(frozen=True)
class Study:
    path: Path
    out: Path
    tasks: list[str]
    cells: list[Cell]
    baseline: str | None
    jobs: int
    data_dir: str | None


def _fail(path: Path, message: str) -> BenchboxError:
    return BenchboxError(f"{path}: {message}")


def load_study(path: str | os.PathLike, out: str | os.PathLike | None = None) -> Study:
    """Read and check a study file (module docstring)."""
    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchboxError(f"cannot read the study file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"not valid TOML: {exc}") from None
    head = spec.get("study", {})
    tasks = head.get("tasks")
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, str) for t in tasks):
        raise _fail(path, 'name the tasks: [study] tasks = ["semantic"]')
    cells: list[Cell] = []
    for i, entry in enumerate(spec.get("encoder", []), 1):
        unknown = set(entry) - {"name", "seeds", "train", "options", "run"}
        if unknown:
            raise _fail(path, f"encoder {i}: unknown keys {', '.join(sorted(unknown))} "
                              "(use name, seeds, train, options, run)")
        if "run" in entry:
            run = (path.parent / entry["run"]).resolve()
            if not (run / MANIFEST).is_file():
                raise _fail(path, f"encoder {i}: {run} is not a benchbox run")
            cells.append(Cell(f"run-{i}-{run.name}", run.name, run=str(run)))
            continue
        name = entry.get("name")
        if not isinstance(name, str):
            raise _fail(path, f"encoder {i}: give a name (an encoder) or a run (a run folder)")
        train = entry.get("train", {})
        bad = set(train) - TRAIN_KEYS
        if bad:
            raise _fail(path, f"encoder {i}: unknown train options {', '.join(sorted(bad))}")
        options = {str(k): str(v) for k, v in entry.get("options", {}).items()}
        seeds = entry.get("seeds", [None] if not train else [0])
        if not isinstance(seeds, list) or not seeds:
            raise _fail(path, f"encoder {i}: seeds must be a list of integers")
        group = f"{name} ({len(seeds)} seeds)" if len(seeds) > 1 else None
        if group and any(c.group == group for c in cells):
            group = f"{group} #{i}"
        for seed in seeds:
            label = f"{i:02d}-{name}" + (f"-seed{seed}" if seed is not None else "")
            cells.append(Cell(label, name, seed, dict(train), options, group=group))
    if len(cells) < 2:
        raise _fail(path, "declare at least two encoders ([[encoder]] tables) to compare")
    jobs = head.get("jobs", os.cpu_count() or 1)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise _fail(path, f"jobs must be a whole number of at least 1, not {jobs!r}")
    out_dir = Path(out) if out else path.parent / head.get("out", path.stem)
    data_dir = head.get("data-dir")
    return Study(path, out_dir, tasks, cells, head.get("baseline"), jobs, data_dir)


def cell_commands(cell: Cell, study: Study, folder: Path) -> list[list[str]]:
    """The ``benchbox`` command lines of one cell: train (if it trains), then eval."""
    base = [sys.executable, "-m", "benchbox"]
    data = ["--data-dir", study.data_dir] if study.data_dir else []
    commands = []
    target = cell.encoder
    if cell.train:
        flags = [x for k, v in cell.train.items() for x in (f"--{k}", str(v))]
        seed = ["--seed", str(cell.seed)] if cell.seed is not None else []
        commands.append([*base, "train", cell.encoder, *flags, *seed, *data, "--out", str(folder / "train"), "-q"])
        target = str(folder / "train")
    encoder_options = [x for k, v in cell.options.items() for x in ("-e", f"{k}={v}")]
    tasks = [x for t in study.tasks for x in ("--task", t)]
    commands.append([*base, "eval", target, *tasks, *encoder_options, *data, "--runs-dir", str(folder / "runs"), "-q"])
    return commands


def run_cell(cell: Cell, study: Study) -> dict[str, Any]:
    """Run one cell to completion in a clean folder; returns its ``done.json`` record (or raises on failure),
    with the seconds it took."""
    folder = study.out / "cells" / cell.name
    if cell.run is not None:
        return {"cell": cell.name, "run": cell.run}
    started = time.monotonic()
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted cell restarts from the beginning
    folder.mkdir(parents=True)
    with open(folder / LOG, "w", encoding="utf-8") as log:
        for command in cell_commands(cell, study, folder):
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode
            if code != 0:
                raise RuntimeError(f"exit status {code}")
    runs = sorted(p for p in (folder / "runs").iterdir() if (p / MANIFEST).is_file())
    if len(runs) != 1:
        raise RuntimeError(f"expected one evaluation run in {folder / 'runs'}, found {len(runs)}")
    record = {"cell": cell.name, "run": str(runs[0]), "seconds": round(time.monotonic() - started, 1)}
    write_json(folder / DONE, record, sort_keys=True)
    return record


def _done(cell: Cell, study: Study) -> dict[str, Any] | None:
    if cell.run is not None:
        return {"cell": cell.name, "run": cell.run}
    marker = study.out / "cells" / cell.name / DONE
    return json.loads(marker.read_text()) if marker.is_file() else None


def _log_tail(cell: Cell, study: Study, lines: int = 15) -> str:
    path = study.out / "cells" / cell.name / LOG
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.is_file() else "(no log)"


#: what a pool yields: (the cell that finished, its result getter, cells running, cells queued); (None, None,
#: running, queued) when ``wait_seconds`` passed without one finishing
Event = tuple[Cell | None, Callable[[], dict[str, Any]] | None, int, int]


def _local_pool(cells: list[Cell], study: Study, wait_seconds: float) -> Iterator[Event]:
    """Events (:data:`Event`) as cells finish on a pool of ``study.jobs`` threads, waiting at most
    ``wait_seconds`` at a time (a blocking wait, no polling)."""
    with ThreadPoolExecutor(max_workers=study.jobs) as pool:
        futures = {pool.submit(run_cell, cell, study): cell for cell in cells}
        pending = set(futures)

        def counts() -> tuple[int, int]:
            running = sum(f.running() for f in pending)
            return running, len(pending) - running

        while pending:
            done, pending = wait(pending, timeout=wait_seconds, return_when=FIRST_COMPLETED)
            if not done:
                yield None, None, *counts()
            for future in done:
                yield futures[future], future.result, *counts()


def _ray_tasks(cells: list[Cell], study: Study, address: str, wait_seconds: float) -> Iterator[Event]:
    """The same on a Ray cluster at ``address``: one task (one CPU) per cell (Ray's queue is not seen here:
    every unfinished cell counts as running)."""
    try:
        import ray
    except ImportError:
        raise BenchboxError("--ray needs Ray: pip install 'benchbox[ray]'") from None
    try:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise BenchboxError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    remote = ray.remote(num_cpus=1, max_retries=0)(run_cell)
    refs = {remote.remote(cell, study): cell for cell in cells}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1, timeout=wait_seconds)
        if not done:
            yield None, None, len(pending), 0
        else:
            yield refs[done[0]], lambda ref=done[0]: ray.get(ref), len(pending), 0


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class _Progress:
    """The study's progress lines: one when a cell finishes, and one whenever :class:`Heartbeat` says so."""

    def __init__(self, jobs: int, heartbeat: Heartbeat, log: Callable[[str], None]) -> None:
        self.jobs, self.heartbeat, self.log = jobs, heartbeat, log
        self.started = heartbeat.clock()
        self.durations: list[float] = []

    def line(self, done: int, running: int, failed: int, queued: int) -> str:
        text = f"cells: {done} done, {running} running, {failed} failed" + (f", {queued} queued" if queued else "")
        text += f"; {_minutes(self.heartbeat.clock() - self.started)} elapsed"
        left = running + queued
        if self.durations and left:
            mean = sum(self.durations) / len(self.durations)
            eta = mean * math.ceil(left / max(1, min(self.jobs, left)))
            text += f", ETA about {_minutes(eta)} (mean cell {_minutes(mean)})"
        return text

    def update(self, done: int, running: int, failed: int, queued: int, *, finished: bool) -> None:
        if self.heartbeat.due() or finished:
            self.log(self.line(done, running, failed, queued))


def run_study(study: Study, *, log: Callable[[str], None] = lambda message: None,
              ray_address: str | None = None, heartbeat: Heartbeat | None = None) -> dict[str, Any]:
    """Run the missing cells on the local pool, then compare and report. Returns a summary with the
    finished runs, the failed cells (with their log tails), the cells skipped as already done and the paths
    written. ``heartbeat``: when a progress line is due while cells run (default: every
    :data:`benchbox.console.LOG_SECONDS`); the pool waits at most its interval at a time."""
    heartbeat = heartbeat or Heartbeat()
    progress = _Progress(study.jobs, heartbeat, log)
    study.out.mkdir(parents=True, exist_ok=True)
    finished: dict[str, str] = {}
    skipped, failed = [], {}
    todo = []
    for cell in study.cells:
        record = _done(cell, study)
        if record:
            finished[cell.name] = record["run"]
            skipped.append(cell.name)
            if isinstance(record.get("seconds"), (int, float)):
                progress.durations.append(float(record["seconds"]))
        else:
            todo.append(cell)
    heartbeat.due()  # the first line is this one; the next is due an interval later
    log(f"cells: {len(finished)} done, {len(todo)} to run, 0 failed")
    wait_seconds = heartbeat.seconds
    executor = _ray_tasks(todo, study, ray_address, wait_seconds) if ray_address else \
        _local_pool(todo, study, wait_seconds)
    for cell, result, running, queued in executor:
        if cell is not None and result is not None:
            try:
                record = result()
                finished[cell.name] = record["run"]
                if isinstance(record.get("seconds"), (int, float)):
                    progress.durations.append(float(record["seconds"]))
            except Exception as exc:  # a failed cell is reported and does not stop the others
                reason = getattr(exc, "cause", None) or exc  # Ray wraps the cell's exception
                failed[cell.name] = f"{reason}\n{_log_tail(cell, study)}"
                log(f"cell {cell.name} failed ({reason}); its log: {study.out / 'cells' / cell.name / LOG}")
        progress.update(len(finished), running, len(failed), queued, finished=cell is not None)
    cells = [c for c in study.cells if c.name in finished]
    runs = [finished[c.name] for c in cells]
    outputs: dict[str, str] = {}
    if len(runs) >= 2:
        outputs = _compare_and_report(study, cells, runs, log)
    log(_final_line(study, finished, failed, outputs))
    return {"runs": runs, "failed": failed, "skipped": skipped, "outputs": outputs}


def _final_line(study: Study, finished: dict[str, str], failed: dict[str, str], outputs: dict[str, str]) -> str:
    """What was written and what to run next."""
    head = f"study {study.path}: {len(finished)} cells done, {len(failed)} failed; "
    if outputs:
        head += (f"wrote {outputs['comparison']}, {outputs['csv']} and {outputs['report']}; ")
    else:
        head += "fewer than two cells finished, so no comparison or report was written; "
    if failed or not outputs:
        return head + (f"next: fix the failed cells (their logs: {study.out / 'cells'}/<cell>/{LOG}) and run "
                       f"`benchbox study {study.path}` again (finished cells are not redone)")
    return head + (f"next: read {outputs['report']}; after adding encoders or seeds to {study.path}, "
                   f"`benchbox study {study.path}` runs only the new cells")


def cell_labels(cells: list[Cell]) -> list[str]:
    """How the comparison and the report name each cell's model, the same in every run of the study: the
    encoder's name (with ``seed N`` for a seed), else, when that repeats, the cell's name."""
    names = [cell.encoder + (f" seed {cell.seed}" if cell.seed is not None else "") for cell in cells]
    return [name if names.count(name) == 1 else cell.name for name, cell in zip(names, cells)]


def _compare_and_report(study: Study, cells: list[Cell], runs: list[str], log: Callable[[str], None]) -> dict[str, str]:
    """One comparison of the finished cells' runs (labelled as the report labels them), written as
    ``comparison.json``/``.csv`` and rendered as it is in ``report.md``: the two always agree."""
    from benchbox.compare import compare_sources
    from benchbox.reports import write_report
    from benchbox.sources import resolve_sources
    from benchbox.task import resolve_tasks

    baseline = study.baseline
    matches = [run for cell, run in zip(cells, runs) if cell.encoder == baseline and not cell.options]
    if len(matches) == 1:  # one cell of that name: name its run (other entries may share the encoder name)
        baseline = matches[0]
    groups: dict[str, list[str]] = {}
    for cell, run in zip(cells, runs):
        if cell.group:
            groups.setdefault(cell.group, []).append(run)
    seeds = {g: members for g, members in groups.items() if len(members) > 1}
    specs = [f"{label}={run}" for label, run in zip(cell_labels(cells), runs)]
    sources = resolve_sources(specs, evaluate=False, naming="name", log=log)
    tasks = [task.name for task in resolve_tasks(study.tasks)]
    comparison = compare_sources(sources, tasks, baseline=baseline, seeds=seeds)
    comparison.to_json(study.out / "comparison.json")
    comparison.to_csv(study.out / "comparison.csv")
    report = write_report(specs, study.out / "report.md", log=log, comparison=comparison)
    return {"comparison": str(study.out / "comparison.json"), "csv": str(study.out / "comparison.csv"),
            "report": str(report), "headlines": "\n".join(comparison.headlines())}

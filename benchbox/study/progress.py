"""What a person sees of a running study: plain progress lines, a live table of its cells, and its status.

The cells' states come from their folders alone (:func:`benchbox.study.cells.cell_state`), so the live table,
``benchbox study FILE --status`` from another shell and a study running on Ray all read the same thing. On a
terminal the table is a rich ``Live`` display on stderr; otherwise (a log file) a plain line comes at the steady
interval of :class:`benchbox.console.Heartbeat`. The study's ETA is the work left at the mean duration of the
finished cells (less what each running cell has run: it counts down) spread over ``jobs`` cells at once; a cell
that trains shows the share of its steps done and its training's ETA at that pace, from the progress lines
``benchbox train`` writes into the cell's log.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from benchbox.console import Heartbeat, err
from benchbox.study.cells import LOG, cell_folder, cell_state

if TYPE_CHECKING:
    from benchbox.study.run import Study

#: the states of a cell, in the order the table counts them
STATES = ("queued", "training", "evaluating", "stopped", "done", "failed")


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class Progress:
    """The durations of the finished cells (for the ETA) and the plain progress lines: one when a cell finishes,
    and one whenever :class:`Heartbeat` says so."""

    def __init__(self, jobs: int, heartbeat: Heartbeat, log: Callable[[str], None],
                 running: Callable[[], list[float]] = list) -> None:
        self.jobs, self.heartbeat, self.log = jobs, heartbeat, log
        #: the seconds each running cell has run so far (:func:`running_seconds`)
        self.running = running
        self.started = heartbeat.clock()
        self.durations: list[float] = []

    def finished(self, seconds: Any) -> None:
        """A cell finished (or was found done) after ``seconds`` (ignored unless a number)."""
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            self.durations.append(float(seconds))

    def eta(self, left: int) -> str:
        """``, ETA about ... (mean cell ...)`` for ``left`` cells still to run, once a cell has finished: each
        running cell needs the mean duration less what it has run (so the ETA counts down while it runs), each
        queued one the mean; spread over ``jobs`` cells at once, and never less than the longest running cell
        still needs."""
        if not (self.durations and left):
            return ""
        mean = sum(self.durations) / len(self.durations)
        running = [max(0.0, mean - seconds) for seconds in self.running()][:left]
        at_once = max(1, min(self.jobs, left))
        if running:
            seconds = max(max(running), (sum(running) + (left - len(running)) * mean) / at_once)
        else:
            seconds = mean * math.ceil(left / at_once)
        if seconds < 1:
            return f", ETA soon (the running cells are past the mean cell's {minutes(mean)})"
        return f", ETA about {minutes(seconds)} (mean cell {minutes(mean)})"

    def line(self, done: int, running: int, failed: int, queued: int) -> str:
        text = f"cells: {done} done, {running} running, {failed} failed" + (f", {queued} queued" if queued else "")
        return text + f"; {minutes(self.heartbeat.clock() - self.started)} elapsed" + self.eta(running + queued)

    def update(self, done: int, running: int, failed: int, queued: int, *, finished: bool) -> None:
        if self.heartbeat.due() or finished:
            self.log(self.line(done, running, failed, queued))


#: a training progress line of ``benchbox train`` in a cell's log (:class:`benchbox.training.progress.TrainingProgress`)
STEP = re.compile(r"^step (\d+)/(\d+) ", re.MULTILINE)


def training_done(folder: Path) -> float | None:
    """The share of its steps that a cell's training has done, from the last progress line of its log."""
    try:
        with open(folder / LOG, "rb") as log:
            log.seek(max(0, log.seek(0, 2) - 8192))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    steps = STEP.findall(tail)
    return int(steps[-1][0]) / int(steps[-1][1]) if steps and int(steps[-1][1]) else None


def cell_rows(study: Study, running: bool, now: float | None = None) -> list[dict[str, Any]]:
    """One row per cell: name, seed, state, elapsed seconds, and for a cell training, the share of its steps done
    and the seconds its training still needs at that pace (``eta``). A cell caught mid-way while no study runs
    (``running`` False) is ``stopped``."""
    now = time.time() if now is None else now
    rows = []
    for cell in study.cells:
        if cell.run is not None:
            rows.append({"cell": cell.name, "seed": None, "state": "done", "seconds": None, "done": None, "eta": None})
            continue
        folder = cell_folder(study.out, cell.name)
        state = cell_state(folder)
        name = state["state"]
        if name in ("training", "evaluating") and not running:
            name = "stopped"
        seconds = state["seconds"]
        if seconds is None and state["since"] is not None and name in ("training", "evaluating"):
            seconds = now - state["since"]
        done = training_done(folder) if name == "training" else None
        eta = seconds * (1 - done) / done if done and seconds is not None else None
        rows.append({"cell": cell.name, "seed": cell.seed, "state": name, "seconds": seconds, "done": done,
                     "eta": eta})
    return rows


def running_seconds(study: Study) -> list[float]:
    """The seconds each cell of ``study`` that is training or evaluating has run so far (from its folder)."""
    return [float(row["seconds"]) for row in cell_rows(study, True)
            if row["state"] in ("training", "evaluating") and row["seconds"] is not None]


def summary(rows: list[dict[str, Any]]) -> str:
    """``cells: 2 done, 1 evaluating, 3 queued`` over the states present."""
    counts = {s: sum(r["state"] == s for r in rows) for s in STATES}
    return "cells: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)


def cells_table(study: Study, running: bool, progress: Progress | None = None) -> Group:
    """The cells as a rich table, then the summary line (with the ETA, while the study runs)."""
    rows = cell_rows(study, running)
    table = Table(title=f"study {study.path.name}", title_justify="left")
    for column in ("cell", "seed", "state", "elapsed", "training ETA"):
        table.add_column(column, justify="left" if column in ("cell", "state") else "right")
    for row in rows:
        elapsed = "" if row["seconds"] is None else minutes(float(row["seconds"]))
        state = row["state"] + (f" {row['done']:.0%}" if row["done"] is not None else "")
        eta = "" if row["eta"] is None else minutes(row["eta"])
        table.add_row(row["cell"], "" if row["seed"] is None else str(row["seed"]), state, elapsed, eta)
    line = summary(rows)
    if progress is not None:
        left = sum(r["state"] in ("queued", "training", "evaluating") for r in rows)
        line += f"; {minutes(progress.heartbeat.clock() - progress.started)} elapsed{progress.eta(left)}"
    return Group(table, Text(line))


@contextmanager
def live_table(study: Study, progress: Progress) -> Iterator[None]:
    """A live table of the cells on stderr (a terminal) while the ``with`` block runs, refreshed every second."""
    with Live(get_renderable=lambda: cells_table(study, True, progress), console=err, refresh_per_second=1,
              transient=False):
        yield

"""Progress of a training loop on stderr: a live bar on a terminal (rich holds back other output while a live
display runs), else a log line after the first step and then every
:data:`benchbox.console.LOG_SECONDS` seconds (:class:`benchbox.console.Heartbeat`) with the step, loss, rate
and time left (a log file shows progress within the first minute, whatever a step costs); nothing
with ``--quiet`` or on a rank other than 0.

The first line gives the first step's time and no ETA: that step carries one-time costs (memory, lazy
initialisation) and once predicted "eta 4074 min" for a run of hours. Later lines take the rate over every step
since the first, so that at a steady speed the time left counts down line by line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from benchbox.console import Heartbeat, err, log


class TrainingProgress:
    """``with TrainingProgress(...) as progress:`` then :meth:`update` after every step."""

    def __init__(self, description: str, *, total: int, done: int, batch_size: int, main: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.batch_size = batch_size
        self.main = main
        self.live = err.is_terminal and not err.quiet and main
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("loss {task.fields[loss]:.3f} lr {task.fields[lr]:.1e}"), TimeElapsedColumn(),
                   TimeRemainingColumn())
        self.bar = Progress(*columns, console=err, transient=False, disable=not self.live)
        self.description = description
        self.done = done
        self.clock = clock
        self.heartbeat = Heartbeat(clock=clock)
        self._started = clock()
        #: (step, time) of the first step's end: later rates count from it (None before it)
        self._first: tuple[int, float] | None = None

    def __enter__(self) -> TrainingProgress:
        self.bar.__enter__()
        self.task = self.bar.add_task(self.description, total=self.total, completed=self.done, loss=float("nan"),
                                      lr=0.0)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.bar.__exit__(kind, exc, tb)

    def update(self, global_step: int, epoch: int, loss: float, lr: float) -> None:
        """After a step: the bar, or a line when the heartbeat is due (``epoch`` counted from 0)."""
        self.bar.update(self.task, completed=global_step, loss=loss, lr=lr)
        if self.live or not self.main:
            return
        now = self.clock()
        if self._first is None:
            self._first = (global_step, now)
            self.heartbeat.due()  # the next line one interval from now
            log(f"step {global_step}/{self.total} epoch {epoch + 1} loss {loss:.3f} lr {lr:.2e}: first step in "
                f"{now - self._started:.1f} s (the time left from the next line on)")
        elif self.heartbeat.due():
            steps, then = self._first
            rate = (global_step - steps) / max(now - then, 1e-9)
            eta = (self.total - global_step) / max(rate, 1e-9)
            log(f"step {global_step}/{self.total} epoch {epoch + 1} loss {loss:.3f} "
                f"lr {lr:.2e} {rate * self.batch_size:.1f} captions/s eta {eta / 60:.1f} min")

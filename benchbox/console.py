"""Shared rich consoles: results to stdout, logs and progress to stderr; ``--quiet`` silences stderr (errors
excepted).

Both consoles have rich markup turned off: what they print (paths, encoder names, sentences, error messages)
is shown literally, so a user string such as ``[/bold]`` or ``[red]`` can neither crash a command nor lose
characters. Styles are given with ``style=`` or :class:`rich.text.Text`, never as markup in the string.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

out = Console(markup=False)
err = Console(stderr=True, markup=False)


def log(message: str) -> None:
    if not err.quiet:
        err.print(message, style="dim", highlight=False, soft_wrap=True)  # one line per message, never wrapped


def set_quiet(quiet: bool) -> None:
    err.quiet = quiet


def results_to_stderr(on: bool) -> None:
    """Send what commands print as results (tables, headlines) to stderr while ``on``: a command writing its
    JSON or CSV to standard output (``--json -``) keeps stdout for that alone."""
    import sys

    out.file = sys.stderr if on else None  # None: rich's default, the sys.stdout of the moment


def error(message: str) -> None:
    """The one-line error of a failed command on stderr, printed literally; ``--quiet`` does not hide it."""
    err.quiet = False
    err.print(Text.assemble(("error:", "bold red"), f" {message}"), highlight=False, soft_wrap=True)


#: seconds between plain progress lines when stderr is not a terminal (a log file)
LOG_SECONDS = 30.0


class Heartbeat:
    """When a plain progress line is due: at the first call of :meth:`due`, then every ``seconds``, so a log
    file shows progress at once and at a steady interval, whatever one step costs."""

    def __init__(self, seconds: float = LOG_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.last: float | None = None

    def due(self) -> bool:
        now = self.clock()
        if self.last is not None and now - self.last < self.seconds:
            return False
        self.last = now
        return True


@contextmanager
def progress_bar(description: str, *, clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal, else a plain line on stderr when :class:`Heartbeat` says so and at
    the end (nothing with ``--quiet``), with the time left at the rate so far; yields ``update(done, total)``."""
    if not err.is_terminal:
        heartbeat, started = Heartbeat(clock=clock), clock()

        def log_line(done: int, total: int) -> None:
            if done >= total or heartbeat.due():
                seconds = clock() - started
                left = f", about {seconds * (total - done) / done:.0f} s left" if 0 < done < total else ""
                log(f"{description}: {done}/{total} in {seconds:.0f} s{left}")

        yield log_line
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=err.quiet) as bar:
        task_id = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task_id, completed=done, total=total)

        yield update


#: how an error writing to standard output names it (``--json -`` into a full device or a closed pipe)
STANDARD_OUTPUT = "standard output"


class _NamedStdout:
    """Standard output whose write errors name it: an :class:`OSError` raised by ``write`` or ``flush`` gets
    :data:`STANDARD_OUTPUT` as its file name, so the command line prints it as one line like any other file.
    Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _named(self, call: Callable[..., Any], *args: Any) -> Any:
        try:
            return call(*args)
        except OSError as exc:
            if exc.filename is not None or exc.errno is None:
                raise
            raise OSError(exc.errno, exc.strerror, STANDARD_OUTPUT) from exc

    def write(self, text: str) -> int:
        return self._named(self._stream.write, text)

    def writelines(self, lines: Any) -> None:
        self._named(self._stream.writelines, lines)

    def flush(self) -> None:
        self._named(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def named_stdout() -> Iterator[None]:
    """Run the block with :class:`_NamedStdout` as ``sys.stdout``, flushed at its end; when standard output
    failed, it is pointed at the null device, so that Python's own flush at exit cannot fail a second time."""
    original = sys.stdout
    sys.stdout = _NamedStdout(original)
    try:
        try:
            yield
        finally:  # also when the command ends with SystemExit, as typer's always do
            sys.stdout.flush()
    except OSError as exc:
        if exc.filename == STANDARD_OUTPUT:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), original.fileno())
            except (OSError, ValueError, AttributeError):  # no file descriptor: nothing left to flush at exit
                pass
        raise
    finally:
        sys.stdout = original

"""Shared rich consoles: results to stdout, logs and progress to stderr; ``--quiet`` silences stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

out = Console()
err = Console(stderr=True)


def log(message: str) -> None:
    if not err.quiet:
        err.print(f"[dim]{message}[/dim]", highlight=False, soft_wrap=True)  # one line per message, never wrapped


def set_quiet(quiet: bool) -> None:
    err.quiet = quiet


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr; yields ``update(done, total)``."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=err.quiet) as bar:
        task_id = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task_id, completed=done, total=total)

        yield update

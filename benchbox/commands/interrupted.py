"""Ending a command whose work was interrupted by SIGINT/SIGTERM after it saved what can be resumed.

The process exits with status 128 + signal number (130 for SIGINT, 143 for SIGTERM), the shell convention
for a process ended by a signal, so that ``benchbox train ... && benchbox eval ...`` does not carry on after
an interruption; and it says, on one line, the command that resumes the work.
"""

from __future__ import annotations

import shlex
import signal
import sys
from pathlib import Path

import typer

from benchbox.console import log


def resume_command(argv: list[str], out: Path) -> str:
    """The command line of ``argv`` with ``--out OUT --resume`` (any ``--out``/``--resume`` given replaced)."""
    args, skip = [], False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif not (arg.startswith("--out=") or arg == "--resume"):
            args.append(arg)
    return shlex.join(["benchbox", *args, "--out", str(out), "--resume"])


def exit_interrupted(signum: int, out: Path, argv: list[str] | None = None) -> None:
    """Say how to resume the saved work in ``out``, then exit with status 128 + ``signum``."""
    name = signal.Signals(signum).name
    log(f"interrupted by {name}; the checkpoint is saved: resume with {resume_command(argv or sys.argv, out)}")
    raise typer.Exit(128 + signum)

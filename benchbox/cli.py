"""The ``benchbox`` command line (typer). Each command group lives in ``benchbox/commands/``.

Errors a user can cause (:class:`BenchboxError`) print one line on stderr and exit with status 2, without
a traceback.
"""

from __future__ import annotations

import sys

import typer

from benchbox.commands import compare, core, data, features, report, study, train_char_rnn, train_infersent
from benchbox.console import err
from benchbox.errors import BenchboxError

app = typer.Typer(
    name="benchbox",
    help="Train, evaluate and compare visually grounded sentence encoders.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
train_app = typer.Typer(help="Train an encoder (one sub-command per architecture).", no_args_is_help=True)
app.add_typer(train_app, name="train")
core.register(app)
compare.register(app)
report.register(app)
data.register(app)
features.register(app)
study.register(app)
train_char_rnn.register(train_app)
train_infersent.register(train_app)


def main() -> None:
    try:
        app()
    except BenchboxError as exc:
        err.print(f"[bold red]error:[/bold red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)

"""``benchbox export mteb RUN --out DIR``: a run's scores in mteb's result format, for the tasks with an MTEB
counterpart (:mod:`benchbox.data.mteb_export`; the correspondence: docs/guide.md#mteb-interoperability)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.commands.options import QUIET, out_option
from benchbox.console import log, out, set_quiet

export_app = typer.Typer(help="Write runs in other tools' formats.", no_args_is_help=True)


@export_app.command("mteb")
def export_mteb_command(
    run: Annotated[Path, typer.Argument(help="An evaluation run folder (runs/<run-id>).")],
    out_dir: out_option("the mteb results folder; the run's files go to DIR/<model>/<revision>/<MTEB task>.json "
                        "(for an mteb cache, give its results/ folder)", required=True, folder=True),
    model_name: Annotated[Optional[str], typer.Option("--model-name", metavar="ORG/NAME", help="The model's name in mteb's form (default: benchbox/<the run's label>); its folder is ORG__NAME.")] = None,
    quiet: QUIET = False,
) -> None:
    """Write a run's scores on the tasks with an MTEB counterpart (STS12-16, STSBenchmark) as mteb result files, which mteb's loaders read; the tasks that do not correspond are named and skipped."""
    from benchbox.comparison.sources import open_run
    from benchbox.data.mteb_export import export_run

    set_quiet(quiet)
    for path in export_run(open_run(run), out_dir, model_name, log):
        out.print(str(path), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")

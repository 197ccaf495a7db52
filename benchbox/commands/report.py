"""``benchbox report``: markdown or self-contained HTML from runs, with figures and optional significance tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.commands.compare_options import with_compare_settings
from benchbox.commands.options import QUIET, THREADS, out_option
from benchbox.comparison.settings import CompareSettings
from benchbox.console import log, out, set_quiet
from benchbox.errors import BenchboxError


@with_compare_settings
def report_command(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (or folders of runs, e.g. runs/), in the order to show them.")],
    compare: Annotated[bool, typer.Option("--compare", help="Add pairwise significance tests between the evaluation runs (and references), with the options below as `benchbox compare` takes them.")] = False,
    settings: CompareSettings = CompareSettings(),
    fmt: Annotated[Optional[str], typer.Option("--format", help="md or html (default: from --out's suffix, else md).")] = None,
    out_path: out_option("the report file (default: report.md, or report.html with --format html); a markdown report's figures go to <stem>_figures/ beside it") = None,
    reference: Annotated[Optional[list[str]], typer.Option("--reference", metavar="paper:NAME|mteb:PATH", help="Published reference rows, e.g. paper:merkx2019/char-gru-flickr8k, or the models of an mteb results folder, mteb:PATH; repeatable.")] = None,
    neighbours: Annotated[Optional[list[Path]], typer.Option("--neighbours", metavar="FILE", help="A `benchbox neighbours --json` output file to show as tables; repeatable.")] = None,
    threads: THREADS = None,
    quiet: QUIET = False,
) -> None:
    """Write a report on runs: claims first (with --compare), then semantic table and figure, retrieval, transfer, significance, training curves, and provenance."""
    from benchbox.reports import write_report
    from benchbox.threads import set_threads

    set_quiet(quiet)
    set_threads(threads)
    if settings != CompareSettings() and not compare:
        raise BenchboxError("the options of the significance tests (--correction, --test, ...) apply to --compare: "
                            "add --compare, or drop them")
    path = write_report(runs, out_path, fmt=fmt, compare=compare, references=reference or [],
                        neighbours=neighbours or [], log=log, settings=settings)
    out.print(str(path), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)

"""``benchbox reproduce PAPER``: a paper's table beside benchbox's, with a verdict per cell (docs/study.md#reproducing-a-paper;
the machinery: :mod:`benchbox.reproduce.run`)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchbox.commands.options import DATA_DIR, QUIET
from benchbox.console import err, log, out, set_quiet
from benchbox.errors import BenchboxError


def _overrides(path: Optional[Path]) -> dict[str, dict[str, Any]]:
    """``--override FILE``: ``[MODEL]`` tables of ``train``, ``options`` and ``tasks``."""
    if path is None:
        return {}
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BenchboxError(f"--override {path}: cannot read it as TOML ({exc})") from None
    for label, table in raw.items():
        bad = [k for k in (table if isinstance(table, dict) else {"": None}) if k not in ("train", "options", "tasks")]
        if bad:
            raise BenchboxError(f"--override {path}: [{label}] may set train, options and tasks, not {bad[0]!r}")
    return raw


def reproduce_command(
    paper: Annotated[str, typer.Argument(help="The paper: vendrov2016, merkx2019, bordes2019, conneau2017 or radford2021 (benchbox/reproduce/papers).")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="The reproduction folder (default: reproductions/PAPER); running again resumes it.")] = None,
    plan_only: Annotated[bool, typer.Option("--plan", help="Only list each model and cell: runnable here, or what it needs; run nothing.")] = False,
    override: Annotated[Optional[Path], typer.Option("--override", help="A TOML file of [MODEL] tables (train, options, tasks) changing a model's configuration; each change is a departure of its cells.")] = None,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Run the cells on the Ray cluster at ADDRESS (as `benchbox study --ray`).")] = None,
    data_dir: DATA_DIR = None,
    quiet: QUIET = False,
) -> None:
    """Reproduce a paper's table: plan its cells, run what can run here (resumable), and print the published value,
    benchbox's with its 95% interval, the difference and a verdict per cell; writes reproduction.json, .md, .html
    and .svg."""
    from benchbox.reproduce.paper import paper_path, read_paper
    from benchbox.reproduce.render import cells, plan_lines, write_reports, COLUMNS
    from benchbox.reproduce.run import plan_models, reproduction_rows, run_models
    from benchbox.study.run import check_ray_address

    set_quiet(quiet)
    check_ray_address(ray)
    spec = read_paper(paper_path(paper))
    folder = out_dir or Path("reproductions") / paper
    data = str(data_dir.resolve()) if data_dir else None
    plans = plan_models(spec, folder, data, _overrides(override))
    lines = plan_lines(plans)
    out.print(f"{spec.paper.citation}: {spec.paper.title}", highlight=False, soft_wrap=True, markup=False)
    for line in lines:
        out.print(f"  {line}", highlight=False, soft_wrap=True, markup=False)
    runs, stopped = ({}, None) if plan_only else run_models(plans, log=log, ray_address=ray,
                                                             live=err.is_terminal and not quiet)
    if stopped is not None:  # as `benchbox study`: 130 or 143, and the same command resumes
        log(f"stopped; run the same command again to resume ({folder})")
        raise typer.Exit(128 + stopped)
    rows = reproduction_rows(spec, plans, runs)
    from rich.table import Table
    from rich.text import Text

    table = Table(*COLUMNS, title=f"{paper}: published against benchbox")
    for row in rows:
        table.add_row(*(Text(c) for c in cells(row)))
    out.print(table)
    if plan_only:
        return
    paths = write_reports(folder, spec.paper.title, spec.paper.citation, lines, rows, paper)
    out.print(f"wrote {paths['json']}, {paths['markdown']} and {paths['html']}", highlight=False, soft_wrap=True)
    if any(run.startswith("failed: ") for run in runs.values()):
        raise typer.Exit(1)  # a model's cell failed: its cells say so, with its log


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce_command)

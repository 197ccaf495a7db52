"""``benchbox study``: run a declared study (encoders × seeds × tasks), resumable, on a local pool."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import log, out, set_quiet
from benchbox.options import AT_LEAST_1


def study_command(
    study_file: Annotated[Path, typer.Argument(help="The study file (TOML): [study] tasks, baseline; [[encoder]] name/seeds/train/options or run.")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Study folder (default: [study] out, else the file's name beside it).")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Cells at once on this machine (default: [study] jobs, else the CPU count).", callback=AT_LEAST_1)] = None,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Run the cells as tasks on the Ray cluster at ADDRESS (pip install 'benchbox[ray]'; the study folder must be on a shared file system).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or log output.")] = False,
) -> None:
    """Train what is missing, evaluate every cell, compare (claims with headlines) and write the report;
    finished cells are never redone, an interrupted one restarts cleanly, a failed one does not stop the others."""
    from dataclasses import replace

    from benchbox.study import load_study, run_study

    set_quiet(quiet)
    study = load_study(study_file, out_dir)
    if jobs is not None:
        study = replace(study, jobs=jobs)
    result = run_study(study, log=log, ray_address=ray)
    if result["outputs"]:
        out.print(result["outputs"]["headlines"], highlight=False, soft_wrap=True)
    for cell, reason in result["failed"].items():
        out.print(f"cell {cell} failed: {reason}", highlight=False, soft_wrap=True, markup=False)
    if result["failed"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("study")(study_command)

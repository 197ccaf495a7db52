"""``benchbox study``: run a declared study (encoders × seeds × tasks), resumable, on a local pool or Ray; check a
study file (``--check``); show a study's cells from another shell (``--status``)."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import err, log, out, set_quiet
from benchbox.commands.options import AT_LEAST_1, QUIET, out_option
from benchbox.storage.output_targets import STUDY


def ray_address(value: Optional[str]) -> Optional[str]:
    """``--ray``, checked as it is read (:func:`benchbox.study.run.check_ray_address`)."""
    from benchbox.study.run import check_ray_address

    return check_ray_address(value)


def study_command(
    study_file: Annotated[Path, typer.Argument(help="The study file (TOML): [study] tasks, baseline; [[encoder]] name/seeds/train/options or run (docs/study.md).")],
    out_dir: out_option("the study folder (default: [study] out, else the study file's name beside it)", holds=STUDY) = None,
    jobs: Annotated[Optional[int], typer.Option(help="Cells at once on this machine (default: [study] jobs, else the CPU count).", callback=AT_LEAST_1)] = None,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Run the cells as tasks on the Ray cluster at ADDRESS, HOST:PORT or auto (pip install 'benchbox[ray]'; the study folder must be on a shared file system).", callback=ray_address)] = None,
    check: Annotated[bool, typer.Option("--check", help="Only check the study file (every key, name, file and seed), build each encoder evaluated as it is, as its cell would (options, model folders), and probe the study folder as the run will write into it; start nothing.")] = False,
    status: Annotated[bool, typer.Option("--status", help="Show the state of the study's cells (from its folder; works from another shell) and exit.")] = False,
    threads: Annotated[Optional[int], typer.Option(
        "--threads", help="CPU threads for tensor and BLAS work of each cell run here, and of the study's compare and "
        "report (default: $OMP_NUM_THREADS, else the cores free at the start shared among the --jobs cells, at least "
        "1; a train table's threads wins for its training).", callback=AT_LEAST_1)] = None,
    quiet: QUIET = False,
) -> None:
    """Train what is missing, evaluate every cell, compare (claims with headlines) and write the report;
    finished cells are never redone, an interrupted one restarts cleanly, a failed one does not stop the others.
    Ctrl-C or SIGTERM stops the study (exit 130 or 143); run it again to resume."""
    from dataclasses import replace

    from benchbox.study.run import load_study, run_study
    from benchbox.study.train import check_train

    set_quiet(quiet)
    study = load_study(study_file, out_dir, check_train=check_train, build=check)
    if jobs is not None:
        study = replace(study, jobs=jobs)
    if check:
        from benchbox.storage.outdir import check_could_write

        check_could_write(study.out)  # as the run will write into it (benchbox.study.run.run_study)
        out.print(f"{study_file}: ok, {len(study.cells)} cells into {study.out}", highlight=False, soft_wrap=True)
        return
    if status:
        from benchbox.study.cells import study_running
        from benchbox.study.progress import cells_table

        running = study_running(study.out)
        out.print(cells_table(study, running))
        out.print(f"{study.out}: {'a study is running here' if running else 'no study is running here'}",
                  highlight=False, soft_wrap=True)
        return
    from benchbox.study.run import cell_threads
    from benchbox.threads import set_threads

    # the cells inherit the count; one from the environment is kept
    count = set_threads(threads or (None if "OMP_NUM_THREADS" in os.environ else cell_threads(study.jobs)))
    os.environ["OMP_NUM_THREADS"] = str(count)
    result = run_study(study, log=log, ray_address=ray, live=err.is_terminal and not quiet)
    # the process ends now: its last garbage collection, at exit, need not walk every object of scipy,
    # matplotlib and pandas (and torch, with seeds) only to free memory the OS frees anyway (0.4 s on a 2-core
    # machine, after the cells: docs/study.md, "Speed"); the outputs are written and the lock released
    gc.freeze()
    if result["interrupted"] is not None:
        raise typer.Exit(128 + result["interrupted"])
    if result["outputs"]:
        out.print(result["outputs"]["headlines"], highlight=False, soft_wrap=True)
    for cell, reason in result["failed"].items():
        out.print(f"cell {cell} failed: {reason}", highlight=False, soft_wrap=True, markup=False)
    if result["failed"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("study")(study_command)

"""``benchbox runs`` (the runs in a folder) and ``benchbox leaderboard`` (main scores of many runs in one table),
both over :mod:`benchbox.results`: a markdown table on the terminal, ``--csv PATH|-`` or ``--json PATH|-``."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchbox.storage.atomic import atomic_path
from benchbox.console import log, out, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.commands.options import QUIET, csv_option, json_option
from benchbox.storage.jsonio import SCHEMA_VERSION, frame_records, to_stdout, write_json
from benchbox.storage.outdir import check_output_file

RunsDir = Annotated[Optional[list[Path]], typer.Argument(help="Run folders or folders of runs (default: runs).")]
SkipBad = Annotated[bool, typer.Option("--skip-bad", help="Leave out folders that are not readable runs (with a warning) instead of stopping.")]


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub markdown table; every cell escaped as literal text (:func:`benchbox.reports.markdown.escape`)."""
    from benchbox.reports.markdown import escape

    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _start(quiet: bool, csv: str | None, json_path: str | None) -> None:
    """Quiet, output destinations checked before reading any run, results to stderr if stdout is taken."""
    set_quiet(quiet)
    if to_stdout(csv) and to_stdout(json_path):
        raise BenchboxError("--csv - and --json - both ask for standard output: send one of them to a file")
    results_to_stderr(to_stdout(csv) or to_stdout(json_path))
    check_output_file(csv, "--csv")
    check_output_file(json_path, "--json")


def _load(loader: Any, paths: list[Path] | None, skip_bad: bool) -> Any:
    """``loader(paths)`` with bad runs an error, or (``--skip-bad``) left out with one log line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = loader(paths or [Path("runs")], errors="skip" if skip_bad else "raise")
    for warning in caught:
        log(str(warning.message))
    return result


def _write_csv(frame: Any, csv: str) -> None:
    if to_stdout(csv):
        frame.to_csv(sys.stdout, index=False)
        return
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)
    log(f"table written to {csv}")


def runs_command(runs: RunsDir = None, skip_bad: SkipBad = False, csv: csv_option("Write the table as CSV (raw values)") = None,
                 json_path: json_option("Write the runs as JSON:") = None, quiet: QUIET = False) -> None:
    """List the runs in folders of runs: id, kind, label, encoder, tasks, created, path (oldest first)."""
    from benchbox.results import list_runs

    _start(quiet, csv, json_path)
    table = _load(list_runs, runs, skip_bad)
    if csv:
        _write_csv(table.assign(tasks=table["tasks"].map(" ".join)), csv)
    if json_path:
        write_json(json_path, {"schema_version": SCHEMA_VERSION, "runs": frame_records(table)})
    if not csv and not json_path:
        rows = [[r.run_id, r.kind, r.label, ", ".join(r.tasks), r.created, r.path] for r in table.itertuples()]
        out.print(markdown_table(["run", "kind", "label", "tasks", "created", "path"], rows), highlight=False,
                  soft_wrap=True)


def leaderboard_command(
    runs: RunsDir = None,
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", metavar="TASK", help="Task column to show, in this order; repeatable (default: every task).")] = None,
    all_runs: Annotated[bool, typer.Option("--all-runs", help="One row per run instead of each model's newest run per task.")] = False,
    skip_bad: SkipBad = False,
    csv: csv_option("Write the table as CSV (raw values)") = None,
    json_path: json_option("Write the leaderboard as JSON:") = None,
    quiet: QUIET = False,
) -> None:
    """Main scores of many runs in one table: models (label, fingerprint and protocol variant) × tasks, each
    cell the task's declared main score from the model's newest run of it (--all-runs: every run). The terminal table shows correlations × 100
    as the reports do; CSV and JSON hold the values as recorded."""
    from benchbox import formatting
    from benchbox.task_contract.metadata import task_metadata
    from benchbox.results import STANDARD, leaderboard, load_runs

    _start(quiet, csv, json_path)
    table = _load(load_runs, runs, skip_bad)
    if table.empty:
        raise BenchboxError(f"no evaluation runs under {', '.join(map(os.fspath, runs or ['runs']))}: "
                            "write some with `benchbox eval` (--runs-dir)")
    board = leaderboard(table, tasks=task, all_runs=all_runs)
    metrics, known = board.attrs["metrics"], board.attrs["main_score_known"]
    tasks = list(metrics if not task else task)
    if csv:
        _write_csv(board, csv)
    if json_path:
        write_json(json_path, {"schema_version": SCHEMA_VERSION, "all_runs": all_runs,
                               "columns": [{"task": t, "metric": metrics[t], "main_score_known": known[t]}
                                           for t in tasks],
                               "rows": frame_records(board)})
    if not csv and not json_path:
        keys = ["label", "fingerprint", "protocol", *(["run_id"] if all_runs else [])]
        specs = {t: task_metadata(t).spec(metrics[t]) for t in tasks}
        rows = [[*(r[k] for k in keys), *(formatting.number(r[t], specs[t]) for t in tasks)]
                for r in board.to_dict(orient="records")]
        headers = [*keys, *(f"{t} ({metrics[t]})" for t in tasks)]
        out.print(markdown_table(headers, rows), highlight=False, soft_wrap=True)
    variants = sorted(set(board["protocol"]) - {STANDARD})
    if variants:
        log(f"rows whose protocol is not {STANDARD} ({', '.join(variants)}) were evaluated under other protocol "
            "switches: their scores are not comparable with the standard rows (compare refuses such pairs)")
    unknown = [t for t in tasks if not known[t]]
    if unknown:
        log(f"no registered main score recorded for {', '.join(unknown)}: showing the first metric each run recorded")


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_command)
    app.command("leaderboard")(leaderboard_command)

"""``benchbox runs`` (the runs in a folder, :mod:`benchbox.results`) and ``benchbox leaderboard`` (many models in one
table with intervals, ranks and significance groups, :mod:`benchbox.comparison.leaderboard`): a markdown table on
the terminal, ``--csv PATH|-``, ``--json PATH|-`` (and for the leaderboard ``--html PATH``)."""

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
from benchbox.commands.options import QUIET, SEED, csv_option, html_option, in_range, json_option
from benchbox.options import DEFAULT_GROUP, DEFAULT_RESAMPLES, DEFAULT_SEED
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
    runs: Annotated[Optional[list[str]], typer.Argument(help="Run folders, folders of runs or paper:<paper>/<model> (default: runs).")] = None,
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", metavar="TASK", help="Task column to show, in this order; repeatable (default: every task).")] = None,
    group: Annotated[str, typer.Option("--group", help="Task group of the overall score and the ranks (a group name, or all: every task shown); without any of its tasks, every task shown.")] = DEFAULT_GROUP,
    comparators: Annotated[Optional[Path], typer.Option("--comparators", metavar="FILE.toml", help="Published numbers to add as unpaired rows ([[comparator]] entries: name, citation, task, metric, value, n; docs/guide.md#comparators-from-a-file).")] = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Replicates of the joint paired bootstrap of items and seeds behind every interval and rank.", callback=in_range(2))] = DEFAULT_RESAMPLES,
    seed: SEED = DEFAULT_SEED,
    groups: Annotated[bool, typer.Option("--groups/--no-groups", help="Significance groups: each model's claim against the best (compare's claim test).")] = True,
    all_runs: Annotated[bool, typer.Option("--all-runs", help="One row per run instead of one per model (seeds grouped, each seed's newest run per task).")] = False,
    skip_bad: SkipBad = False,
    csv: csv_option("Write the table as CSV (raw values)") = None,
    json_path: json_option("Write the leaderboard as JSON:") = None,
    html: html_option("Write the leaderboard as an HTML page with sortable columns and rank-interval bars") = None,
    quiet: QUIET = False,
) -> None:
    """Many models in one table with uncertainty: one row per model (seeds grouped: their mean, ± their sd), one
    column per task's declared main score with its 95% interval, the overall score over --group (mean on the
    common scale, and the Borda count) with its interval, each model's rank with a 95% interval from a joint
    paired bootstrap of items and seeds, and its significance group against the best. Sorted by the overall
    score; protocol variants and published numbers are rows of their own. The terminal table shows correlations
    × 100 as the reports do; CSV and JSON hold the values as computed."""
    from benchbox.comparison.leaderboard import PUBLISHED, STANDARD, Settings, build, load_sources
    from benchbox.reports.leaderboard import headers, html_page, pipe_table, text_rows

    _start(quiet, csv, json_path)
    check_output_file(html, "--html")
    found = _load(load_sources, runs, skip_bad)
    if comparators is not None:
        from benchbox.comparison.sources import comparator_sources
        from benchbox.comparison.comparator_file import read_comparators

        found += comparator_sources(read_comparators(comparators))
    if not any(not s.is_reference for s in found):
        raise BenchboxError(f"no evaluation runs under {', '.join(map(os.fspath, runs or ['runs']))}: "
                            "write some with `benchbox eval` (--runs-dir)")
    board = build(found, task, settings=Settings(resamples, seed, group), all_runs=all_runs, groups=groups)
    specs = {c.task: board.known.spec(c.task, c.metric) for c in board.columns}
    if csv:
        _write_csv(board.frame, csv)
    if json_path:
        write_json(json_path, {"schema_version": SCHEMA_VERSION, "all_runs": all_runs, "method": board.record(),
                               "columns": [{"task": c.task, "metric": c.metric, "main_score_known": c.declared,
                                            "per_subset": c.per_subset, "resampled": c.resampled} for c in board.columns],
                               "rows": frame_records(board.frame)})
    if html:
        with atomic_path(html) as tmp:
            Path(tmp).write_text(html_page(board, specs), encoding="utf-8")
        log(f"page written to {html}")
    if not csv and not json_path:
        out.print(pipe_table(headers(board), text_rows(board, specs)), highlight=False, soft_wrap=True, markup=False)
        out.print(board.method(), highlight=False, soft_wrap=True, markup=False)
    for line in [*board.notes, *board.standings]:  # the standings last: the lines a terminal shows
        log(line)
    variants = sorted(set(board.frame["protocol"]) - {STANDARD, PUBLISHED})
    if variants:
        log(f"rows whose protocol is not {STANDARD} ({', '.join(variants)}) were evaluated under other protocol "
            "switches: their scores are not comparable with the standard rows (compare refuses such pairs); each "
            "protocol is ranked on its own")
    unknown = [c.task for c in board.columns if not c.declared]
    if unknown:
        log(f"no declared main score for {', '.join(unknown)}: showing the first metric each run recorded")


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_command)
    app.command("leaderboard")(leaderboard_command)

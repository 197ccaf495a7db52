"""``benchbox compare``: paired significance tests between runs, encoders and published results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import log, out, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import to_stdout
from benchbox.storage.outdir import check_output_file
from benchbox.commands.compare_options import with_compare_settings
from benchbox.commands.options import (ALLOW_DATA_MISMATCH, BOOTSTRAP, DATA_DIR, QUIET, RUNS_DIR, THREADS, csv_option,
                                       json_option)
from benchbox.comparison.settings import CompareSettings
from benchbox.options import DEFAULT_RESAMPLES
from benchbox.threads import set_threads
from benchbox.tables import print_table, pair_table, seed_table
from benchbox.commands.task_flags import TaskFlagsCommand, given_flags
from benchbox.task_contract.protocol import parse_task_arguments
from benchbox.task_contract.options import TaskOptions


@with_compare_settings
def compare_command(
    ctx: typer.Context,
    models: Annotated[list[str], typer.Argument(help="Two or more: run folders or folders of runs, encoder names / module:attribute / trained-model folders (a matching run in --runs-dir is reused, else evaluated via the cache), paper:merkx2019/{glove-bow,infersent,char-gru-flickr8k,char-gru-coco}, or mteb:PATH (the models of an mteb results folder); LABEL=MODEL names one in the output.")],
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", metavar="TASK", help="Task or group, or TASK:KEY=VALUE to set one of its options for on-demand evaluation; repeatable (default: all shared tasks).")] = None,
    data_dir: DATA_DIR = None,
    runs_dir: RUNS_DIR = Path("runs"),
    rerun: Annotated[bool, typer.Option("--rerun", help="Evaluate encoder names / model folders afresh even when --runs-dir holds a matching run.")] = False,
    settings: CompareSettings = CompareSettings(),
    bootstrap: BOOTSTRAP = DEFAULT_RESAMPLES,
    baseline: Annotated[Optional[str], typer.Option(help="Compare every other model with this one only (a label, run folder or encoder name).")] = None,
    allow_protocol_mismatch: Annotated[bool, typer.Option("--allow-protocol-mismatch", help="Compare runs evaluated under different protocol options or on data files with different contents anyway (recorded in the output).")] = False,
    comparators: Annotated[Optional[Path], typer.Option("--comparators", metavar="FILE.toml", help="Published numbers to compare with, as unpaired rows ([[comparator]] entries: name, citation, task, metric, value, n; docs/guide.md#comparators-from-a-file).")] = None,
    seeds: Annotated[Optional[list[str]], typer.Option("--seeds", metavar="NAME=RUN,RUN", help="NAME=RUN,RUN,...: these runs (as given above) are seeds of one model; repeatable.")] = None,
    csv: csv_option("Write the comparison table as CSV (and the claims beside it, NAME.claims.csv; not on standard output)") = None,
    json_path: json_option("Write claims, table, summary and seed variance as JSON:") = None,
    wide: Annotated[bool, typer.Option("--wide", help="Tables with every column (both values, test, raw and both adjusted p), even wider than the terminal.")] = False,
    threads: THREADS = None,
    allow_data_mismatch: ALLOW_DATA_MISMATCH = False,
    quiet: QUIET = False,
) -> None:
    """Compare encoders: the verdict of each claim in one plain sentence, then one headline per claim (pooled effect over rows, seed-aware test, ASO), then per task,
    subset and metric both scores with CIs, the difference with its CI, a paired test, Holm/BH-corrected p and
    a verdict; then one summary line per pair."""
    from benchbox.comparison import output
    from benchbox.comparison.claims import summarised_notes
    from benchbox.comparison.compare import compare
    from benchbox.comparison.seed_declarations import parse_seed_groups

    set_quiet(quiet)
    set_threads(threads)
    if to_stdout(csv) and to_stdout(json_path):
        raise BenchboxError("--csv - and --json - both ask for standard output: send one of them to a file")
    results_to_stderr(to_stdout(csv) or to_stdout(json_path))
    for path, option in ((csv, "--csv"), (json_path, "--json")):  # a bad destination fails now, not after the tests
        check_output_file(path, option)
    names, task_options = parse_task_arguments(task or [])
    published = []
    if comparators is not None:  # read and checked before anything is evaluated
        from benchbox.comparison.sources import comparator_sources
        from benchbox.comparison.comparator_file import read_comparators

        published = comparator_sources(read_comparators(comparators))
    # the seed of the comparison's bootstrap is the seed of the models it evaluates on demand
    options = TaskOptions(seed=settings.seed, bootstrap=bootstrap, task_options=task_options, flags=given_flags(ctx))
    comparison = compare(models, names or None, data_dir=data_dir, runs_dir=runs_dir, settings=settings,
                         options=options, log=log, baseline=baseline, allow_protocol_mismatch=allow_protocol_mismatch,
                         seeds=parse_seed_groups(seeds or []), rerun=rerun, allow_data_mismatch=allow_data_mismatch,
                         published=published)
    for line in [*comparison.verdicts(), *comparison.headlines(), *summarised_notes(comparison.claim_notes)]:
        out.print(line, highlight=False, soft_wrap=True)
    for line in comparison.protocol_mismatches:
        out.print(f"protocol mismatch (allowed): {line}", highlight=False, soft_wrap=True)
    for line in comparison.version_lines():
        out.print(line, highlight=False, soft_wrap=True)
    for _, rows in comparison.table.groupby(["model_a", "model_b"], sort=False):
        print_table(out, pair_table(rows, comparison.settings, comparison.tasks, wide), wide)
    if not comparison.seeds.empty:
        print_table(out, seed_table(comparison), wide)
    if comparison.table["approximate"].any():
        out.print("≈ approximate: published numbers have no per-pair scores; tested with Steiger's Z at the worst "
                  "case over the unknown correlation between the two models (conservative).", highlight=False, soft_wrap=True)
    for line in comparison.summary_lines():
        out.print(line, highlight=False, soft_wrap=True)
    if csv:
        output.write_csv(comparison, csv)
        if not to_stdout(csv):
            log(f"comparison table written to {csv}")
    if json_path:
        output.write_json(comparison, json_path)
        if not to_stdout(json_path):
            log(f"comparison written to {json_path}")


def register(app: typer.Typer) -> None:
    app.command("compare", cls=TaskFlagsCommand)(compare_command)

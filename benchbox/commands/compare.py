"""``benchbox compare``: paired significance tests between runs, encoders and published results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import log, out, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import to_stdout
from benchbox.storage.outdir import check_output_file
from benchbox.commands.options import (ALLOW_DATA_MISMATCH, BOOTSTRAP, DATA_DIR, QUIET, RUNS_DIR, SEED, THREADS,
                                       csv_option, in_range, json_option)
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED
from benchbox.threads import set_threads
from benchbox.tables import print_table, pair_table, seed_table
from benchbox.commands.task_flags import TaskFlagsCommand, given_flags
from benchbox.task import parse_task_arguments
from benchbox.task_options import TaskOptions


def compare_command(
    ctx: typer.Context,
    models: Annotated[list[str], typer.Argument(help="Two or more: run folders or folders of runs, encoder names / module:attribute / trained-model folders (a matching run in --runs-dir is reused, else evaluated via the cache), or paper:merkx2019/{glove-bow,infersent,char-gru-flickr8k,char-gru-coco}; LABEL=MODEL names one in the output.")],
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", metavar="TASK", help="Task or group, or TASK:KEY=VALUE to set one of its options for on-demand evaluation; repeatable (default: all shared tasks).")] = None,
    data_dir: DATA_DIR = None,
    runs_dir: RUNS_DIR = Path("runs"),
    rerun: Annotated[bool, typer.Option("--rerun", help="Evaluate encoder names / model folders afresh even when --runs-dir holds a matching run.")] = False,
    correction: Annotated[str, typer.Option(help="Multiple-comparison correction the verdicts use: holm or bh.")] = "holm",
    test: Annotated[str, typer.Option(help="Test for two dependent correlations: williams or steiger.")] = "williams",
    item_dependence: Annotated[str, typer.Option("--item-dependence", help="Correlation rows whose pairs share a sentence: sentence-groups (a jackknife over groups of pairs linked by shared sentences) or independent (Williams/Steiger as if every pair were independent: the published reference).")] = "sentence-groups",
    test_resamples: Annotated[int, typer.Option("--test-resamples", help="Resamples of the paired bootstrap tests and of the intervals of the differences (at least 2).", callback=in_range(2))] = DEFAULT_RESAMPLES,
    bootstrap: BOOTSTRAP = DEFAULT_RESAMPLES,
    seed: SEED = DEFAULT_SEED,
    family: Annotated[str, typer.Option(help="Correction family: all (every row of every pair) or pair (each pair apart).")] = "all",
    baseline: Annotated[Optional[str], typer.Option(help="Compare every other model with this one only (a label, run folder or encoder name).")] = None,
    allow_protocol_mismatch: Annotated[bool, typer.Option("--allow-protocol-mismatch", help="Compare runs evaluated under different protocol options or on data files with different contents anyway (recorded in the output).")] = False,
    pooling: Annotated[str, typer.Option(help="Between-row variance of the pooled claim effect: dl (DerSimonian-Laird) or pm (Paule-Mandel).")] = "dl",
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
        from benchbox.data.comparator_file import read_comparators

        published = comparator_sources(read_comparators(comparators))
    options = TaskOptions(seed=seed, bootstrap=bootstrap, task_options=task_options, flags=given_flags(ctx))
    comparison = compare(models, names or None, data_dir=data_dir, runs_dir=runs_dir, test=test,
                         correction=correction, n_boot=test_resamples, seed=seed, options=options, log=log,
                         family=family, baseline=baseline, allow_protocol_mismatch=allow_protocol_mismatch,
                         pooling=pooling, seeds=parse_seed_groups(seeds or []), rerun=rerun,
                         item_dependence=item_dependence, allow_data_mismatch=allow_data_mismatch,
                         published=published)
    for line in [*comparison.verdicts(), *comparison.headlines(), *comparison.claim_notes]:
        out.print(line, highlight=False, soft_wrap=True)
    for line in comparison.protocol_mismatches:
        out.print(f"protocol mismatch (allowed): {line}", highlight=False, soft_wrap=True)
    for line in comparison.version_lines():
        out.print(line, highlight=False, soft_wrap=True)
    for _, rows in comparison.table.groupby(["model_a", "model_b"], sort=False):
        print_table(out, pair_table(rows, comparison.correction, comparison.tasks, wide), wide)
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

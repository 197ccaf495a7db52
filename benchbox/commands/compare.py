"""``benchbox compare``: paired significance tests between runs, encoders and published results."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchbox.data import existing_data_dir
from benchbox.console import log, out, set_quiet
from benchbox.errors import BenchboxError
from benchbox.outdir import check_writable
from benchbox.options import AT_LEAST_0, in_range
from benchbox.task import TaskOptions

if TYPE_CHECKING:  # the statistics stack loads when the command runs, not at CLI start-up
    from benchbox.compare import Comparison

VERDICT_STYLE = {"better": "green", "worse": "red"}
TABLE_WIDTH = 150
VERDICT_SHORT = {"no significant difference": "n.s."}


def _num(value: float, digits: int = 3) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _ci(low: float, high: float) -> str:
    return "" if math.isnan(low) else f"[{_num(low)},{_num(high)}]"


def _p(value: float) -> str:
    return "" if math.isnan(value) else (f"{value:.2e}" if value < 1e-3 else f"{value:.4f}")


def pair_table(rows: pd.DataFrame, correction: str) -> Table:
    """One pair: values with their 95% intervals under them, the test, raw and corrected p, A's verdict."""
    a, b = rows["model_a"].iloc[0], rows["model_b"].iloc[0]
    caption = f"n.s. = no significant difference at 5% after {correction}"
    if rows["approximate"].any():
        caption += "; ≈ approximate (no per-item scores)"
    table = Table(title=f"A = {a}  vs  B = {b}", caption=caption)
    for column in ("task", "subset", "metric", "A", "B", "A − B", "test", "p", f"p {correction}", "A is"):
        table.add_column(column, justify="right" if column in ("A", "B", "A − B", "p", f"p {correction}") else "left",
                         overflow="fold", min_width=6 if column in ("subset", "metric", "test") else None)
    p_column = "p_holm" if correction == "holm" else "p_bh"
    for _, r in rows.iterrows():
        verdict = VERDICT_SHORT.get(r["verdict"], r["verdict"]) + (" ≈" if r["approximate"] else "")
        style = VERDICT_STYLE.get(r["verdict"])
        table.add_row(
            r["task"], str(r["subset"]), r["metric"],
            f"{_num(r['value_a'])}\n{_ci(r['ci_low_a'], r['ci_high_a'])}",
            f"{_num(r['value_b'])}\n{_ci(r['ci_low_b'], r['ci_high_b'])}",
            f"{_num(r['diff'])}\n{_ci(r['diff_ci_low'], r['diff_ci_high'])}",
            r["test"], _p(r["p"]), _p(r[p_column]), Text(verdict, style=style or ""),
        )
    return table


def seed_table(comparison: Comparison) -> Table:
    table = Table(title="Seed variance (mean ± sd across runs of one configuration)")
    for column in ("model", "task", "subset", "metric", "seeds", "mean ± sd", "mean resampling 95% CI"):
        table.add_column(column)
    for _, r in comparison.seeds.iterrows():
        table.add_row(r["model"], r["task"], str(r["subset"]), r["metric"], str(r["n_seeds"]),
                      f"{_num(r['mean'])} ± {_num(r['sd'])}", _ci(r["ci_low_mean"], r["ci_high_mean"]))
    return table


def _seed_groups(values: list[str]) -> dict[str, list[str]]:
    groups = {}
    for value in values:
        name, _, runs = value.partition("=")
        members = [r for r in runs.split(",") if r]
        if not name or len(members) < 2:
            raise BenchboxError(f"--seeds {value!r}: write NAME=RUN,RUN[,...] with at least two runs")
        groups[name] = members
    return groups


def compare_command(
    models: Annotated[list[str], typer.Argument(help="Two or more: run folders, encoder names / trained-model folders (a matching run in --runs-dir is reused, else evaluated via the cache), or paper:merkx2019/{glove-bow,infersent,char-gru-flickr8k,char-gru-coco}; LABEL=MODEL names one in the output.")],
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", help="Task or group, or TASK:KEY=VALUE to set one of its options for on-demand evaluation; repeatable (default: all shared tasks).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option(help="Data root for encoders evaluated on demand.", callback=existing_data_dir)] = None,
    runs_dir: Annotated[Path, typer.Option(help="Where runs evaluated on demand are looked up (reused when they match) and written.")] = Path("runs"),
    rerun: Annotated[bool, typer.Option("--rerun", help="Evaluate encoder names / model folders afresh even when --runs-dir holds a matching run.")] = False,
    correction: Annotated[str, typer.Option(help="Multiple-comparison correction the verdicts use: holm or bh.")] = "holm",
    test: Annotated[str, typer.Option(help="Test for two dependent correlations: williams or steiger.")] = "williams",
    bootstrap: Annotated[int, typer.Option(help="Paired bootstrap resamples (at least 2).", callback=in_range(2))] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (and of on-demand evaluation).", callback=AT_LEAST_0)] = 1111,
    family: Annotated[str, typer.Option(help="Correction family: all (every row of every pair) or pair (each pair apart).")] = "all",
    baseline: Annotated[Optional[str], typer.Option(help="Compare every other model with this one only (a label, run folder or encoder name).")] = None,
    allow_protocol_mismatch: Annotated[bool, typer.Option("--allow-protocol-mismatch", help="Compare runs evaluated under different protocol options anyway (recorded in the output).")] = False,
    pooling: Annotated[str, typer.Option(help="Between-row variance of the pooled claim effect: dl (DerSimonian-Laird) or pm (Paule-Mandel).")] = "dl",
    seeds: Annotated[Optional[list[str]], typer.Option("--seeds", help="NAME=RUN,RUN,...: these runs (as given above) are seeds of one model; repeatable.")] = None,
    csv: Annotated[Optional[Path], typer.Option("--csv", help="Write the comparison table as CSV (and the claims beside it, NAME.claims.csv).")] = None,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Write claims, table, summary and seed variance as JSON.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or log output.")] = False,
) -> None:
    """Compare encoders: one headline per claim (pooled effect over rows, seed-aware test, ASO), then per task,
    subset and metric both scores with CIs, the difference with its CI, a paired test, Holm/BH-corrected p and
    a verdict; then one summary line per pair."""
    from benchbox.compare import compare

    set_quiet(quiet)
    for path, option in ((csv, "--csv"), (json_path, "--json")):
        if path:  # a read-only destination fails now, not after the tests
            check_writable(path.parent, option)
    from benchbox.commands.core import parse_task_arguments

    names, task_options = parse_task_arguments(task or [])
    options = TaskOptions(seed=seed, bootstrap=bootstrap, task_options=task_options)
    comparison = compare(models, names or None, data_dir=data_dir, runs_dir=runs_dir, test=test,
                         correction=correction, n_boot=bootstrap, seed=seed, options=options, log=log,
                         family=family, baseline=baseline, allow_protocol_mismatch=allow_protocol_mismatch,
                         pooling=pooling, seeds=_seed_groups(seeds or []), rerun=rerun)
    # piped output (logs, files) has no width: print wide rather than crush the columns
    console = out if out.is_terminal else Console(width=max(out.width, TABLE_WIDTH), no_color=out.no_color,
                                                 markup=False)
    for line in comparison.headlines():
        out.print(line, highlight=False, soft_wrap=True)
    for line in comparison.protocol_mismatches:
        out.print(f"protocol mismatch (allowed): {line}", highlight=False, soft_wrap=True)
    for _, rows in comparison.table.groupby(["model_a", "model_b"], sort=False):
        console.print(pair_table(rows, comparison.correction))
    if not comparison.seeds.empty:
        console.print(seed_table(comparison))
    if comparison.table["approximate"].any():
        console.print("≈ approximate: published numbers have no per-pair scores; tested with Steiger's Z at the worst "
                  "case over the unknown correlation between the two models (conservative).", highlight=False, soft_wrap=True)
    for line in comparison.summary_lines():
        out.print(line, highlight=False, soft_wrap=True)
    if csv:
        comparison.to_csv(csv)
        log(f"comparison table written to {csv}")
    if json_path:
        comparison.to_json(json_path)
        log(f"comparison written to {json_path}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)

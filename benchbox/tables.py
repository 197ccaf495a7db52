"""Terminal tables of ``benchbox eval`` and ``benchbox compare``: a compact view that fits the terminal, and a
wide view (``--wide``) with every column.

Numbers use :mod:`benchbox.formatting`, the formatter of the reports too, so that a correlation reads the same
(× 100, one decimal) on the terminal and in a report; the caption says so. Name columns (task, subset,
metric, model) and number columns never wrap: a subset reads ``surprise.SMTnews`` in full, never
``surprise.SMTne…``, and no number is split across lines. The compact view leaves out what a person does not
need at a glance (the compare view: verdict first, then the row, the difference with its 95% interval and the
corrected p), so that it fits 80 columns, the width rich gives piped output, for the tasks benchbox ships.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchbox import formatting as fmt
from benchbox.stats.corrections import CORRECTIONS

if TYPE_CHECKING:
    import pandas as pd

    from benchbox.comparison.compare import Comparison
    from benchbox.comparison.settings import CompareSettings
    from benchbox.evaluation import Evaluation
    from benchbox.task_contract.metadata import KnownTasks

VERDICT_STYLE = {"better": "green", "worse": "red"}
VERDICT_SHORT = {"no significant difference": "n.s."}
APPROXIMATE = "≈"


def _table(title: str, caption: str) -> Table:
    """A table without outer borders or edge padding: the columns get the width."""
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                 padding=(0, 1), caption_justify="left", title_justify="left")


def _text_column(table: Table, header: str, wrap: bool = False) -> None:
    """Words and names; ``wrap``: may fold where the terminal is too narrow for the whole table (rich narrows
    only such columns before it would cut any other)."""
    table.add_column(header, no_wrap=not wrap, overflow="fold")


def _number_column(table: Table, header: str) -> None:
    table.add_column(header, justify="right", no_wrap=True, overflow="fold")


def scale_caption(extra: str = "") -> str:
    """The caption stating the display convention (and ``extra``)."""
    return f"{fmt.SCALE_NOTE}; 95% intervals" + (f"; {extra}" if extra else "")


def results_table(name: str, evaluation: Evaluation, wide: bool = False) -> Table:
    """The metric records of one evaluation: task, subset, metric, value with its 95% interval; ``wide`` adds
    the interval bounds as columns of their own and n (items)."""
    table = _table(f"{name} ({evaluation.encoder['fingerprint']})", scale_caption())
    for column in ("task", "subset", "metric"):
        _text_column(table, column, wrap=True)
    for column in (("value", "95% CI low", "95% CI high", "n") if wide else ("value [95% CI]",)):
        _number_column(table, column)
    for r in evaluation.records:
        spec = evaluation.tasks[r.task].metric(r.metric)
        if wide:
            numbers = [fmt.number(r.value, spec), fmt.number(r.ci_low, spec), fmt.number(r.ci_high, spec),
                       str(r.n) if r.n else fmt.MISSING]
        else:
            numbers = [fmt.with_interval(r.value, r.ci_low, r.ci_high, spec)]
        table.add_row(r.task, r.subset, r.metric, *numbers)
    return table


def _verdict(row: pd.Series) -> Text:
    verdict = VERDICT_SHORT.get(row["verdict"], row["verdict"]) + (f" {APPROXIMATE}" if row["approximate"] else "")
    return Text(verdict, style=VERDICT_STYLE.get(row["verdict"], ""))


def pair_table(rows: pd.DataFrame, settings: CompareSettings, tasks: KnownTasks, wide: bool = False) -> Table:
    """One pair's rows, verdict of A first: the row (``task/subset/metric`` in one column, which keeps the
    compact view within 80 columns), A − B with its 95% interval and the p adjusted by the correction of
    ``settings`` (the comparison's); ``wide``: task, subset and metric apart, both values with their intervals,
    the test, the raw p and the p adjusted by each other correction. The compact view shows the summary rows (those the pair's summary line counts), ``wide`` every
    tested row. Numbers as each metric's spec in ``tasks`` says."""
    a, b = rows["model_a"].iloc[0], rows["model_b"].iloc[0]
    correction = settings.correction
    corrections = [settings.corrected, *(c for c in CORRECTIONS.values() if c is not settings.corrected)]
    others = 0
    if not wide and "summary" in rows:
        summary = rows["summary"].astype(bool)
        others = int((~summary).sum())
        rows = rows[summary]
    notes = [f"A is: verdict after {correction} at 5% (n.s.: no significant difference)",
             f"A − B: 95% interval of the row alone, not adjusted for multiplicity (p {correction} is adjusted)"]
    if rows["approximate"].any():
        notes.append(f"{APPROXIMATE} approximate (no per-item scores)")
    if others:
        notes.append(f"summary rows only (per subset: Pearson r, accuracy or R@10); {others} more tested rows with "
                     "--wide or --csv")
    table = _table(f"A = {a}  vs  B = {b}", scale_caption("; ".join(notes)))
    _text_column(table, "A is")
    for column in (("task", "subset", "metric") if wide else ("task/subset/metric",)):
        _text_column(table, column, wrap=True)
    adjusted = [f"p {c.name}" for c in corrections]
    numbers = ("A", "B", "A − B", "test", "p", *adjusted) if wide else ("A − B", adjusted[0])
    for column in numbers:
        (_text_column if column == "test" else _number_column)(table, column)
    for _, r in rows.iterrows():
        spec = tasks.spec(r["task"], r["metric"])
        diff = fmt.with_interval(r["diff"], r["diff_ci_low"], r["diff_ci_high"], spec)
        p = [fmt.p_value(r[c.p_column]) for c in corrections]
        if wide:
            cells = [fmt.with_interval(r["value_a"], r["ci_low_a"], r["ci_high_a"], spec),
                     fmt.with_interval(r["value_b"], r["ci_low_b"], r["ci_high_b"], spec),
                     diff, str(r["test"]), fmt.p_value(r["p"]), *p]
        else:
            cells = [diff, p[0]]
        names = [str(r["task"]), str(r["subset"]), str(r["metric"])]
        table.add_row(_verdict(r), *(names if wide else ["/".join(names)]), *cells)
    return table


def seed_table(comparison: Comparison) -> Table:
    """Seed variance: per configuration and row, the mean ± sd across its runs and the mean resampling
    interval."""
    table = _table("Seed variance (mean ± sd across runs of one configuration)", scale_caption())
    for column in ("model", "task", "subset", "metric"):
        _text_column(table, column)
    for column in ("seeds", "mean ± sd", "mean resampling 95% CI"):
        _number_column(table, column)
    for _, r in comparison.seeds.iterrows():
        spec = comparison.tasks.spec(r["task"], r["metric"])
        interval = (fmt.MISSING if fmt.is_missing(r["ci_low_mean"]) else
                    f"[{fmt.number(r['ci_low_mean'], spec)}, {fmt.number(r['ci_high_mean'], spec)}]")
        table.add_row(r["model"], r["task"], str(r["subset"]), r["metric"], str(r["n_seeds"]),
                      f"{fmt.number(r['mean'], spec)} ± {fmt.number(r['sd'], spec)}", interval)
    return table


def print_table(console: Console, table: Table, wide: bool = False) -> None:
    """Print ``table`` on ``console``; ``wide``: at its natural width even where that is wider than the
    terminal (the terminal, or a pager, scrolls), so that no column is squeezed."""
    if wide:
        width = max(console.width, console.measure(table, options=console.options.update_width(10_000)).maximum)
        if width > console.width:
            console = Console(file=console.file, width=width, no_color=console.no_color, markup=False,
                              color_system=console.color_system, force_terminal=console.is_terminal)
    console.print(table)

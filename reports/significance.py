"""Pairwise significance: the summary lines and the table of a :class:`benchbox.compare.Comparison`.

The comparison table has one row per model pair × task × subset × metric, with columns ``task, subset, metric,
model_a, model_b, value_a, ci_low_a, ci_high_a, value_b, ci_low_b, ci_high_b, diff, diff_ci_low, diff_ci_high,
test, statistic, p, p_holm, p_bh, verdict, approximate``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.reports import formatting as fmt
from benchbox.reports.document import Block, Bullets, Paragraph, Table

COLUMNS = ("task", "subset", "metric", "model_a", "model_b", "value_a", "ci_low_a", "ci_high_a", "value_b",
           "ci_low_b", "ci_high_b", "diff", "diff_ci_low", "diff_ci_high", "test", "p", "p_holm", "p_bh", "verdict",
           "approximate")


class ComparisonLike(Protocol):
    """What the report needs of a comparison (``benchbox.compare.Comparison``)."""

    table: pd.DataFrame

    def summary_lines(self) -> list[str]: ...


@dataclass(frozen=True)
class Pairwise:
    """Comparisons of several pairs, concatenated (p-values are adjusted within each pair, as compare does)."""

    table: pd.DataFrame
    lines: list[str]

    def summary_lines(self) -> list[str]:
        return self.lines


def compare_pairs(specs: list[tuple[str, str, set[str]]], log: Callable[[str], None] = lambda message: None) -> Pairwise:
    """Compare every pair of ``(source, report label, its tasks)`` that shares a task with
    :func:`benchbox.compare.compare` (sources: run folders or ``paper:...`` names), naming the models by their
    report labels; pairs without a common task are skipped rather than failing."""
    from benchbox.compare import compare

    tables, lines = [], []
    for (a, label_a, tasks_a), (b, label_b, tasks_b) in itertools.combinations(specs, 2):
        if not tasks_a & tasks_b:
            continue
        log(f"comparing {label_a} with {label_b}")
        result = compare([a, b], log=log)
        names = dict(zip(result.models, (label_a, label_b)))
        tables.append(result.table.assign(model_a=result.table["model_a"].map(names),
                                          model_b=result.table["model_b"].map(names)))
        lines.extend(_relabel(line, names) for line in result.summary_lines())
    if not tables:
        raise BenchboxError("--compare needs two evaluation runs or references with a task in common")
    return Pairwise(pd.concat(tables, ignore_index=True), lines)


def _relabel(line: str, names: dict[str, str]) -> str:
    """Replace compare's model names in a summary line by the report's (longest first, no chained replacement)."""
    order = sorted(names, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(name) for name in order))
    return pattern.sub(lambda m: names[m.group(0)], line)


def significance_blocks(comparison: ComparisonLike) -> list[Block]:
    table = comparison.table
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise BenchboxError(f"the comparison table lacks the columns {', '.join(missing)}")
    blocks: list[Block] = [Paragraph(
        "Paired tests on the per-item scores of each pair of models (the same sentence pairs or queries); "
        "p-values are corrected for the number of comparisons by Holm (family-wise) and Benjamini–Hochberg "
        "(false discovery rate); the last column is the comparison's verdict after that correction. Differences are "
        "A − B (correlations × 100)."
    )]
    lines = list(comparison.summary_lines())
    if lines:
        blocks.append(Bullets(lines))
    rows = []
    for r in table.itertuples(index=False):
        test = f"{r.test} (approximate)" if bool(r.approximate) else str(r.test)
        rows.append([str(r.task), str(r.subset), str(r.metric), str(r.model_a), str(r.model_b),
                     fmt.with_interval(r.value_a, r.ci_low_a, r.ci_high_a, r.metric),
                     fmt.with_interval(r.value_b, r.ci_low_b, r.ci_high_b, r.metric),
                     fmt.with_interval(r.diff, r.diff_ci_low, r.diff_ci_high, r.metric),
                     test, fmt.p_value(r.p), fmt.p_value(r.p_holm), fmt.p_value(r.p_bh), str(r.verdict)])
    if rows:
        blocks.append(Table(
            caption="Pairwise comparisons with 95% intervals of the difference",
            header=["Task", "Subset", "Metric", "A", "B", "A value", "B value", "A − B", "Test", "p", "p (Holm)",
                    "p (BH)", "A vs B"],
            rows=rows, numeric=[False] * 5 + [True] * 3 + [False] + [True] * 3 + [False], row_headers=3,
        ))
    return blocks

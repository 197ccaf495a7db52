"""Pairwise significance: the summary lines and the table of a :class:`benchbox.compare.Comparison`.

The comparison table has one row per model pair × task × subset × metric, with columns ``task, subset, metric,
model_a, model_b, value_a, ci_low_a, ci_high_a, value_b, ci_low_b, ci_high_b, diff, diff_ci_low, diff_ci_high,
test, statistic, p, p_holm, p_bh, verdict, approximate``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox import formatting as fmt
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
    #: the claims of every pair and their per-row effects and per-seed scores (:func:`benchbox.claims.claims`)
    claims: pd.DataFrame | None = None
    claim_rows: pd.DataFrame | None = None
    claim_seeds: pd.DataFrame | None = None

    def summary_lines(self) -> list[str]:
        return self.lines


def compare_pairs(specs: list[tuple[str, str, set[str]]], log: Callable[[str], None] = lambda message: None,
                  seeds: dict[str, list[str]] | None = None) -> Pairwise:
    """Compare every pair of ``(source, report label, its tasks)`` that shares a task with
    :func:`benchbox.compare.compare` (sources: run folders or ``paper:...`` names; p-values adjusted within each
    pair), labelling the models by their report labels (compare's ``labels``). When every pair shares a task, one comparison of all
    sources, so that the seeds of one configuration make one model in the claims; otherwise pair by pair,
    skipping pairs without a common task rather than failing. ``seeds``: declared seed groups (model name →
    sources), passed to compare when all sources are compared at once."""
    from benchbox.compare import compare

    pairs = list(itertools.combinations(specs, 2))
    together = bool(pairs) and all(x[2] & y[2] for x, y in pairs)
    groups = [specs] if together else [[x, y] for x, y in pairs if x[2] & y[2]]
    tables, lines, claims, claim_rows, claim_seeds = [], [], [], [], []
    for group in groups:
        log("comparing " + ", ".join(label for _, label, _ in group))
        result = compare([source for source, _, _ in group], family="pair", log=log,
                         seeds=seeds if together else None, labels=[label for _, label, _ in group])
        tables.append(result.table)
        lines.extend(result.summary_lines())
        for frame, found in ((result.claims, claims), (result.claim_rows, claim_rows), (result.claim_seeds, claim_seeds)):
            if frame is not None and not frame.empty:
                found.append(frame)
    if not tables:
        raise BenchboxError("--compare needs two evaluation runs or references with a task in common")
    joined = [pd.concat(f, ignore_index=True) if f else None for f in (claims, claim_rows, claim_seeds)]
    return Pairwise(pd.concat(tables, ignore_index=True), lines, *joined)


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

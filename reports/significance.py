"""Pairwise significance: per pair of models a headline and a compact table of its tasks, and an appendix with
every test of a :class:`benchbox.comparison.compare.Comparison`.

The comparison table has one row per model pair × task × subset × metric (columns: ``benchbox.comparison.compare.COLUMNS``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Protocol

import pandas as pd

from benchbox.comparison.compare import Comparison
from benchbox.comparison.settings import FAMILIES, CompareSettings
from benchbox.errors import BenchboxError
from benchbox import formatting as fmt
from benchbox.reports.document import Block, Paragraph, Table
from benchbox.comparison.sources import Source
from benchbox.stats.corrections import CORRECTIONS
from benchbox.task_contract.metadata import KnownTasks


class ComparisonLike(Protocol):
    """What the report needs of a comparison (``benchbox.comparison.compare.Comparison``): its table, the settings
    it was made with (the correction, the family it corrects over, ...) and what is known of its tasks (how their
    metrics are shown)."""

    table: pd.DataFrame
    settings: CompareSettings
    tasks: KnownTasks


def _between_published(frame: pd.DataFrame | None, published: set[str]) -> pd.Series | bool:
    """Rows of ``frame`` that compare two published comparators (nothing a report on runs is about)."""
    if frame is None or frame.empty or "model_a" not in frame:
        return False
    return frame["model_a"].isin(published) & frame["model_b"].isin(published)


def compare_pairs(sources: list[Source], log: Callable[[str], None] = lambda message: None,
                  seeds: dict[str, list[str]] | None = None, settings: CompareSettings | None = None) -> Comparison:
    """Compare every pair of ``sources`` that shares a task with :func:`benchbox.comparison.compare.compare_sources`, and
    keep the pairs with at least one evaluated model: published comparators are compared with the runs, not
    with each other. When every pair shares a task, one comparison of all sources with ``settings`` (default:
    compare's own, the correction over ``family="all"``), so that ``report --compare`` and ``compare`` give the
    same verdicts and the seeds of one configuration make one model in the claims; otherwise pair by pair
    (p-values adjusted within each pair, ``family="pair"``, as the report then says), skipping pairs without a
    common task rather than failing. ``seeds``: declared seed groups (model name → sources), passed on when all
    sources are compared at once."""
    from benchbox.comparison.compare import compare_sources

    published = {s.label for s in sources if s.is_reference}
    tasks = {id(s): set(s.metrics["task"]) for s in sources}
    pairs = [(x, y) for x, y in itertools.combinations(sources, 2) if not {x.label, y.label} <= published]
    together = bool(pairs) and all(tasks[id(x)] & tasks[id(y)] for x, y in pairs)
    groups = [sources] if together else [[x, y] for x, y in pairs if tasks[id(x)] & tasks[id(y)]]
    tables, claims, claim_rows, claim_seeds, notes, known = [], [], [], [], [], KnownTasks()
    settings = settings or CompareSettings()
    if not together:
        settings = dataclasses.replace(settings, family="pair")
    between = tuple(f"{x} vs {y}:" for x in published for y in published)
    for group in groups:
        log("comparing " + ", ".join(s.label for s in group))
        result = compare_sources(group, settings=settings, seeds=seeds if together else None)
        known.update({task: metadata for task, metadata in result.tasks.items() if task not in known})
        tables.append(result.table[~_between_published(result.table, published)])
        for frame, found in ((result.claims, claims), (result.claim_rows, claim_rows), (result.claim_seeds, claim_seeds)):
            if frame is not None and not frame.empty:
                found.append(frame[~_between_published(frame, published)])
        notes += [n for n in result.claim_notes if not n.startswith(between) and n not in notes]
    tables = [t for t in tables if not t.empty]
    if not tables:
        raise BenchboxError("--compare needs two evaluation runs, or a run and a reference, with a task in common")
    joined = [pd.concat(f, ignore_index=True) if f else None for f in (claims, claim_rows, claim_seeds)]
    return Comparison(table=pd.concat(tables, ignore_index=True), models=[s.label for s in sources], settings=settings,
                      claims=joined[0], claim_rows=joined[1], claim_seeds=joined[2], claim_notes=notes, tasks=known)


#: columns of the comparison table (``benchbox.comparison.compare.COLUMNS``) the report does without
OPTIONAL = {"statistic", "summary", "effect", "effect_var", "cluster"}


def _check_columns(table: pd.DataFrame) -> None:
    from benchbox.comparison.compare import COLUMNS

    missing = [c for c in COLUMNS if c not in table.columns and c not in OPTIONAL]
    if missing:
        raise BenchboxError(f"the comparison table lacks the columns {', '.join(missing)}")


def _headline(a: str, b: str, rows: pd.DataFrame, name: str, claims: pd.DataFrame | None) -> str:
    """The pair's claim in one sentence, from the comparison's verdicts (and its pooled claims, if any)."""
    from benchbox.task_contract.paired_tests import KINDS
    from benchbox.comparison.compare import VERDICTS

    units = rows[rows["summary"].astype(bool)] if "summary" in rows else rows
    counts = units["verdict"].value_counts()
    text = (f"{a} vs {b}: {a} is significantly better on {counts.get('better', 0)} of {len(units)} summary rows, worse "
            f"on {counts.get('worse', 0)} and not significantly different on "
            f"{counts.get(VERDICTS[2], 0)} ({name}-corrected, 5%)")
    if units["approximate"].astype(bool).any():
        text += "; approximate: published numbers, no per-item scores"
    if claims is not None and not claims.empty:
        mine = claims[(claims["model_a"] == a) & (claims["model_b"] == b)]
        for claim in mine.itertuples(index=False):
            text += (f"; pooled over {claim.rows} {KINDS[claim.kind].noun} rows: {claim.verdict} "
                     f"(p = {fmt.p_value(claim.p_claim_adjusted)})")
    return text + "."


def significance_blocks(comparison: ComparisonLike) -> list[Block]:
    """Per pair: the headline and a compact table of its tasks (verdict first, A − B with its 95% interval, the
    corrected p), in the order of the comparison."""
    table, tasks, settings = comparison.table, comparison.tasks, comparison.settings
    _check_columns(table)
    name = settings.corrected.title
    *head, last = [c.title for c in CORRECTIONS.values() if c is not settings.corrected]
    others = f"{', '.join(head)} and {last}" if head else last
    blocks: list[Block] = [Paragraph(
        "Paired tests on the per-item scores of each pair of models (the same sentence pairs or queries), one per "
        f"task (per subset: Pearson r, R@10 or accuracy); p-values are {name}-corrected over "
        f"{FAMILIES[settings.family]}, and a verdict is significant at 5% after that correction. Differences are A − B with 95% "
        "intervals of each row alone, not adjusted for multiplicity, so an interval that excludes 0 may sit beside "
        f"a corrected p above 0.05. Every test (Spearman, aggregates, other recalls, raw and {others} p) is in the "
        "appendix." + _dependence_note(comparison)
    )]
    claims = getattr(comparison, "claims", None)
    for (a, b), rows in table.groupby(["model_a", "model_b"], sort=False):
        blocks.append(Paragraph(_headline(a, b, rows, name, claims)))
        units = rows[rows["summary"].astype(bool)] if "summary" in rows else rows
        blocks.append(Table(
            caption=f"{a} vs {b}: the verdict for {a} per task, A − B with its unadjusted 95% interval, "
                    f"{name}-corrected p",
            header=[f"{a} is", "Task", "Subset", "Metric", "A − B", f"p ({name})"],
            rows=[[_verdict(r.verdict, r.approximate), str(r.task), str(r.subset), str(r.metric),
                   fmt.with_interval(r.diff, r.diff_ci_low, r.diff_ci_high, tasks.spec(r.task, r.metric)),
                   fmt.p_value(getattr(r, settings.p_column))] for r in units.itertuples(index=False)],
            numeric=[False] * 4 + [True] * 2, row_headers=0,
        ))
    return blocks


def _dependence_note(comparison: ComparisonLike) -> str:
    """How the correlation rows treated pairs that share a sentence, when the comparison says."""
    from benchbox.task_contract.paired_tests import JACKKNIFE

    if comparison.settings.item_dependence == "independent":
        return (" Every correlation row is tested by Williams' t (or Steiger's Z) as if its sentence pairs were "
                "independent, though pairs that share a sentence are not.")
    if "test" in comparison.table and (comparison.table["test"] == JACKKNIFE).any():
        return (" Correlation rows whose sentence pairs share sentences are tested by a jackknife that leaves out "
                "one group of pairs linked by shared sentences at a time (t on groups − 1 degrees of freedom); the "
                "others by Williams' t.")
    return ""


def _verdict(verdict: str, approximate: bool) -> str:
    return f"{verdict} (approximate)" if bool(approximate) else str(verdict)


def appendix_blocks(comparison: ComparisonLike) -> list[Block]:
    """Every test of the comparison, a table per pair (the pair in the caption, so that no column repeats the
    model labels): one row per task × subset × metric."""
    table, tasks = comparison.table, comparison.tasks
    _check_columns(table)
    name = comparison.settings.corrected.title
    blocks: list[Block] = []
    for (a, b), pair in table.groupby(["model_a", "model_b"], sort=False):
        rows = []
        for r in pair.itertuples(index=False):
            test = f"{r.test} (approximate)" if bool(r.approximate) else str(r.test)
            rows.append([str(r.verdict), str(r.task), str(r.subset), str(r.metric),
                         fmt.with_interval(r.value_a, r.ci_low_a, r.ci_high_a, tasks.spec(r.task, r.metric)),
                         fmt.with_interval(r.value_b, r.ci_low_b, r.ci_high_b, tasks.spec(r.task, r.metric)),
                         fmt.with_interval(r.diff, r.diff_ci_low, r.diff_ci_high, tasks.spec(r.task, r.metric)),
                         test, fmt.p_value(r.p), *(fmt.p_value(getattr(r, c.p_column)) for c in CORRECTIONS.values())])
        blocks.append(Table(
            caption=f"A = {a}, B = {b}: every test with 95% intervals; the verdict (of A) uses the {name}-corrected p",
            header=["A is", "Task", "Subset", "Metric", "A", "B", "A − B", "Test", "p",
                    *(f"p ({c.short})" for c in CORRECTIONS.values())],
            rows=rows, numeric=[False] * 4 + [True] * 3 + [False] + [True] * (1 + len(CORRECTIONS)), row_headers=0,
        ))
    return blocks

"""Result tables: the semantic table (the paper's Figure 3 as numbers), STS year aggregates, retrieval (the
paper's Table 2 layout), transfer tasks, one table per other task group (a plugin's tasks get their own section),
and every remaining metric, so that no number of a run is left out.

Each task's section is its ``group`` and its rows' position its ``order`` (then its name), and each number is shown
as its metric's spec says, from what is known of the task (:mod:`benchbox.task_contract.metadata`: the installed task, else
what a run recorded of it; else group ``"other"`` at the end); subsets follow their order of first appearance,
columns the order of the sources.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from benchbox import formatting as fmt
from benchbox.reports.document import Table
from benchbox.comparison.sources import Source, known_tasks
from benchbox.task_contract.metadata import OTHER
from benchbox.tasks.retrieval import Retrieval
from benchbox.tasks.structure import Structure
from benchbox.tasks.sts import SEMANTIC_GROUP
from benchbox.tasks.transfer import TransferTask

#: the groups with a layout of their own (the paper's tables), as their tasks declare them; any other group gets
#: :func:`group_tables`
SEMANTIC, RETRIEVAL, TRANSFER, STRUCTURE = SEMANTIC_GROUP, Retrieval.group, TransferTask.group, Structure.group
LAID_OUT = (SEMANTIC, RETRIEVAL, TRANSFER, STRUCTURE)
RETRIEVAL_HEADINGS = {"r1": "R@1", "r5": "R@5", "r10": "R@10", "medr": "medr"}
RETRIEVAL_METRICS = tuple(RETRIEVAL_HEADINGS)
#: (direction subset, heading) in the paper's Table 2 order: caption → image first
DIRECTIONS = (("t2i", "Caption → image"), ("i2t", "Image → caption"))
TRANSFER_METRICS = ("accuracy", "f1")
#: the structure tasks' metrics (shown by :mod:`benchbox.reports.structure`)
STRUCTURE_METRICS = tuple(spec.name for spec in Structure.metrics)


def tidy(sources: list[Source]) -> pd.DataFrame:
    """All metric records with ``label``, ``group`` and ``spec`` (the metric's
    :class:`~benchbox.task_contract.protocol.MetricSpec`: how it is shown) columns and sort keys (task, subset and source order)."""
    frames = [s.metrics.assign(label=s.label, reference=s.is_reference, source_rank=i)
              for i, s in enumerate(sources) if not s.metrics.empty]
    if not frames:
        return pd.DataFrame(columns=["task", "subset", "metric", "value", "ci_low", "ci_high", "n", "label",
                                     "reference", "source_rank", "group", "spec", "task_rank", "subset_rank"])
    data = pd.concat(frames, ignore_index=True)
    data["subset"] = data["subset"].astype(str)
    known = known_tasks(sources)
    data["group"] = data["task"].map({task: metadata.group for task, metadata in known.items()})
    data["spec"] = [known.spec(task, metric) for task, metric in zip(data["task"], data["metric"])]
    tasks = sorted(known, key=lambda task: (known[task].order, task))
    data["task_rank"] = data["task"].map({t: i for i, t in enumerate(tasks)})
    first_seen = {key: i for i, key in enumerate(dict.fromkeys(zip(data["task"], data["subset"])))}
    data["subset_rank"] = [first_seen[key] for key in zip(data["task"], data["subset"])]
    return data.sort_values(["task_rank", "subset_rank", "source_rank"], kind="stable").reset_index(drop=True)


def semantic_rows(data: pd.DataFrame) -> pd.DataFrame:
    """Per-subset Pearson records (STS subsets, STS-B and SICK-R test sets), not year aggregates or dev sets.
    Reference sources only contribute rows of tasks that some run has."""
    rows = data[(data["group"] == SEMANTIC) & (data["metric"] == "pearson") & ~data["subset"].isin(["all", "dev"])]
    run_tasks = set(rows.loc[~rows["reference"].astype(bool), "task"])
    return rows[rows["task"].isin(run_tasks)]


def _wide(rows: pd.DataFrame, keys: list[str], cell: Callable[[pd.Series], str]) -> tuple[list[tuple], dict]:
    """Row keys in order and ``{(key, label): cell text}``."""
    order = list(dict.fromkeys(tuple(r) for r in rows[keys].itertuples(index=False)))
    cells = {(tuple(r[k] for k in keys), r["label"]): cell(r) for _, r in rows.iterrows()}
    return order, cells


def semantic_table(data: pd.DataFrame) -> Table | None:
    rows = semantic_rows(data)
    if rows.empty:
        return None
    order, cells = _wide(rows, ["task", "subset"],
                         lambda r: fmt.with_interval(r["value"], r["ci_low"], r["ci_high"], r["spec"]))
    n_by_key = rows.drop_duplicates(["task", "subset"]).set_index(["task", "subset"])["n"]
    used = _labels(rows)
    body = [[task, subset, _count(n_by_key.get((task, subset)))] + [cells.get(((task, subset), l), fmt.MISSING) for l in used]
            for task, subset in order]
    return Table(
        caption="Pearson r × 100 per subset with 95% confidence intervals",
        header=["Task", "Subset", "n", *used], rows=body,
        numeric=[False, False, True] + [True] * len(used), row_headers=2,
    )


def aggregate_table(data: pd.DataFrame) -> Table | None:
    """STS year aggregates (subset ``all``) × 100: a row per task and model, a column per aggregate (mean,
    weighted mean and pooled Pearson and Spearman)."""
    rows = data[_aggregates(data)]
    if rows.empty:
        return None
    metrics = list(dict.fromkeys(rows["metric"]))
    body = []
    for task in rows["task"].unique():
        part = rows[rows["task"] == task]
        for label in _labels(part):
            mine = part[part["label"] == label].set_index("metric")
            body.append([task, label] + [
                fmt.with_interval(*mine.loc[m, ["value", "ci_low", "ci_high", "spec"]]) if m in mine.index else fmt.MISSING
                for m in metrics
            ])
    return Table(caption="STS year aggregates × 100 with 95% intervals (mean: unweighted over subsets; wmean: "
                         "weighted by n; pooled: one correlation over all pairs of the year)",
                 header=["Task", "Model", *metrics], rows=body, numeric=[False, False] + [True] * len(metrics),
                 row_headers=2)


def retrieval_tables(data: pd.DataFrame) -> list[Table]:
    """One table per retrieval task in the paper's Table 2 layout: a row per model, R@1/5/10 and median rank
    per direction (± half-width of the 95% interval), and rsum."""
    rows = data[_retrieval(data)]
    tables = []
    for task in rows["task"].unique():
        part = data[data["task"] == task]
        header = ["Model"] + [f"{name} {RETRIEVAL_HEADINGS[m]}"
                              for _, name in DIRECTIONS for m in RETRIEVAL_METRICS] + ["rsum"]
        body = []
        for label in _labels(part):
            mine = part[part["label"] == label].set_index(["subset", "metric"])
            row = [label]
            for direction, _ in DIRECTIONS:
                for metric in RETRIEVAL_METRICS:
                    row.append(_pm(mine, (direction, metric)))
            row.append(_pm(mine, ("all", "rsum")))
            body.append(row)
        n = _count(part.loc[part["subset"] == "i2t", "n"].max())
        tables.append(Table(caption=f"{task}: retrieval ({n} image queries), recall in %, ± half-width of the 95% interval",
                            header=header, rows=body, numeric=[False] + [True] * (len(header) - 1)))
    return tables


def _pm(frame: pd.DataFrame, key: tuple[str, str]) -> str:
    if key not in frame.index:
        return fmt.MISSING
    record = frame.loc[key]
    return fmt.plus_minus(record["value"], record["ci_low"], record["ci_high"], record["spec"])


def transfer_table(data: pd.DataFrame) -> Table | None:
    """Classification transfer tasks: a row per model, accuracy (and F1) per task, with 95% intervals."""
    rows = data[_transfer(data)]
    if rows.empty:
        return None
    columns = list(dict.fromkeys(zip(rows["task"], rows["subset"], rows["metric"])))
    subsets = {task: {s for t, s, _ in columns if t == task} for task, _, _ in columns}

    def heading(task: str, subset: str, metric: str) -> str:
        name = task.upper() if metric == "accuracy" else f"{task.upper()} {metric.upper()}"
        return name if len(subsets[task]) == 1 else f"{name} ({subset})"

    body = []
    for label in _labels(rows):
        mine = rows[rows["label"] == label].set_index(["task", "subset", "metric"])
        body.append([label] + [
            fmt.with_interval(*mine.loc[key, ["value", "ci_low", "ci_high", "spec"]]) if key in mine.index else fmt.MISSING
            for key in columns
        ])
    return Table(caption="Transfer tasks: accuracy in % (F1 for MRPC) with 95% intervals",
                 header=["Model", *[heading(*c) for c in columns]], rows=body,
                 numeric=[False] + [True] * len(columns))


def _aggregates(data: pd.DataFrame) -> pd.Series:
    return (data["group"] == SEMANTIC) & (data["subset"] == "all") & data["metric"].str.match(r"^(pearson|spearman)_")


def _retrieval(data: pd.DataFrame) -> pd.Series:
    return (data["group"] == RETRIEVAL) & data["subset"].isin([d for d, _ in DIRECTIONS]) & data["metric"].isin(RETRIEVAL_METRICS)


def _transfer(data: pd.DataFrame) -> pd.Series:
    return (data["group"] == TRANSFER) & data["metric"].isin(TRANSFER_METRICS)


def _own_groups(data: pd.DataFrame) -> pd.Series:
    """Rows of the groups without a layout of their own (a plugin's tasks): shown by :func:`group_tables`."""
    return ~data["group"].isin(LAID_OUT + (OTHER,))


def other_table(data: pd.DataFrame) -> Table | None:
    """Every record that no other table shows (Spearman per subset, MSE, dev scores, mean ranks, tasks without
    metadata, ...)."""
    shown = (
        data.index.isin(semantic_rows(data).index)
        | _aggregates(data)
        | _retrieval(data)
        | ((data["group"] == RETRIEVAL) & (data["subset"] == "all") & (data["metric"] == "rsum"))
        | _transfer(data)
        | ((data["group"] == STRUCTURE) & data["metric"].isin(STRUCTURE_METRICS))
        | _own_groups(data)
    )
    rows = data[~shown & ~data["reference"].astype(bool)]
    if rows.empty:
        return None
    return _metric_table(rows, "All other metrics (correlations × 100) with 95% intervals")


def group_tables(data: pd.DataFrame) -> list[tuple[str, Table]]:
    """``(group, table)`` for each task group without a layout of its own, in task order: every metric of its
    tasks, a column per model."""
    rows = data[_own_groups(data)]
    return [(group, _metric_table(rows[rows["group"] == group], f"{group}: every metric with 95% intervals"))
            for group in dict.fromkeys(rows["group"])]


def _metric_table(rows: pd.DataFrame, caption: str) -> Table:
    """A row per task × subset × metric, a column per model."""
    order, cells = _wide(rows, ["task", "subset", "metric"],
                         lambda r: fmt.with_interval(r["value"], r["ci_low"], r["ci_high"], r["spec"]))
    used = _labels(rows)
    body = [[*key] + [cells.get((key, l), fmt.MISSING) for l in used] for key in order]
    return Table(caption=caption, header=["Task", "Subset", "Metric", *used], rows=body,
                 numeric=[False, False, False] + [True] * len(used), row_headers=3)


def _labels(rows: pd.DataFrame) -> list[str]:
    """The labels present in ``rows``, in source order."""
    return list(rows.sort_values("source_rank", kind="stable")["label"].unique())


def _count(n: object) -> str:
    return fmt.MISSING if fmt.is_missing(n) else str(int(n))

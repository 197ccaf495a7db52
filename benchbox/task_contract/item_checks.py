"""A task's per-item rows checked when the run is written (``eval``), not first read by ``compare``.

``compare`` pairs two runs' items on the task's ``item_keys``, requires them to agree on ``gold``, and tests each
metric on the columns its kind of paired test reads (:data:`benchbox.task_contract.paired_tests.KINDS`). Items that break those assumptions
used to be scored with exit 0 or to fail only at compare time: a subset with constant gold printed an undefined
Pearson as ``—`` and was pooled into the aggregates, NaN gold surfaced as "different gold scores for the same
items", a ``ranks`` test without ``direction`` as a ``KeyError``. :func:`check_items` refuses a task's items
unless:

- every key column, and every column the test of a declared metric reads, is present;
- no key occurs twice (an item scored twice counts twice in every number);
- the key columns hold a value on every row; on the rows of each tested kind, the columns it reads and ``gold``
  (where those rows have it) hold no missing or non-finite value;
- within a subset, no column a test needs to vary (a correlation's gold and score) is constant.

A task may return the items of several kinds in one table, as a plugin written for the previous release may
(``tests/plugin_legacy``: pair rows with ``gold`` and ``score`` beside retrieval rows with ``direction`` and
``rank``, each lacking the other's columns; before, its retrieval rows were refused for having no gold). A row is of a kind when it holds any of the kind's columns other than the item keys (a kind that reads
no declared columns, ``bootstrap``, has the rows that hold no other tested kind's); a row of no tested kind is
checked against every column.

Each refusal is one line naming the task, the subset (with its data files, where their names show it) and the
item. Empty items are not checked: a task may return none, and compare then approximates from the metric rows.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.errors import BenchboxError
from benchbox.task_contract.paired_tests import KINDS
from benchbox.task_contract.protocol import MetricSpec, Task, TaskResult

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

#: the column of the gold score or label, which compare requires two runs to agree on
GOLD = "gold"


def check_items(task: Task, result: TaskResult) -> None:
    """A :class:`BenchboxError` naming the task, subset and item when ``result.items`` break a rule of the
    module docstring."""
    if result.items.empty:
        return
    tested = [spec for spec in task.metrics if spec.kind is not None]
    needed = dict.fromkeys(task.item_keys, "an item key")
    for spec in tested:
        for column in KINDS[spec.kind].columns:
            needed.setdefault(column, f"read by the {spec.kind!r} test of metric {spec.name}")
    _present(task, result, needed)
    _unique(task, result)
    columns = list(dict.fromkeys([*([GOLD] if GOLD in result.items.columns else []), *needed]))
    _finite_values(task, result, columns, _rows_needing(task, result.items, tested, columns))
    _varying(task, result, tested)


def _rows_needing(task: Task, items: pd.DataFrame, tested: list[MetricSpec],
                  columns: list[str]) -> dict[str, np.ndarray]:
    """Each of ``columns`` → the rows that must hold it (module docstring): a key every row; a kind's columns,
    and ``gold`` where any of the kind's rows has it, the rows of that kind; every column the rows of no kind."""
    n, keys = len(items), set(task.item_keys)
    own = {spec.kind: [c for c in KINDS[spec.kind].columns if c not in keys] for spec in tested}
    rows = {kind: items[held].notna().any(axis=1).to_numpy() for kind, held in own.items() if held}
    of_some = np.logical_or.reduce([*rows.values(), np.zeros(n, bool)])
    rows.update({kind: ~of_some for kind, held in own.items() if not held})
    of_none = ~np.logical_or.reduce([*rows.values(), np.zeros(n, bool)])
    needing = {column: np.ones(n, bool) if column in keys else of_none for column in columns}
    for kind, mask in rows.items():
        has_gold = GOLD in items.columns and items.loc[mask, GOLD].notna().any()
        for column in [*own[kind], *([GOLD] if has_gold else [])]:
            needing[column] = needing[column] | mask
    return needing


def _present(task: Task, result: TaskResult, needed: dict[str, str]) -> None:
    """Every needed column (column → why it is needed) is in the items."""
    missing = [column for column in needed if column not in result.items.columns]
    if missing:
        raise BenchboxError(f"task {task.name}: its per-item rows lack the column(s) {', '.join(missing)} "
                            f"({needed[missing[0]]}; columns given: {', '.join(map(str, result.items.columns))}): "
                            "the task's evaluate must return them")


def _unique(task: Task, result: TaskResult) -> None:
    """No two rows share the task's item key."""
    keys = list(task.item_keys)
    repeated = result.items.duplicated(keys, keep=False)
    if repeated.any():
        row = result.items[repeated].iloc[0]
        raise BenchboxError(f"task {task.name}: {int(repeated.sum())} per-item rows share a key, e.g. "
                            f"{_item(row, keys)}{_files(result, row)}: each item is scored once; remove the "
                            "repeated item from the data (or give it its own key)")


def _finite_values(task: Task, result: TaskResult, columns: list[str], rows: dict[str, np.ndarray]) -> None:
    """No missing value in ``columns``, and no NaN or infinity in those that are numeric, on the rows that need
    each (``rows``: column → mask)."""
    for column in columns:
        bad = ~_finite(result.items[column]) & rows[column]
        if bad.any():
            row = result.items[bad].iloc[0]
            raise BenchboxError(f"task {task.name}: {int(bad.sum())} items have no finite {column}, e.g. "
                                f"{_item(row, list(task.item_keys))}{_files(result, row)} has {column} "
                                f"{row[column]}: fix the data file or the task's evaluate")


def _varying(task: Task, result: TaskResult, tested: list[MetricSpec]) -> None:
    """Within each subset, no column a metric's test needs to vary (:attr:`benchbox.task_contract.protocol.PairedTest.varying`) is constant."""
    varying: dict[str, MetricSpec] = {}
    for spec in tested:
        for column in KINDS[spec.kind].varying:
            varying.setdefault(column, spec)
    items = result.items
    for subset, part in items.groupby("subset", sort=False) if "subset" in items.columns else [(None, items)]:
        for column, spec in varying.items():
            if part[column].nunique() == 1:
                where = "its items" if subset is None else f"subset {subset}"
                fix = "fix the data file" if column == GOLD else "check the encoder and the task's evaluate"
                raise BenchboxError(f"task {task.name}, {where}{_files(result, part.iloc[0])}: all {len(part)} "
                                    f"items have {column} {part[column].iloc[0]}, and the {spec.kind!r} test of "
                                    f"{spec.name} is undefined when {column} is constant: {fix}")


def _finite(column: pd.Series) -> np.ndarray:
    """Per row: a value that is present and, in a numeric column, finite."""
    if pd.api.types.is_numeric_dtype(column):
        return np.isfinite(column.to_numpy(float, na_value=np.nan))
    return column.notna().to_numpy()


def _item(row: pd.Series, keys: list[str]) -> str:
    """The item's key, e.g. ``(subset=test, item=7)``."""
    return "(" + ", ".join(f"{key}={row[key]}" for key in keys) + ")"


def _files(result: TaskResult, row: pd.Series) -> str:
    """`` (data file F, …)``: the task's data files whose names hold the row's subset as a word (``MSRpar`` in
    ``STS.gs.MSRpar.txt``, ``test`` in ``SICK_test_annotated.txt``); empty when none does."""
    subset = str(row.get("subset", ""))
    word = re.compile(rf"(^|[._-]){re.escape(subset)}([._-]|$)")
    found = sorted({name for path in result.data_checksums
                    if subset and word.search(name := PurePosixPath(path).name)})
    return f" (data file {', '.join(found)})" if found else ""

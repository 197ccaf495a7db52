"""Published numbers from a user's file: ``--comparators FILE.toml`` (``leaderboard``, ``compare``) and the key
``comparators = "FILE.toml"`` of a study's ``[study]`` table. Each ``[[comparator]]`` entry is one published
number::

    [[comparator]]
    name = "smith2024/glove-sif"          # the comparator's name; entries with one name are one model
    citation = "Smith et al. (2024), Table 2"
    task = "sts12"                         # a task benchbox knows (installed)
    metric = "pearson_mean"                # one of the task's declared metrics
    value = 0.561                          # in benchbox's units: r as r, percentages in %
    n = 3108                               # items the value is computed on
    subset = "all"                         # optional: default "all" for an aggregate (``*_mean``), else "test"
    ci = [0.52, 0.60]                      # optional: its published 95% interval

They become :class:`benchbox.data.comparators.Comparator` entries (the type of the built-in ``paper:`` ones), named
``file:<name>``: numbers without per-item scores, so unpaired rows in compare tables (approximate tests where
one exists) and leaderboards (no rank, no claim). Every problem is one line naming the file, the entry and
the fix. The numbers are checked like data (:mod:`benchbox.data.published_checks`): a correlation in [−1, 1] (× 100
refused with the fix) with n ≥ 4, a percentage in [0, 100]; the file is read only if it is a regular file under
the size limit.
"""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd

from benchbox.data.comparators import Comparator, metric_rows
from benchbox.data.published_checks import check_correlation, check_fisher_n, check_percentage, read_small_text
from benchbox.errors import BenchboxError
from benchbox.storage.runs import METRIC_COLUMNS

PREFIX = "file:"
REQUIRED = ("name", "citation", "task", "metric", "value", "n")
OPTIONAL = ("subset", "ci")
#: the aggregates whose subset is ``all``
AGGREGATE_SUFFIXES = ("_mean", "_wmean", "_pooled")


def _number(entry: dict[str, Any], key: str, where: str) -> float:
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BenchboxError(f"{where}: {key} = {value!r} is not a finite number; write it as a TOML number")
    return float(value)


def _row(entry: Any, where: str) -> dict[str, Any]:
    """One entry checked (module docstring) as a metric row with its name and citation."""
    from benchbox.task_contract.protocol import task_class

    if not isinstance(entry, dict):
        raise BenchboxError(f"{where} is not a table: write [[comparator]] entries with keys {', '.join(REQUIRED)}")
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        raise BenchboxError(f"{where} lacks {', '.join(missing)}: every entry needs {', '.join(REQUIRED)}")
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise BenchboxError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are "
                            f"{', '.join(REQUIRED + OPTIONAL)}")
    task, metric = str(entry["task"]), str(entry["metric"])
    installed = task_class(task)
    if installed is None:
        raise BenchboxError(f"{where}: unknown task {task!r}; name an installed task (`benchbox list tasks`)")
    declared = {m.name: m for m in installed.metrics}
    if metric not in declared:
        raise BenchboxError(f"{where}: task {task} has no metric {metric!r}; its metrics: {', '.join(declared)}")
    value, n = _number(entry, "value", where), _number(entry, "n", where)
    if n < 1 or n != int(n):
        raise BenchboxError(f"{where}: n = {entry['n']!r} is not a count of items; give a whole number ≥ 1")
    _check_range(declared[metric], entry, where)
    low = high = math.nan
    if "ci" in entry:
        ci = entry["ci"]
        if not (isinstance(ci, list) and len(ci) == 2):
            raise BenchboxError(f"{where}: ci = {ci!r} is not [low, high]")
        low, high = (_number({"ci": c}, "ci", where) for c in ci)
    subset = entry.get("subset", "all" if metric.endswith(AGGREGATE_SUFFIXES) else "test")
    return {"model": str(entry["name"]), "citation": str(entry["citation"]), "task": task, "subset": str(subset),
            "metric": metric, "value": value, "ci_low": low, "ci_high": high, "n": int(n)}


def _check_range(spec: Any, entry: dict[str, Any], where: str) -> None:
    """The value (and interval) within the metric's range: a correlation (unit r) in [−1, 1] with n ≥ 4, a
    percentage in [0, 100]."""
    values = [("value", entry["value"])] + [("ci", c) for c in entry.get("ci", [])]
    if spec.unit == "r":
        why = next((w for w in (check_correlation(v, f"{k} = {v!r}") for k, v in values) if w), None) \
            or check_fisher_n(entry["n"], f"{spec.name}")
    elif spec.unit == "%":
        why = next((w for w in (check_percentage(v, f"{k} = {v!r}") for k, v in values) if w), None)
    else:
        why = None
    if why is not None:
        raise BenchboxError(f"{where}: {why}")


def read_comparators(path: str | os.PathLike, named_by: str = "--comparators") -> dict[str, Comparator]:
    """The comparators of a file (module docstring), ``file:<name>`` → :class:`Comparator`, in file order;
    ``named_by``: what named the file, as errors say it."""
    path = Path(path)
    try:
        text = read_small_text(path)
    except BenchboxError as exc:
        if not path.exists():
            raise BenchboxError(f"{named_by} {path}: no such file") from None
        raise BenchboxError(f"{named_by} {exc}") from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BenchboxError(f"{named_by} {path}: not a readable TOML file ({exc})") from None
    where = f"{named_by} {path}"
    entries = spec.get("comparator")
    extra = sorted(set(spec) - {"comparator"})
    if not isinstance(entries, list) or not entries or extra:
        raise BenchboxError(f"{where}: write one [[comparator]] table per published number (found "
                            f"{', '.join(sorted(spec)) or 'nothing'})")
    rows = pd.DataFrame([_row(entry, f"{where}, comparator {i}") for i, entry in enumerate(entries, 1)])
    comparators = {}
    for name, group in rows.groupby("model", sort=False):
        citations = list(dict.fromkeys(group["citation"]))
        if len(citations) > 1:
            raise BenchboxError(f"{where}: comparator {name} has {len(citations)} citations; give each of its "
                                "entries the same citation, or name them apart")
        repeated = group.duplicated(["task", "subset", "metric"])
        if repeated.any():
            first = group[repeated].iloc[0]
            raise BenchboxError(f"{where}: comparator {name} gives {first['task']}/{first['subset']} "
                                f"{first['metric']} twice; keep one")
        comparators[PREFIX + str(name)] = Comparator(str(path), str(name), citations[0], metric_rows,
                                                     frame=group[["model", *METRIC_COLUMNS]].reset_index(drop=True))
    return comparators

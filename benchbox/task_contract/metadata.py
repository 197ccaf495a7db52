"""What benchbox knows of a task by its name, wherever the task comes from — one answer for compare, the reports,
the terminal tables, ``load_runs`` and the leaderboard:

- the installed task (the registry): its class's metadata (:class:`benchbox.task_contract.protocol.Task`);
- else what a run recorded of it (:meth:`benchbox.task_contract.protocol.Task.recorded_metadata`), so that runs of a task that is
  no longer installed still compare, report and display as they did;
- else, for runs written before task metadata was recorded, the conventions of that time read off the run's
  per-item columns (:func:`conventions`);
- else nothing: no metric is declared (each is shown with the default display and never tested), group
  ``other``, after every other task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.task_contract.protocol import MetricSpec, protocol_switches, task_class

#: the group of a task nothing is known of, and its position (after every other)
OTHER, LAST = "other", 1_000_000
#: the item keys of pairs and classification items, the default of a task that declares none
PAIR_KEYS = ("subset", "item")
#: the protocol keys that runs of an uninstalled task without metadata are compared on (what tasks recorded then)
CONVENTIONAL_SWITCHES = ("text", "labels", "split", "scheme", "medr", "ties", "features", "dataset", "folds")


@dataclass(frozen=True)
class TaskMetadata:
    """A task as benchbox knows it (module docstring): its metric specs, the columns that pair two runs' items,
    the protocol keys two runs must agree on, its report group and position and its headline metric."""

    name: str
    metrics: dict[str, MetricSpec] = field(default_factory=dict)
    item_keys: tuple[str, ...] = PAIR_KEYS
    switches: tuple[str, ...] = ()
    group: str = OTHER
    order: int = LAST
    main_score: str | None = None

    def spec(self, metric: str) -> MetricSpec:
        """The spec of ``metric``; a metric the task does not declare gets the default (shown with four
        significant digits, never tested)."""
        return self.metrics.get(metric) or MetricSpec(metric)


def task_metadata(name: str, recorded: Mapping[str, Any] | None = None,
                  items: Callable[[], pd.DataFrame | None] | None = None) -> TaskMetadata:
    """What is known of task ``name`` (module docstring): ``recorded`` is what a run recorded of it (its
    manifest's task ``metadata``); ``items()`` gives a run's per-item rows of it, read only when nothing else is
    known (None or no rows: published numbers, Pearson rows only)."""
    installed = task_class(name)
    if installed is not None:
        return TaskMetadata(name, {m.name: m for m in installed.metrics}, tuple(installed.item_keys),
                            tuple(protocol_switches(installed)), installed.group, installed.order, installed.main_score)
    if recorded and isinstance(recorded.get("metrics"), list):
        specs = [MetricSpec.from_plain(m) for m in recorded["metrics"] if isinstance(m, dict) and "name" in m]
        order = recorded.get("order")
        return TaskMetadata(name, {m.name: m for m in specs}, tuple(recorded.get("item_keys") or PAIR_KEYS),
                            tuple(recorded.get("protocol_switches") or ()),
                            recorded["group"] if isinstance(recorded.get("group"), str) else OTHER,
                            int(order) if isinstance(order, (int, float)) else LAST,
                            recorded.get("main_score") if isinstance(recorded.get("main_score"), str) else None)
    if items is not None:
        found = items()
        return conventions(name, pd.DataFrame() if found is None else found)
    return TaskMetadata(name)


def _mse(rows: pd.DataFrame) -> float:
    return float(np.mean((rows["score"].to_numpy(float) - rows["gold"].to_numpy(float)) ** 2))


def conventions(name: str, items: pd.DataFrame) -> TaskMetadata:
    """A task that is not installed, from a run that recorded no metadata (written before task metadata
    existed): its metrics read off the per-item columns as benchbox wrote them then — ``direction``/``query``/
    ``rank``: retrieval ranks; ``gold``/``score``/``item``: correlations (and ``mse``); ``correct``/``item``:
    accuracy; ``metric``/``value``/``item``: means of per-item values. No items (published numbers): Pearson rows
    only (compared approximately)."""
    from benchbox.stats import AGGREGATES

    columns = set(items.columns)
    keys: tuple[str, ...] = PAIR_KEYS
    correlation = {"kind": "correlation", "unit": "r", "scale": 100, "decimals": 1}
    if items.empty:
        specs = [MetricSpec("pearson", summary=True, **correlation)]
    elif {"direction", "query", "rank"} <= columns:
        keys = ("subset", "direction", "query")
        specs = [MetricSpec(m, "ranks", unit="%", decimals=1, summary=m == "r10") for m in ("r1", "r5", "r10")]
        specs += [MetricSpec(m, "ranks", higher_is_better=False, unit="rank", decimals=1) for m in ("medr", "meanr")]
    elif {"gold", "score", "item"} <= columns:
        specs = [MetricSpec(m, summary=m == "pearson", **correlation) for m in ("pearson", "spearman")]
        specs += [MetricSpec(f"{m}_{a}", **correlation) for m in ("pearson", "spearman") for a in AGGREGATES]
        specs.append(MetricSpec("mse", "bootstrap", higher_is_better=False, unit="mse", statistic=_mse))
    elif {"correct", "item"} <= columns:
        specs = [MetricSpec("accuracy", "classification", unit="%", decimals=1, summary=True)]
    elif {"metric", "value", "item"} <= columns:
        keys = ("subset", "metric", "item")
        specs = [MetricSpec(m, "mean", higher_is_better=m != "e_inter") for m in dict.fromkeys(items["metric"])]
    else:
        raise BenchboxError(f"per-item scores of {name} with columns {sorted(columns)} match no known convention")
    return TaskMetadata(name, {m.name: m for m in specs}, keys, CONVENTIONAL_SWITCHES)


class KnownTasks(dict[str, TaskMetadata]):
    """Task name → what is known of it, for everything shown of a set of runs; :meth:`spec` answers for a task not
    among them too (the installed task, else the default spec)."""

    def spec(self, task: str, metric: str) -> MetricSpec:
        """The spec of ``metric`` of ``task``: how it is tested and shown."""
        known = self.get(task)
        return (known if known is not None else task_metadata(task)).spec(metric)

"""An mteb results folder as published comparators, ``mteb:PATH``: one model per ``MODEL/REVISION`` folder, its
MTEB task results (``TASK.json``, mteb's ``TaskResult`` as ``to_disk`` writes it) read into benchbox's metric rows
for the tasks with a benchbox counterpart (:data:`benchbox.data.mteb_tasks.MTEB_TASKS`). Scores only: MTEB
publishes no per-item scores, so like ``paper:`` numbers they join comparisons unpaired (approximate tests where
they exist), labelled ``mteb:MODEL``.

``PATH`` is a results folder (``PATH/MODEL/REVISION/TASK.json``: a ``ResultCache``'s ``results/`` folder, the
embeddings-benchmark/results repository's, ``benchbox export mteb --out``'s) or an mteb cache folder holding
one (``PATH/results/...``). A model's name is its ``model_meta.json`` ``name``, else its folder's (``ORG__NAME`` →
``ORG/NAME``), as mteb's loader reads it. Each correlation gets the Fisher-z 95% interval benchbox gives its own
(Spearman's with the 1.06 variance factor) on the split's pair count.

A task without a benchbox counterpart, a result on another dataset revision or without the split's cosine scores
is skipped with one line; a missing folder or a file that is not an mteb task result is an error, one line each.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchbox.data.mteb_tasks import BY_NAME, BY_TASK, HF_SUBSET, MtebTask
from benchbox.errors import BenchboxError
from benchbox.storage.runs import METRIC_COLUMNS

PREFIX = "mteb:"
MODEL_META = "model_meta.json"


def is_mteb(spec: str) -> bool:
    return spec.startswith(PREFIX)


@dataclass(frozen=True)
class MtebModel:
    """One model's results in an mteb results folder, as benchbox metric rows."""

    name: str
    revision: str
    folder: Path
    metrics: pd.DataFrame
    #: the mteb versions that wrote its files
    versions: tuple[str, ...]

    @property
    def citation(self) -> str:
        versions = ", ".join(self.versions) or "unknown"
        return f"mteb results {self.folder} (model {self.name}, revision {self.revision}; mteb {versions})"


def results_folder(spec: str) -> Path:
    """The results folder ``mteb:PATH`` names (module docstring); one line when there is none."""
    path = Path(spec.removeprefix(PREFIX)).expanduser()
    if not path.is_dir():
        raise BenchboxError(f"{spec}: no such folder; give an mteb results folder (MODEL/REVISION/TASK.json, e.g. "
                            "~/.cache/mteb/results or `benchbox export mteb --out`'s)")
    return path / "results" if (path / "results").is_dir() else path


def _revision_folders(root: Path) -> list[Path]:
    return sorted(p for model in root.iterdir() if model.is_dir() and not model.name.startswith(".")
                  for p in model.iterdir() if p.is_dir() and not p.name.startswith(".") and _task_files(p))


def _task_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != MODEL_META and not p.name.startswith("."))


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BenchboxError(f"{path} is not valid JSON ({exc}); restore it or remove it from the results "
                            "folder") from None


def _model_name(folder: Path) -> str:
    meta = folder / MODEL_META
    if meta.is_file():
        found = read_json(meta)
        if isinstance(found, dict) and isinstance(found.get("name"), str):
            return found["name"]
    return folder.parent.name.replace("__", "/")


def _entry(path: Path, result: dict[str, Any], row: MtebTask) -> dict[str, Any] | str:
    """The score entry of ``row``'s split (hf_subset ``default``), or why it is skipped."""
    if result.get("dataset_revision") != row.revision:
        return f"dataset revision {result.get('dataset_revision')}, the correspondence's is {row.revision}"
    entries = result["scores"].get(row.split)
    if not isinstance(entries, list):
        return f"no {row.split} split"
    found = [e for e in entries if isinstance(e, dict) and e.get("hf_subset") == HF_SUBSET]
    if not found:
        return f"no {HF_SUBSET!r} subset in its {row.split} split"
    for key, _ in row.metrics:
        value = found[0].get(key)
        if not isinstance(value, (int, float)) or not -1 <= value <= 1 or math.isnan(value):
            return f"its {row.split} {key} is {value!r}, not a correlation in [-1, 1]"
    return found[0]


def metric_rows(row: MtebTask, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """``row``'s correlations in ``entry`` as benchbox metric rows with Fisher-z 95% intervals."""
    from benchbox.stats import fisher_ci

    rows = []
    for key, metric in row.metrics:
        value = float(entry[key])
        low, high = fisher_ci(value, row.n, spearman="spearman" in metric)
        rows.append({"task": row.task, "subset": row.subset, "metric": metric, "value": value,
                     "ci_low": float(low), "ci_high": float(high), "n": row.n})
    return rows


def read_model(folder: Path, log: Callable[[str], None]) -> MtebModel:
    """The results of one ``MODEL/REVISION`` folder; skipped tasks logged."""
    name, rows, versions = _model_name(folder), [], []
    for path in _task_files(folder):
        result = read_json(path)
        if not isinstance(result, dict) or not isinstance(result.get("task_name"), str) \
                or not isinstance(result.get("scores"), dict):
            raise BenchboxError(f"{path} is not an mteb task result (mteb >= 1.11: an object with task_name and "
                                "scores); load and save it again with mteb (TaskResult.from_disk, to_disk)")
        task = BY_NAME.get(result["task_name"])
        if task is None or not task.corresponds:
            why = task.departure if task is not None else "no benchbox counterpart"
            log(f"mteb: {name}: {result['task_name']} skipped: {why}")
            continue
        entry = _entry(path, result, task)
        if isinstance(entry, str):
            log(f"mteb: {name}: {path.name} skipped: {entry}")
            continue
        rows += metric_rows(task, entry)
        if isinstance(result.get("mteb_version"), str):
            versions.append(result["mteb_version"])
    return MtebModel(name, folder.name, folder, pd.DataFrame(rows, columns=METRIC_COLUMNS),
                     tuple(dict.fromkeys(versions)))


def read_results(spec: str, log: Callable[[str], None] = lambda message: None) -> list[MtebModel]:
    """The models of the results folder ``mteb:PATH`` with a result of a task with a benchbox counterpart, in
    folder order; the rest skipped, each with a line to ``log``."""
    root = results_folder(spec)
    folders = _revision_folders(root)
    if not folders:
        raise BenchboxError(f"{spec}: {root} holds no mteb results (MODEL/REVISION/TASK.json)")
    models = []
    for folder in folders:
        model = read_model(folder, log)
        if model.metrics.empty:
            log(f"mteb: {model.name}: no task with a benchbox counterpart in {os.fspath(folder)}; skipped")
        else:
            models.append(model)
    if not models:
        names = ", ".join(row.name for row in BY_TASK.values())
        raise BenchboxError(f"{spec}: no result of a task with a benchbox counterpart ({names}); nothing to compare")
    return models

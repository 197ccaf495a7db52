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

The results repository is read as it is, with mteb's own rules (mteb 2.x, ``mteb/results/task_result.py`` and
``benchmark_results.py``):

- a file in the format mteb wrote before 1.11 (``mteb_dataset_name``, ``{split: {cos_sim: {spearman: ...}}}``,
  no ``mteb_version`` or one below 1.11) is converted as ``TaskResult._convert_from_before_v1_11_0`` converts it:
  a split without per-subset entries is subset ``default``, ``cos_sim``'s scores become ``cosine_*``;
- every revision folder of a model is read, and for each task the result mteb's leaderboard keeps is chosen
  (``BenchmarkResults.join_revisions``): a file with a parseable ``mteb_version`` first, then one in a hashed
  revision folder (not ``external`` or ``no_revision_available``), then the newest ``mteb_version``, then the
  first folder by name. mteb ranks the model's main revision (from its model registry) above all of these; benchbox
  has no registry, so that step is left out. The row's revision names the folders its tasks came from;
- a file that cannot serve a task (a task without a benchbox counterpart, another dataset revision, no cosine
  scores, a number that is not a correlation, a file that is not an mteb result or not JSON) is skipped and counted:
  ``log`` receives one summary line per reason, not one line per file. A model left with nothing is skipped too.
  A file with the main score (``cosine_spearman``) but no ``cosine_pearson`` (some publish the main score only)
  gives its Spearman row alone.

Only a missing or empty folder, or one whose results serve no benchbox task at all, is an error (one line).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchbox.data.mteb_tasks import BY_NAME, BY_TASK, HF_SUBSET, MtebTask
from benchbox.data.published_checks import check_correlation, read_small_text
from benchbox.errors import BenchboxError
from benchbox.storage.runs import METRIC_COLUMNS

PREFIX = "mteb:"
MODEL_META = "model_meta.json"


def is_mteb(spec: str) -> bool:
    return spec.startswith(PREFIX)


#: the revision folders mteb treats as "no revision" (``join_revisions``)
NO_REVISION = ("external", "no_revision_available")
#: mteb's before-1.11 score groups and the prefix they became (``_convert_from_before_v1_11_0``)
OLD_SCORE_GROUPS = {"cos_sim": "cosine", "manhattan": "manhattan", "euclidean": "euclidean", "dot": "dot",
                    "max": "max", "similarity": "similarity"}
#: the task names benchbox reads, case-insensitively as mteb's converter looks them up
_BY_LOWER = {name.lower(): row for name, row in BY_NAME.items()}


@dataclass(frozen=True)
class MtebModel:
    """One model's results in an mteb results folder, as benchbox metric rows (one result per task, chosen among
    its revision folders by the module docstring's rule)."""

    name: str
    #: the revision folders its tasks came from, in folder order
    revisions: tuple[str, ...]
    folder: Path
    metrics: pd.DataFrame
    #: the mteb versions that wrote its files
    versions: tuple[str, ...]

    @property
    def revision(self) -> str:
        return "+".join(self.revisions)

    @property
    def citation(self) -> str:
        versions = ", ".join(self.versions) or "unknown"
        return f"mteb results {self.folder} (model {self.name}, revision {self.revision}; mteb {versions})"


@dataclass(frozen=True)
class Found:
    """One task's result in one revision folder, usable: its score entry, version and whether it was converted."""

    task: MtebTask
    revision: str
    entry: dict[str, Any]
    version: str | None
    converted: bool

    def priority(self) -> tuple:
        """mteb's ``join_revisions`` order (module docstring), highest first when sorted in reverse."""
        parsed = _version(self.version)
        return (parsed is not None, self.revision not in NO_REVISION, parsed or ())


def _version(text: str | None) -> tuple[int, ...] | None:
    """``1.2.0`` → (1, 2, 0); a version with a suffix (``1.1.2.dev0``) by its numeric release; None if none."""
    if not isinstance(text, str):
        return None
    parts = []
    for part in text.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts) or None


def results_folder(spec: str) -> Path:
    """The results folder ``mteb:PATH`` names (module docstring); one line when there is none."""
    path = Path(spec.removeprefix(PREFIX)).expanduser()
    if not path.is_dir():
        raise BenchboxError(f"{spec}: no such folder; give an mteb results folder (MODEL/REVISION/TASK.json, e.g. "
                            "~/.cache/mteb/results or `benchbox export mteb --out`'s)")
    return path / "results" if (path / "results").is_dir() else path


def _model_folders(root: Path) -> dict[Path, list[Path]]:
    """Model folder → its revision folders holding JSON files, both in name order."""
    found: dict[Path, list[Path]] = {}
    for model in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        revisions = sorted(p for p in model.iterdir() if p.is_dir() and not p.name.startswith(".")
                           and any(_task_files(p)))
        if revisions:
            found[model] = revisions
    return found


def _task_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != MODEL_META and not p.name.startswith("."))


def read_json(path: Path) -> Any:
    """A JSON file of a results folder (size-capped, regular files only); one line when it is not JSON."""
    try:
        return json.loads(read_small_text(path))
    except ValueError as exc:
        raise BenchboxError(f"{path} is not valid JSON ({exc}); restore it or remove it from the results "
                            "folder") from None


def _model_name(model: Path, revisions: list[Path]) -> str:
    """The ``name`` of the first ``model_meta.json`` among the revision folders, else the folder's name."""
    for folder in revisions:
        meta = folder / MODEL_META
        if meta.is_file():
            try:
                found = read_json(meta)
            except BenchboxError:
                continue
            if isinstance(found, dict) and isinstance(found.get("name"), str):
                return found["name"]
    return model.name.replace("__", "/")


def convert_before_1_11(data: dict[str, Any]) -> dict[str, Any]:
    """A result in mteb's before-1.11 format as the current format's ``task_name``/``scores`` (module docstring;
    the scores only, as ``TaskResult._convert_from_before_v1_11_0`` rewrites them)."""
    splits = {k: v for k, v in data.items()
              if k not in ("dataset_revision", "mteb_dataset_name", "mteb_version", "evaluation_phases")
              and isinstance(v, dict)}
    has_subsets = any(isinstance(v, dict) for split in splits.values() for k, v in split.items()
                      if k not in {"v_measures", *OLD_SCORE_GROUPS})
    scores = {}
    for split, entry in splits.items():
        subsets = entry if has_subsets else {HF_SUBSET: entry}
        scores[split] = []
        for subset, values in subsets.items():
            if not isinstance(values, dict):
                continue
            flat = {"hf_subset": subset}
            for key, value in values.items():
                if key in OLD_SCORE_GROUPS and isinstance(value, dict):
                    flat.update({f"{OLD_SCORE_GROUPS[key]}_{k}": v for k, v in value.items()})
                elif key != "evaluation_time":
                    flat[key] = value
            scores[split].append(flat)
    return {"task_name": data["mteb_dataset_name"], "dataset_revision": data.get("dataset_revision"),
            "mteb_version": data.get("mteb_version"), "scores": scores}


def _is_before_1_11(data: dict[str, Any]) -> bool:
    """mteb's test: ``mteb_dataset_name`` and a version below 1.11 or none (mteb assumes old when it is absent)."""
    version = _version(data.get("mteb_version"))
    return isinstance(data.get("mteb_dataset_name"), str) and (version is None or version < (1, 11))


def _entry(result: dict[str, Any], row: MtebTask) -> dict[str, Any] | str:
    """The score entry of ``row``'s split (hf_subset ``default``), or why it is skipped (without the file: the
    reasons are counted)."""
    if result.get("dataset_revision") != row.revision:
        return f"dataset revision {str(result.get('dataset_revision'))[:40]!r}, not the correspondence's {row.revision[:8]}"
    entries = result["scores"].get(row.split)
    if not isinstance(entries, list):
        return f"no {row.split} split"
    found = [e for e in entries if isinstance(e, dict) and e.get("hf_subset") == HF_SUBSET]
    if not found:
        return f"no {HF_SUBSET!r} subset in its {row.split} split"
    (main, _), *others = row.metrics
    entry = {key: found[0][key] for key, _ in row.metrics if found[0].get(key) is not None}
    for key, _ in row.metrics:
        why = check_correlation(found[0].get(key), f"its {row.split} {key}") if key in entry or key == main else None
        if why is not None:
            return why
    return entry


def metric_rows(row: MtebTask, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """``row``'s correlations in ``entry`` (those it holds) as benchbox metric rows with Fisher-z 95% intervals."""
    from benchbox.stats import fisher_ci

    rows = []
    for key, metric in row.metrics:
        if key not in entry:  # a file with the main score only (module docstring)
            continue
        value = float(entry[key])
        low, high = fisher_ci(value, row.n, spearman="spearman" in metric)
        rows.append({"task": row.task, "subset": row.subset, "metric": metric, "value": value,
                     "ci_low": float(low), "ci_high": float(high), "n": row.n})
    return rows


def read_result(path: Path) -> Found | str:
    """The usable result of one task file, or why it is skipped."""
    row = _BY_LOWER.get(path.stem.lower())
    if row is None:
        return "no benchbox counterpart"
    try:
        data = read_json(path)
    except BenchboxError as exc:
        return str(exc)
    if not isinstance(data, dict):
        return "not an mteb task result"
    converted = not (isinstance(data.get("task_name"), str) and isinstance(data.get("scores"), dict))
    if converted:
        if not _is_before_1_11(data):
            return "not an mteb task result (neither mteb >= 1.11's task_name and scores nor the format before 1.11)"
        data = convert_before_1_11(data)
    row = _BY_LOWER.get(str(data["task_name"]).lower())
    if row is None or not row.corresponds:
        return row.departure if row is not None else "no benchbox counterpart"
    entry = _entry(data, row)
    if isinstance(entry, str):
        return entry
    version = data.get("mteb_version")
    return Found(row, path.parent.name, entry, version if isinstance(version, str) else None, converted)


class Tally:
    """The files skipped, counted by reason, and the files converted from the format before 1.11."""

    def __init__(self) -> None:
        self.skipped: Counter[str] = Counter()
        self.example: dict[str, str] = {}
        self.converted = 0
        self.models_skipped = 0

    def skip(self, why: str, task: str, model: str) -> None:
        key = f"{task}: {why}" if not why.startswith("/") else why
        self.skipped[key] += 1
        self.example.setdefault(key, model)

    def lines(self, models: int) -> list[str]:
        found = [f"mteb: {models} model(s) read ({self.converted} file(s) converted from mteb's format before "
                 f"1.11); {self.models_skipped} model(s) skipped with no usable result; "
                 f"{sum(self.skipped.values())} file(s) skipped:"]
        return found + [f"mteb:   {count} × {why} (e.g. {self.example[why]})"
                        for why, count in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))]


def read_model(model: Path, revisions: list[Path], tally: Tally) -> MtebModel | None:
    """One model's results across its revision folders, one per task (module docstring); None if it has none."""
    name = _model_name(model, revisions)
    chosen: dict[str, Found] = {}
    for folder in revisions:
        for path in _task_files(folder):
            found = read_result(path)
            if isinstance(found, str):
                tally.skip(found, path.stem, name)
            elif found.task.name not in chosen or found.priority() > chosen[found.task.name].priority():
                chosen[found.task.name] = found
    if not chosen:
        tally.models_skipped += 1
        return None
    ordered = sorted(chosen.values(), key=lambda f: [r.name for r in BY_NAME.values()].index(f.task.name))
    tally.converted += sum(f.converted for f in ordered)
    rows = [r for f in ordered for r in metric_rows(f.task, f.entry)]
    return MtebModel(name, tuple(dict.fromkeys(f.revision for f in sorted(ordered, key=lambda f: f.revision))),
                     model, pd.DataFrame(rows, columns=METRIC_COLUMNS),
                     tuple(dict.fromkeys(f.version for f in ordered if f.version)))


def read_results(spec: str, log: Callable[[str], None] = lambda message: None) -> list[MtebModel]:
    """The models of the results folder ``mteb:PATH`` with a result of a task with a benchbox counterpart, in
    folder order; what was skipped summed up in a few lines to ``log`` (module docstring)."""
    root = results_folder(spec)
    folders = _model_folders(root)
    if not folders:
        raise BenchboxError(f"{spec}: {root} holds no mteb results (MODEL/REVISION/TASK.json)")
    tally = Tally()
    models = [m for m in (read_model(model, revisions, tally) for model, revisions in folders.items()) if m]
    if tally.skipped or tally.converted or tally.models_skipped:
        for line in tally.lines(len(models)):
            log(line)
    if not models:
        names = ", ".join(row.name for row in BY_TASK.values())
        raise BenchboxError(f"{spec}: no result of a task with a benchbox counterpart ({names}); nothing to compare")
    return models

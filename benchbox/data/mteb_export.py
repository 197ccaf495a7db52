"""A run's scores in mteb's result format (``benchbox export mteb``): for each task of the run with an MTEB
counterpart (:data:`benchbox.data.mteb_tasks.MTEB_TASKS`), ``OUT/<model>/<revision>/<MTEB task>.json`` as mteb's
``TaskResult.to_disk`` writes it (mteb 2.x, ``mteb/results/task_result.py``)::

    {"dataset_revision": ..., "task_name": "STS12", "mteb_version": ..., "evaluation_time": null,
     "kg_co2_emissions": null, "date": <the run's creation, POSIX seconds>,
     "scores": {"test": [{"cosine_spearman": ..., "cosine_pearson": ..., "spearman": ..., "pearson": ...,
                          "main_score": ..., "hf_subset": "default", "languages": ["eng-Latn"]}]}}

``OUT`` is an mteb results folder: the layout of a ``mteb.ResultCache``'s ``results/`` folder and of the
embeddings-benchmark/results repository, which ``mteb.ResultCache(CACHE).load_results(require_model_meta=False)``
reads when ``OUT`` is ``CACHE/results``. ``<model>`` is mteb's path form of the model name (``ORG/NAME`` →
``ORG__NAME``; default ``benchbox/<the run's label>``), ``<revision>`` the encoder's fingerprint (the model as
evaluated). No ``model_meta.json`` is written: benchbox does not know most of mteb's ``ModelMeta`` fields, and a
partial one would be read as true. Scores keep their full precision (mteb rounds to 6 places).

A task is exported only when the run evaluated it as MTEB does: the protocol the table requires (STS12–16: SentEval's
text) and the published data files (none evaluated under ``--allow-data-mismatch``); otherwise it is skipped with a
note. Nothing is overwritten: a file that exists with other content is refused before anything is written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from benchbox.data.mteb_tasks import (
    BY_TASK,
    RESEMBLED,
    HF_SUBSET,
    LANGUAGES,
    MAIN_SCORE,
    MODEL_SIMILARITY,
    MTEB_VERSION,
    MtebTask,
)
from benchbox.errors import BenchboxError
from benchbox.storage.atomic import write_text
from benchbox.storage.runs import Run

#: one part of an mteb model name (``ORG/NAME``): what a folder name may hold on every file system
NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def model_path(name: str) -> str:
    """mteb's folder name for a model name (``ResultCache.get_task_result_path``: ``/`` → ``__``)."""
    return name.replace("/", "__").replace(" ", "_")


def check_model_name(name: str) -> str:
    """``name`` if it is mteb's ``ORG/NAME`` form (``ModelMeta`` requires the slash), each part a folder name."""
    parts = name.split("/")
    if len(parts) != 2 or not all(NAME_PART.fullmatch(p) and "__" not in p for p in parts):
        raise BenchboxError(f"--model-name {name!r}: give mteb's form ORG/NAME (letters, digits, '.', '_', '-'; "
                            "no '__'), e.g. benchbox/glove-bow")
    return name


def default_model_name(run: Run) -> str:
    """``benchbox/<label>``: the run's label (else its encoder's name), with what a folder name cannot hold as ``-``."""
    label = run.record.label or run.record.encoder.name or run.run_id
    return "benchbox/" + (re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-._").replace("__", "_") or "model")


def _departure(run: Run, row: MtebTask) -> str | None:
    """Why the run's evaluation of ``row.task`` is not MTEB's (None: it is)."""
    entry = run.record.tasks.get(row.task)
    if entry is None:
        return "the run's manifest does not record the task"
    for key, wanted in row.protocol.items():
        if entry.protocol.get(key) != wanted:
            return f"evaluated with {key}={entry.protocol.get(key)}, MTEB's items are {key}={wanted}"
    mismatched = sorted(set(run.record.settings.get("data_mismatch") or {}) & set(entry.data_checksums))
    if mismatched:
        return f"evaluated on data files that are not the published ones ({', '.join(mismatched)})"
    return None


def scores_entry(run: Run, row: MtebTask) -> dict[str, Any] | str:
    """The run's score entry of MTEB task ``row`` (mteb's keys and scale), or why there is none."""
    if (why := _departure(run, row)) is not None:
        return why
    m = run.metrics
    entry: dict[str, Any] = {}
    for key, metric in row.metrics:
        found = m[(m["task"] == row.task) & (m["subset"].astype(str) == row.subset) & (m["metric"] == metric)]
        if found.empty or not math.isfinite(float(found["value"].iloc[0])):
            return f"the run has no {row.task} {row.subset} {metric}"
        if int(found["n"].iloc[0]) != row.n:
            return f"{row.task} {row.subset} has {int(found['n'].iloc[0])} pairs, MTEB's {row.split} split {row.n}"
        entry[key] = float(found["value"].iloc[0])
    entry.update({own: entry[cosine] for own, cosine in MODEL_SIMILARITY.items()})
    return {**entry, "main_score": entry[MAIN_SCORE], "hf_subset": HF_SUBSET, "languages": list(LANGUAGES)}


def _date(run: Run) -> float | None:
    try:
        return datetime.fromisoformat(run.record.created).timestamp() if run.record.created else None
    except ValueError:
        return None


def task_result(run: Run, row: MtebTask, entry: dict[str, Any]) -> dict[str, Any]:
    """The file of MTEB task ``row`` (module docstring)."""
    return {"dataset_revision": row.revision, "task_name": row.name, "mteb_version": MTEB_VERSION,
            "scores": {row.split: [entry]}, "evaluation_time": None, "kg_co2_emissions": None, "date": _date(run)}


def export_run(run: Run, out: Path, model_name: str | None = None,
               log: Callable[[str], None] = lambda message: None) -> list[Path]:
    """Write the run's MTEB task results under ``out`` (module docstring) and return the files; each task
    skipped is one line to ``log``. A run with no task to export, or a file that exists with other content, is an
    error before anything is written."""
    if run.kind != "eval":
        raise BenchboxError(f"{run.path} is a {run.kind} run: export an evaluation run (benchbox eval ... writes one)")
    name = check_model_name(model_name) if model_name is not None else default_model_name(run)
    folder = out / model_path(name) / (run.record.encoder.fingerprint or run.run_id)
    texts: dict[Path, str] = {}
    for task in dict.fromkeys(run.metrics["task"]):
        for other in RESEMBLED.get(task, []):
            log(f"{task}: not exported as MTEB's {other.name}: {other.departure}")
        row = BY_TASK.get(task)
        if row is None:
            continue
        entry = scores_entry(run, row)
        if isinstance(entry, str):
            log(f"{task}: not exported as MTEB's {row.name}: {entry}")
            continue
        texts[folder / f"{row.name}.json"] = json.dumps(task_result(run, row, entry), indent=2) + "\n"
    if not texts:
        raise BenchboxError(f"{run.path}: no task to export as an MTEB task; the tasks with an MTEB counterpart are "
                            f"{', '.join(BY_TASK)} (docs/guide.md#mteb-interoperability)")
    for path, text in texts.items():
        if path.exists() and path.read_text(encoding="utf-8") != text:
            raise BenchboxError(f"{path} exists with other scores: remove it or pass another --out")
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        write_text(path, text)
    return list(texts)

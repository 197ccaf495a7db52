"""Results as data: evaluation runs loaded back into one tidy table, and the main scores of many runs.

:func:`load_runs` reads run folders (or folders of runs, e.g. ``runs/``) into a pandas DataFrame with one row
per metric record (a row of a run's ``metrics.csv``), joined with what the run's manifest says about it. The
columns, in this order (docs/schema.md, "load_runs"):

=====================  ===================================================================================
run_id                 the run's id (its folder name for runs written by benchbox)
path                   the run folder
label                  the model's label (``--name``), else the encoder name
encoder                the encoder name
fingerprint            the encoder fingerprint (configuration and weights)
encoder_provider       the distribution that provides the encoder's class (null: none, or an older run)
encoder_version        that distribution's version
task                   task name
task_version           the task's declared version (null for runs that recorded none)
variant                the task's protocol switches that differ from their defaults (``text=raw``; empty: the
                       standard protocol)
subset                 subset / split / retrieval direction
metric                 metric name (units in docs/schema.md)
value                  the metric value
ci_low, ci_high        its 95% interval (null where it has none)
n                      items the value is computed on
unit                   what the number is (``r``, ``%``, ``rank``, ``mse``, ``value``): the task's declaration
created                when the run was written (UTC, ISO 8601 text)
benchbox_version       the benchbox version that wrote the run
option.<name>          one column per protocol option (``TaskOptions``) of the run, flattened; columns sorted
encoder_option.<name>  one column per encoder option (given and defaulted) of the run; columns sorted
=====================  ===================================================================================

Every table is read through :meth:`benchbox.storage.runs.Run.table`, so a truncated or altered run is never read
silently. A folder that is not a readable evaluation run is an error naming it (``errors="raise"``), or is
left out with a warning (``errors="skip"``). Training runs (``"kind": "train"``) in a folder of runs hold no
metric records and are passed over.

The leaderboard of many runs (one row per model, intervals and ranks) is
:mod:`benchbox.comparison.leaderboard`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.storage.runs import METRIC_COLUMNS, Run
from benchbox.task_contract.metadata import task_metadata

#: the columns of :func:`load_runs` before the ``option.*`` columns
RUN_COLUMNS = ["run_id", "path", "label", "encoder", "fingerprint", "encoder_provider", "encoder_version", "task",
               "task_version", "variant", "subset", "metric", "value", "ci_low", "ci_high", "n", "unit", "created",
               "benchbox_version"]
OPTION_PREFIX = "option."
ENCODER_OPTION_PREFIX = "encoder_option."
#: the columns of :func:`list_runs`
RUNS_LIST_COLUMNS = ["run_id", "kind", "label", "encoder", "fingerprint", "tasks", "created", "path"]


def _run_rows(run: Run) -> pd.DataFrame:
    """The metric records of one evaluation run with the run's columns (module docstring)."""
    from benchbox.comparison.variants import variant  # here: `import benchbox` loads this module

    record = run.record
    encoder = record.encoder
    metrics = run.metrics.reindex(columns=METRIC_COLUMNS)
    frame = pd.DataFrame({
        "run_id": run.run_id, "path": str(run.path), "label": record.label or encoder.name,
        "encoder": encoder.name, "fingerprint": encoder.fingerprint, "encoder_provider": encoder.distribution,
        "encoder_version": encoder.version,
    }, index=metrics.index)
    frame = pd.concat([frame, metrics], axis=1)
    entries = record.tasks
    frame["task_version"] = [entries[t].version if t in entries else None for t in frame["task"]]
    variants = {t: variant(t, entries[t].protocol) if t in entries else "" for t in set(frame["task"])}
    frame["variant"] = frame["task"].map(variants)
    known = {t: task_metadata(t, entries[t].metadata if t in entries else None) for t in set(frame["task"])}
    frame["unit"] = [known[t].spec(m).unit for t, m in zip(frame["task"], frame["metric"])]
    frame["created"] = record.created
    frame["benchbox_version"] = record.benchbox_version
    for prefix, values in ((OPTION_PREFIX, record.options), (ENCODER_OPTION_PREFIX, encoder.options)):
        for name, value in values.items():
            frame[prefix + name] = [value] * len(frame)
    return frame


def load_runs(paths: str | os.PathLike | Iterable[str | os.PathLike], *, errors: str = "raise") -> pd.DataFrame:
    """The metric records of the evaluation runs under ``paths`` (run folders or folders of runs) as one tidy
    DataFrame, one row per record, columns as in the module docstring. ``errors="raise"``: a bad run folder is
    a :class:`BenchboxError` naming it; ``errors="skip"``: it is left out with a warning."""
    from benchbox.comparison.sources import require_encoder, run_folders  # here: `import benchbox` loads this module

    if errors not in ("raise", "skip"):
        raise BenchboxError(f"errors must be 'raise' or 'skip', not {errors!r}")
    frames = []
    for folder in run_folders(paths):
        try:
            run = Run.open(folder)
            if run.kind != "eval":
                continue  # a training run: its model's scores are in the evaluation runs of it
            require_encoder(run)
            frames.append(_run_rows(run))
        except BenchboxError as exc:
            if errors == "raise":
                raise BenchboxError(f"cannot load the run {folder}: {exc}") from None
            warnings.warn(f"skipped the run {folder}: {exc}", stacklevel=2)
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=RUN_COLUMNS)
    table = pd.concat(frames, ignore_index=True)
    options = [c for prefix in (OPTION_PREFIX, ENCODER_OPTION_PREFIX)
               for c in sorted(c for c in table.columns if c.startswith(prefix))]
    return table[RUN_COLUMNS + options]


def list_runs(paths: str | os.PathLike | Iterable[str | os.PathLike], *, errors: str = "raise") -> pd.DataFrame:
    """One row per run under ``paths`` (evaluation and training runs), from the manifests alone: ``run_id``,
    ``kind``, ``label``, ``encoder``, ``fingerprint``, ``tasks`` (list of names), ``created``, ``path``; sorted
    by ``created``. Bad folders as in :func:`load_runs`."""
    from benchbox.comparison.sources import run_folders  # here, not at the top: `import benchbox` loads this module

    rows = []
    for folder in run_folders(paths):
        try:
            run = Run.open(folder)
            record = run.record
        except BenchboxError as exc:
            if errors == "raise":
                raise BenchboxError(f"cannot load the run {folder}: {exc}") from None
            warnings.warn(f"skipped the run {folder}: {exc}", stacklevel=2)
            continue
        rows.append({"run_id": run.run_id, "kind": run.kind, "label": record.label or record.encoder.name,
                     "encoder": record.encoder.name, "fingerprint": record.encoder.fingerprint,
                     "tasks": list(record.tasks), "created": record.created, "path": str(folder)})
    frame = pd.DataFrame(rows, columns=RUNS_LIST_COLUMNS)
    return frame.sort_values(["created", "run_id"], kind="stable", na_position="first").reset_index(drop=True)

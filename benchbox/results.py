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

:func:`main_scores` keeps one row per run and task: the task's headline metric (``main_score`` of the task
class in the registry, else the one its run recorded) on subset ``all`` when the task has one, else ``test``,
else the only subset; a metric recorded on several other subsets (per-subset scores) is no headline, and a
task without a declared headline found gets the first metric its run recorded (``main_score_known`` is False).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import Any

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
#: subsets that hold a task's headline row, in order of preference
MAIN_SUBSETS = ("all", "test")
#: the leaderboard's ``protocol`` of a run whose switches are all at their defaults
STANDARD = "standard"


def _run_rows(run: Run) -> pd.DataFrame:
    """The metric records of one evaluation run with the run's columns (module docstring)."""
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


def variant(task: str, protocol: dict[str, Any]) -> str:
    """``key=value; ...`` of the protocol switches ``task`` recorded with a value other than its option's
    default (registered tasks; empty for the standard protocol or a task the registry does not know)."""
    from benchbox.registry import TASKS

    try:
        options = TASKS.get(task).options
    except (BenchboxError, AttributeError):
        return ""
    defaults = {o.protocol_key: o.default for o in options if o.protocol_key}
    return "; ".join(f"{key}={protocol[key]}" for key in sorted(defaults)
                     if key in protocol and str(protocol[key]) != str(defaults[key]))


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


def main_metric(task: str) -> str | None:
    """The registered task's ``main_score`` (None for a task the registry does not know)."""
    from benchbox.registry import TASKS

    try:
        target = TASKS.get(task)
    except BenchboxError:
        return None
    return getattr(target, "main_score", None)


def _headline(rows: pd.DataFrame) -> pd.DataFrame:
    """The headline row of one metric's records: subset ``all``, else ``test``, else the only subset; none
    when the metric is recorded per subset (a first subset is no task score)."""
    for subset in MAIN_SUBSETS:
        if (rows["subset"] == subset).any():
            return rows[rows["subset"] == subset].iloc[:1]
    return rows.iloc[:1] if len(rows) == 1 else rows.iloc[0:0]


def main_scores(table: pd.DataFrame) -> pd.DataFrame:
    """One row per run and task of a :func:`load_runs` table: its headline record (module docstring), with
    ``main_score_known`` telling whether the metric is the registered task's ``main_score``."""
    rows = []
    for _, group in table.groupby(["run_id", "path", "task"], sort=False):
        metric = main_metric(group["task"].iloc[0])
        best = _headline(group[group["metric"] == metric]) if metric else group.iloc[0:0]
        known = not best.empty
        for other in dict.fromkeys(group["metric"]) if best.empty else ():
            best = _headline(group[group["metric"] == other])
            if not best.empty:
                break
        if not best.empty:
            rows.append({**best.iloc[0].to_dict(), "main_score_known": known})
    return pd.DataFrame(rows, columns=[*table.columns, "main_score_known"])


def leaderboard(table: pd.DataFrame, *, tasks: list[str] | None = None, all_runs: bool = False) -> pd.DataFrame:
    """The main scores of a :func:`load_runs` table as rows of models × columns of tasks. A model is a label,
    an encoder fingerprint and a protocol (``protocol``: the run's switches that differ from the standard
    protocol, ``standard`` for none), so a ``--text raw`` run never replaces a standard one; each cell is the
    score of the model's newest run of that task (by ``created``, then run id). ``all_runs``: one row per run
    (``run_id`` column) instead. ``tasks``: these tasks in this order (default: every task, in order of first
    appearance). Rows come in the order of the models' first runs."""
    scores = main_scores(table)
    if tasks:
        missing = [t for t in tasks if t not in set(scores["task"])]
        if missing:
            raise BenchboxError(f"no run holds the task(s) {', '.join(missing)}: tasks recorded are "
                                f"{', '.join(dict.fromkeys(scores['task'])) or 'none'}")
        scores = scores[scores["task"].isin(tasks)]
    columns = list(tasks or dict.fromkeys(scores["task"]))
    protocol = table.groupby("run_id")["variant"].agg(lambda v: "; ".join(sorted({x for x in v if x})) or STANDARD)
    scores = scores.assign(protocol=scores["run_id"].map(protocol))
    model = ["label", "fingerprint", "protocol"]
    keys = [*model, "run_id"] if all_runs else model
    scores = scores.sort_values(["created", "run_id"], na_position="first", kind="stable")
    if not all_runs:
        scores = scores.drop_duplicates([*model, "task"], keep="last")
    first_seen = {key: i for i, key in enumerate(dict.fromkeys(zip(*(scores[k] for k in model))))}
    wide = scores.pivot(index=keys, columns="task", values="value").reindex(columns=columns).reset_index()
    wide.columns.name = None
    wide["_order"] = [first_seen[key] for key in zip(*(wide[k] for k in model))]
    if all_runs:  # a model's runs oldest first
        wide["_order"] = list(zip(wide["_order"], wide["run_id"].map(
            {run: i for i, run in enumerate(dict.fromkeys(scores["run_id"]))})))
    wide = wide.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
    wide.attrs["metrics"] = dict(zip(scores["task"], scores["metric"]))  # each task's column: this metric
    wide.attrs["main_score_known"] = {t: bool(k) for t, k in scores.groupby("task")["main_score_known"].all().items()}
    return wide


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

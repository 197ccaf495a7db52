"""``benchbox reproduce PAPER``: plan a paper's cells, run the models that can run here through the study
machinery, and set each published number beside benchbox's with a verdict (:mod:`benchbox.reproduce.verdict`).

Each ``[[model]]`` of the paper file (:mod:`benchbox.reproduce.paper`) is a study of one ``[[encoder]]``
(:mod:`benchbox.study.run`), written as ``<out>/studies/<model>.toml`` and run in ``<out>/models/<model>/``: it
is checked as any study is (data, training options, files), trained and evaluated in a cell that is resumable
(a finished cell is never redone: running the command again only finishes what is missing), on the local pool
or a Ray cluster. The plan is that check: a model whose study is refused cannot run here, and the refusal (the
missing data with its ``benchbox data`` instruction, the missing weights) is what it needs; a model with a
``fallback`` runs that configuration instead, and says so as a departure in every cell it fills.

``overrides`` (``--override FILE``: ``[MODEL]`` tables of ``train``, ``options`` and ``tasks``) change a
model's configuration for this reproduction, e.g. a smaller run; each override is a departure of the cells.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.reproduce.paper import DATA_PREFIX, Model, Paper
from benchbox.reproduce.verdict import difference, verdict

#: the plan states of a model
RUNS_HERE, FALLBACK, NEEDS = "runs here", "runs here with a departure", "cannot run here"


@dataclass
class ModelPlan:
    model: Model
    state: str
    study_file: Path
    out: Path
    departures: list[str] = field(default_factory=list)
    needs: str | None = None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def _with_root(values: dict[str, Any], root: Path) -> dict[str, Any]:
    return {k: str(root / v[len(DATA_PREFIX):]) if isinstance(v, str) and v.startswith(DATA_PREFIX) else v
            for k, v in values.items()}


def study_text(model: Model, options: dict[str, Any], train: dict[str, Any] | None, tasks: list[str],
               data_dir: str | None, flags: dict[str, Any]) -> str:
    """The study of one model: its tasks and their flags, its data root and its one ``[[encoder]]``."""
    head = {"tasks": tasks, "jobs": 1, **({"data-dir": data_dir} if data_dir else {}), **flags}
    encoder: dict[str, Any] = {"name": model.encoder}
    if options:
        encoder["options"] = options
    if train is not None:
        encoder["train"] = train
        if model.seed is not None:
            encoder["seeds"] = [model.seed]
    lines = ["# written by benchbox reproduce: one model of the paper, run as a study", "[study]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in head.items()]
    lines += ["", "[[encoder]]", *(f"{k} = {_toml_value(v)}" for k, v in encoder.items())]
    return "\n".join(lines) + "\n"


def _override_words(label: str, override: dict[str, Any]) -> list[str]:
    words = []
    for part in ("train", "options"):
        words += [f"{part}.{k} = {v} (override)" for k, v in override.get(part, {}).items()]
    if "tasks" in override:
        words.append(f"tasks = {', '.join(override['tasks'])} (override)")
    return words


def plan_models(paper: Paper, out: Path, data_dir: str | None, overrides: dict[str, dict[str, Any]]) -> list[ModelPlan]:
    """Each model's plan (module docstring); writes its study file under ``<out>/studies``."""
    from benchbox.data.root import resolve_root
    from benchbox.study.run import load_study
    from benchbox.study.train import check_train

    root = resolve_root(data_dir)
    unknown = sorted(set(overrides) - {m.label for m in paper.model})
    if unknown:
        raise BenchboxError(f"--override names no model of the paper: {', '.join(unknown)} (models: "
                            f"{', '.join(m.label for m in paper.model)})")
    (out / "studies").mkdir(parents=True, exist_ok=True)
    plans = []
    for model in paper.model:
        override = overrides.get(model.label, {})
        tasks = list(override.get("tasks", model.tasks))
        tries = [(model.options, model.train, None)]
        if model.fallback is not None:
            tries.append((model.fallback.options, model.fallback.train if model.fallback.train is not None
                          else model.train, model.fallback.departure))
        study_file = out / "studies" / f"{model.label}.toml"
        models_out = out / "models" / model.label
        refusals = []
        for options, train, departure in tries:
            options = _with_root({**options, **override.get("options", {})}, root)
            train = None if train is None else _with_root({**train, **override.get("train", {})}, root)
            flags = _with_root(model.flags, root)
            study_file.write_text(study_text(model, options, train, tasks, data_dir, flags), encoding="utf-8")
            try:
                load_study(study_file, models_out, check_train=check_train, min_cells=1)
            except BenchboxError as exc:
                refusals.append(str(exc).replace(f"{study_file}: ", "").replace("[[encoder]] 1 ", ""))
                continue
            departures = [*model.departures, *([departure] if departure else []),
                          *_override_words(model.label, override)]
            plans.append(ModelPlan(model, FALLBACK if departure else RUNS_HERE, study_file, models_out, departures))
            break
        else:
            needs = refusals[0]
            if model.weights:
                needs += f"; to get it: {model.weights}"
            if model.gpu_hours:
                needs += f"; full-size training ≈ {model.gpu_hours:g} GPU-hours"
            plans.append(ModelPlan(model, NEEDS, study_file, models_out, list(model.departures), needs))
    return plans


def run_models(plans: list[ModelPlan], *, log: Callable[[str], None], ray_address: str | None = None,
               live: bool = False) -> tuple[dict[str, str], int | None]:
    """Run the study of every model that can run here; returns model label → its evaluation run folder (for a
    model whose cell failed, ``"failed: ..."``), and the signal that stopped the studies (None: none did; the
    models after it are not started, and running the command again resumes)."""
    from benchbox.study.cells import cell_folder, read_done
    from benchbox.study.run import load_study, run_study
    from benchbox.study.train import check_train

    runs = {}
    for plan in plans:
        if plan.state == NEEDS:
            continue
        study = load_study(plan.study_file, plan.out, check_train=check_train, min_cells=1)
        result = run_study(study, log=log, ray_address=ray_address, live=live)
        if result["interrupted"] is not None:
            return runs, result["interrupted"]
        for cell in study.cells:
            done, _ = read_done(cell_folder(study.out, cell.name))
            if done is not None:
                runs[plan.model.label] = done["run"]
            else:
                reason = result["failed"].get(cell.name, "did not finish").splitlines()[0]
                runs[plan.model.label] = f"failed: {reason} (log: {cell_folder(study.out, cell.name) / 'log.txt'})"
    return runs, None


def _nan(value: Any) -> float:
    return math.nan if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def reproduction_rows(paper: Paper, plans: list[ModelPlan], runs: dict[str, str]) -> list[dict[str, Any]]:
    """One row per cell: the published number (and interval), benchbox's (and interval, from the run the model's
    study wrote), the difference, the verdict, the departures; a cell not run says why."""
    from benchbox.data.comparators import paper_result
    from benchbox.storage.runs import Run

    by_label = {p.model.label: p for p in plans}
    metrics = {label: Run.open(Path(run)).metrics for label, run in runs.items() if not run.startswith("failed: ")}
    rows = []
    for entry in paper.cell:
        table = paper.table_named(entry.table)
        if entry.published is not None:
            comparator = paper_result(entry.published)
            published = comparator.metrics
            if entry.tasks:
                published = published[published["task"].isin(entry.tasks)]
            name = comparator.comparator.model
            keep = table.published_intervals
            items = [(name, r.task, r.subset, r.metric, entry.metric or r.metric, r.value,
                      r.ci_low if keep else None, r.ci_high if keep else None) for r in published.itertuples()]
        else:
            items = [(entry.row, entry.tasks[0], entry.subset, entry.metric, entry.metric, entry.value, None, None)]
        plan = by_label.get(entry.model) if entry.model else None
        for row_name, task, subset, metric, ours_metric, value, low, high in items:
            row: dict[str, Any] = {
                "table": table.name, "row": row_name, "model": entry.model, "task": task, "subset": subset,
                "metric": metric, "benchbox_metric": ours_metric, "published": _nan(value),
                "published_low": _nan(low), "published_high": _nan(high), "margin": table.margin,
                "departures": list(plan.departures) if plan else [], "run": None,
                "value": math.nan, "low": math.nan, "high": math.nan, "n": None,
                "difference": math.nan, "difference_low": math.nan, "difference_high": math.nan}
            row.update(_result(entry, plan, runs, metrics, task, subset, ours_metric, row))
            rows.append(row)
    return rows


def _result(entry: Any, plan: ModelPlan | None, runs: dict[str, str], metrics: dict[str, Any], task: str,
            subset: str, metric: str, row: dict[str, Any]) -> dict[str, Any]:
    """The benchbox side of one cell: its number and verdict, or why it was not run."""
    if plan is None:
        return {"verdict": "not run", "words": f"not run: {entry.not_run}"}
    if plan.state == NEEDS:
        return {"verdict": "not run", "words": f"not run: needs {plan.needs}"}
    run = runs.get(plan.model.label)
    if run is None:
        return {"verdict": "not run", "words": f"not run yet: {plan.state} (--plan runs nothing)"}
    if run.startswith("failed: "):
        return {"verdict": "not run", "words": f"not run: {run}"}
    frame = metrics[plan.model.label]
    found = frame[(frame["task"] == task) & (frame["subset"] == subset) & (frame["metric"] == metric)]
    if found.empty:
        if task not in set(frame["task"]):
            return {"verdict": "not run", "words": f"not run: {task} is not among the tasks run", "run": run}
        return {"verdict": "not run", "words": f"not run: the run has no {task}/{subset}/{metric}", "run": run}
    record = found.iloc[0]
    ours = {"value": float(record["value"]), "low": _nan(record["ci_low"]), "high": _nan(record["ci_high"]),
            "n": None if record["n"] is None or record["n"] != record["n"] else int(record["n"]), "run": run}
    if math.isnan(row["published"]):
        return {**ours, "verdict": "not compared", "words": "not compared: benchbox carries no published number "
                "for this cell"}
    diff = difference(ours["value"], ours["low"], ours["high"], row["published"], row["published_low"],
                      row["published_high"])
    judged = verdict(diff, row["margin"])
    return {**ours, "difference": diff.value, "difference_low": diff.low, "difference_high": diff.high,
            "verdict": judged.kind, "words": judged.words}

"""What training runs contribute: per-epoch curves (the paper's Figure 4) and model selection across sizes and
architectures (its Figure 2).

Read from the run folder as ``benchbox train`` writes it: ``manifest.json`` (``selection``: what a snapshot's
score is, e.g. the mean dev R@10 of both directions, or with ``--visual cluster`` the caption → image-cluster
R@10; ``snapshots``, per snapshot: ``epoch``, ``score`` and ``dev`` retrieval metrics; ``status`` and, for a run
stopped by SIGINT/SIGTERM, ``stopped_at_step``), ``semantic.csv``
(per snapshot metric records with an ``epoch`` column, written with ``--eval-semantic``) and ``history.csv``
(per epoch: ``loss``; InferSent: ``train_acc``, ``dev_acc``).
"""

from __future__ import annotations

import math

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox import formatting as fmt
from benchbox.reports.document import Table
from benchbox.reports.figures import as_shown
from benchbox.storage.runs import Run
from benchbox.task_contract.metadata import task_metadata

CURVE_COLUMNS = ["panel", "series", "epoch", "value", "ci_low", "ci_high"]
DEV_PANEL = "dev retrieval (%)"
SEMANTIC_PANEL = "Pearson r × 100"
LOSS_PANEL = "training loss"
ACCURACY_PANEL = "accuracy (%)"


def snapshots(run: Run) -> list[dict]:
    """The run's snapshot records sorted by epoch."""
    return sorted((s for s in run.record.snapshots if "epoch" in s), key=lambda s: s["epoch"])


def semantic_headlines(run: Run) -> pd.DataFrame:
    """One headline score per task and snapshot from ``semantic.csv``: the year's unweighted mean Pearson for
    STS12–16 (subset ``all``, ``pearson_mean``), test Pearson otherwise; values at their metric spec's scale (× 100). Columns: series, epoch,
    value, ci_low, ci_high."""
    frame = run.table("semantic.csv")
    if frame is None or frame.empty:
        return pd.DataFrame(columns=["series", "epoch", "value", "ci_low", "ci_high"])
    missing = {"epoch", "task", "subset", "metric", "value", "ci_low", "ci_high"} - set(frame.columns)
    if missing:
        raise BenchboxError(f"{run.path / 'semantic.csv'} lacks the columns {', '.join(sorted(missing))}")
    mean = frame[(frame["subset"] == "all") & (frame["metric"] == "pearson_mean")].assign(series=lambda f: f["task"] + " mean")
    test = frame[(frame["subset"] == "test") & (frame["metric"] == "pearson") & ~frame["task"].isin(mean["task"])]
    rows = pd.concat([mean, test.assign(series=test["task"])])
    rows = as_shown(rows.assign(spec=[task_metadata(t).spec(m) for t, m in zip(rows["task"], rows["metric"])]))
    order = list(dict.fromkeys(frame["task"]))
    rows = rows.assign(rank=rows["task"].map(order.index)).sort_values(["rank", "epoch"], kind="stable")
    return rows[["series", "epoch", "value", "ci_low", "ci_high"]].reset_index(drop=True)


def curves(run: Run) -> pd.DataFrame:
    """Per-epoch curves of a training run (empty when it recorded none yet). Columns: CURVE_COLUMNS."""
    parts = []
    snaps = snapshots(run)
    recall_keys = sorted({k for s in snaps for k in s.get("dev", {}) if k.endswith("_r10")})
    for key in recall_keys:
        parts.append(_points(DEV_PANEL, key.replace("_r10", " R@10"), [(s["epoch"], s["dev"].get(key)) for s in snaps]))
    if len(recall_keys) > 1:
        parts.append(_points(DEV_PANEL, "mean R@10 (selection)", [(s["epoch"], s.get("score")) for s in snaps]))
    semantic = semantic_headlines(run)
    if not semantic.empty:
        parts.append(semantic.assign(panel=SEMANTIC_PANEL))
    history = run.table("history.csv")
    if history is not None and "epoch" in history:
        for column in history.columns:
            panel = LOSS_PANEL if "loss" in column else ACCURACY_PANEL if column.endswith("acc") else None
            if panel:
                parts.append(_points(panel, column, list(zip(history["epoch"], history[column]))))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    return pd.concat(parts, ignore_index=True)[CURVE_COLUMNS]


def _points(panel: str, series: str, points: list[tuple]) -> pd.DataFrame:
    rows = [(panel, series, e, float(v), math.nan, math.nan) for e, v in points if v is not None]
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def status(run: Run, detail: bool = False) -> str:
    """The run's state for a person: ``complete``; ``incomplete (interrupted at step N)`` for a run stopped by a
    signal (``detail``: with how many steps were planned and how to resume it, as ``benchbox train`` says when
    interrupted); ``stopped: <error>`` for a run stopped by an error (e.g. a non-finite loss); ``running`` for one
    still being written (or killed without a chance to record it)."""
    record = run.record
    state = record.status or ""
    if state == "stopped" and record.error:
        return f"stopped: {record.error}" if detail else "stopped (error)"
    if state == "stopped":
        step = record.stopped_at_step
        where = f"interrupted at step {step}" if step is not None else "interrupted"
        if not detail:
            return f"incomplete ({where})"
        epochs, per_epoch = record.setting("epochs"), record.steps_per_epoch
        if step is not None and isinstance(epochs, int) and isinstance(per_epoch, int):
            where += f" of {epochs * per_epoch}"
        return f"incomplete ({where}; resume with the same benchbox train command and --out {run.path} --resume)"
    return state


def selection(runs: list[tuple[str, Run]]) -> pd.DataFrame:
    """Per training run with snapshots: its group (architecture, dataset, visual side, loss), hidden size, best
    snapshot and its dev score, and the mean semantic headline at that snapshot (NaN without one)."""
    rows = []
    for label, run in runs:
        snaps = snapshots(run)
        if not snaps:
            continue
        best = max(snaps, key=lambda s: (s.get("score", -math.inf), s["epoch"]))
        semantic = semantic_headlines(run)
        at_best = semantic.loc[semantic["epoch"] == best["epoch"], "value"]
        record = run.record
        encoder = record.encoder.name or "?"
        details = ", ".join(str(v) for v in (record.setting("dataset"), record.setting("visual"), record.setting("loss"))
                            if v)
        rows.append({
            "label": label, "group": f"{encoder} ({details})" if details else encoder,
            "hidden": record.setting("hidden"), "epochs": len(snaps), "status": status(run),
            "criterion": record.selection or "not recorded",
            "best_epoch": best["epoch"], "score": float(best.get("score", math.nan)),
            "semantic": float(at_best.mean()) if len(at_best) else math.nan,
            "ensemble": ", ".join(record.ensemble),
        })
    return pd.DataFrame(rows, columns=["label", "group", "hidden", "epochs", "status", "criterion", "best_epoch",
                                       "score", "semantic", "ensemble"])


def selection_points(table: pd.DataFrame) -> pd.DataFrame:
    """The model selection figure's data: panel, group, hidden, value (runs without a hidden size left out)."""
    table = table[table["hidden"].notna()]
    parts = [table.assign(panel="best dev R@10 (%)", value=table["score"])]
    if table["semantic"].notna().any():
        parts.append(table.assign(panel="Pearson × 100 at best snapshot", value=table["semantic"]))
    points = pd.concat(parts, ignore_index=True)
    return points[points["value"].notna()][["panel", "group", "hidden", "value"]]


def selection_table(table: pd.DataFrame) -> Table:
    """The selection table; its caption states the selection criterion the runs recorded (a column of its own
    when they differ, e.g. a ``--visual cluster`` run beside image-feature runs)."""
    criteria = list(dict.fromkeys(table["criterion"]))
    own_column = len(criteria) > 1
    body = [[r.label, r.group, fmt.MISSING if r.hidden is None or fmt.is_missing(r.hidden) else str(int(r.hidden)),
             str(r.epochs), r.status, *([r.criterion] if own_column else []), str(r.best_epoch),
             fmt.one_decimal(r.score), fmt.one_decimal(r.semantic), r.ensemble or fmt.MISSING]
            for r in table.itertuples()]
    criterion = "the selection criterion in its own column" if own_column else criteria[0]
    return Table(caption=f"Training runs: the snapshot with the best dev score ({criterion}) and the mean semantic "
                         "headline (Pearson × 100) at that snapshot",
                 header=["Run", "Architecture", "Hidden", "Snapshots", "Status",
                         *(["Selection criterion"] if own_column else []), "Best epoch", "Dev score", "Semantic",
                         "Ensemble"],
                 rows=body, numeric=[False, False, True, True, False, *([False] if own_column else []), True, True,
                                     True, False])

"""The runs a report is about: opened from folders, each with a unique display label, plus published references."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.labels import split_label, stored_label
from benchbox.store import MANIFEST, METRIC_COLUMNS, Run


@dataclass(frozen=True)
class Source:
    """A run (or published reference) as the report shows it: its label and its metric records."""

    label: str
    metrics: pd.DataFrame
    run: Run | None = None
    citation: str = ""

    @property
    def is_reference(self) -> bool:
        return self.run is None


def open_runs(paths: list[str | os.PathLike]) -> list[tuple[Run, str | None]]:
    """Open run folders in the order given, each with the label given as ``LABEL=PATH`` (None without);
    a folder holding run folders (e.g. ``runs/``) stands for all of them, sorted by name (a label names one
    run, not a folder of them). Errors name the path that is not a readable run."""
    if not paths:
        raise BenchboxError("no run given: pass one or more run folders (e.g. runs/<run-id>)")
    runs: list[tuple[Run, str | None]] = []
    for raw in paths:
        label, target = split_label(raw)
        path = Path(target)
        if not path.exists():
            raise BenchboxError(f"{path} does not exist: pass run folders written by `benchbox eval` or `benchbox train`")
        if path.is_dir() and not (path / MANIFEST).is_file():
            children = sorted(p for p in path.iterdir() if (p / MANIFEST).is_file() and not p.name.startswith("."))
            if not children:
                raise BenchboxError(f"{path} is neither a benchbox run (no {MANIFEST}) nor a folder of runs")
            if label is not None:
                raise BenchboxError(f"{raw}: a label names one run, and {path} is a folder of {len(children)} runs; "
                                    "label its runs one by one (LABEL=FOLDER/RUN)")
            runs.extend((_open(child), None) for child in children)
        else:
            runs.append((_open(path), label))
    unique = {run.path.resolve(): run for run, _ in reversed(runs)}  # a run named twice is shown once, first place
    return [(run, label) for run, label in runs if unique.get(run.path.resolve()) is run]


def _open(path: Path) -> Run:
    run = Run.open(path)
    manifest = run.manifest  # parsed now, so that an unreadable manifest fails before rendering starts
    if not isinstance(manifest, dict):
        raise BenchboxError(f"unreadable run manifest {path / MANIFEST}: not a JSON object")
    try:
        columns = set(run.metrics.columns)
    except (OSError, ValueError) as exc:
        raise BenchboxError(f"unreadable metrics in run {path}: {exc}") from exc
    if not set(METRIC_COLUMNS) <= columns:
        raise BenchboxError(f"{path / 'metrics.csv'} lacks the columns {', '.join(sorted(set(METRIC_COLUMNS) - columns))}")
    return run


def run_sources(runs: list[tuple[Run, str | None]]) -> list[Source]:
    """One source per run, labelled by the label given with it, else the label stored in it
    (:mod:`benchbox.labels`), else its encoder name; ``label (run-id)`` where labels repeat."""
    names = [label or stored_label(run.manifest) or str((run.manifest.get("encoder") or {}).get("name") or run.run_id)
             for run, label in runs]
    counts = Counter(names)
    return [
        Source(label=name if counts[name] == 1 else f"{name} ({run.run_id})", metrics=run.metrics, run=run)
        for name, (run, _) in zip(names, runs)
    ]


def reference_sources(names: list[str]) -> list[Source]:
    """Published results (``paper:merkx2019/<model>``) as reference sources."""
    from benchbox.published import paper_result

    out = []
    for name in names:
        result = paper_result(name)
        out.append(Source(label=result.name, metrics=result.metrics, citation=result.citation))
    return out

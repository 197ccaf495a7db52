"""The result store: one immutable folder per run.

``runs/<run-id>/manifest.json`` (the provenance header of :mod:`benchbox.storage.provenance`: schema version,
package versions, git revision, machine; then encoder configuration and fingerprint, task protocols, options,
data checksums, elapsed seconds), ``metrics.csv`` (the tidy metric records) and ``items/<task>.csv`` (per-item
scores). A run is written to a hidden temporary folder and renamed into place, so a reader never sees
half a run. Training runs use the same folder convention with ``"kind": "train"`` in their manifest.

The manifest's ``files`` lists every table of the run with its sha256 and row count. Readers (``compare``,
``report``) read tables through :meth:`Run.table`, which checks them against that list: a missing, truncated
or altered file is an error naming it, never a silently smaller comparison. Runs written before the list
existed are read unchecked.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

from benchbox.lazy import lazy_module
from benchbox.storage.atomic import atomic_folder
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError
from benchbox.names import check_path_name
from benchbox.storage.jsonio import dumps
from benchbox.storage.manifest import Manifest
from benchbox.storage.provenance import manifest_header

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

METRIC_COLUMNS = ["task", "subset", "metric", "value", "ci_low", "ci_high", "n"]
MANIFEST = "manifest.json"
def new_run_id(label: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:60] or "run"
    return f"{stamp}-{safe}-{uuid.uuid4().hex[:6]}"


def write_run(
    runs_dir: str | os.PathLike,
    label: str,
    manifest: dict[str, Any],
    metrics: pd.DataFrame,
    items: dict[str, pd.DataFrame],
) -> Path:
    """Write a run atomically under ``runs_dir`` and return its folder. The manifest is the provenance header
    (:func:`benchbox.storage.provenance.manifest_header`), then
    ``manifest``, then the list of the run's files. A task whose name is not one path component (a plugin's
    entry point, which no registration checked: :mod:`benchbox.names`) is refused before anything is written."""
    for task in items:
        check_path_name(task, "a task's per-item table, items/NAME.csv")
    runs_dir = Path(runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    run_id = new_run_id(label)
    final = runs_dir / run_id
    with atomic_folder(final, runs_dir / f".tmp-{run_id}") as tmp:
        full = {**manifest_header(run_id), **manifest}
        tables = {"metrics.csv": metrics.reindex(columns=METRIC_COLUMNS)}
        tables.update({f"items/{task}.csv": frame for task, frame in items.items()})
        if items:
            (tmp / "items").mkdir()
        for name, frame in tables.items():
            frame.to_csv(tmp / name, index=False)
        full["files"] = {name: {"sha256": sha256_file(tmp / name), "rows": len(frame)} for name, frame in tables.items()}
        (tmp / MANIFEST).write_text(dumps(full, sort_keys=True), encoding="utf-8")
    return final


@dataclass(frozen=True)
class Run:
    """A run folder opened for reading."""

    path: Path

    @classmethod
    def open(cls, path: str | os.PathLike) -> Run:
        path = Path(path)
        if not (path / MANIFEST).is_file():
            raise BenchboxError(f"{path} is not a benchbox run: it has no {MANIFEST}")
        return cls(path)

    @cached_property
    def manifest(self) -> dict[str, Any]:
        try:
            manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or nested too deep to parse
            raise BenchboxError(f"unreadable run manifest {self.path / MANIFEST}: {exc}") from exc
        if not isinstance(manifest, dict):
            raise BenchboxError(f"unreadable run manifest {self.path / MANIFEST}: not a JSON object; restore it or "
                                "re-run the evaluation")
        return manifest

    @cached_property
    def record(self) -> Manifest:
        """The manifest, typed (:class:`benchbox.storage.manifest.Manifest`): how every reader of a run reads it."""
        return Manifest.parse(self.manifest, self.path.name)

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def kind(self) -> str:
        return self.record.kind

    @cached_property
    def metrics(self) -> pd.DataFrame:
        frame = self.table("metrics.csv")
        return pd.DataFrame(columns=METRIC_COLUMNS) if frame is None else frame

    def items(self, task: str) -> pd.DataFrame | None:
        return self.table(f"items/{task}.csv")

    def table(self, name: str) -> pd.DataFrame | None:
        """The CSV table ``name`` (a path inside the run), checked against the manifest's file list; None when
        the run has no such table. Every reader of run tables goes through here."""
        path = self.path / name
        listed = self.manifest.get("files")
        entry = listed.get(name) if isinstance(listed, dict) else None
        if entry is None:
            if isinstance(listed, dict) and path.is_file():
                raise BenchboxError(f"{path} is not listed in {self.path / MANIFEST}: it was added after the run was written")
            if not path.is_file():
                return None
        elif not path.is_file():
            raise BenchboxError(f"{path} is missing: {self.path / MANIFEST} lists it; restore it or re-run the evaluation")
        elif sha256_file(path) != entry.get("sha256"):
            raise BenchboxError(
                f"{path} was altered or truncated: its sha256 differs from the one in {self.path / MANIFEST}; "
                "restore it or re-run the evaluation"
            )
        try:
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"subset": str})
        except (OSError, ValueError) as exc:
            raise BenchboxError(f"unreadable {path}: {exc}") from exc
        if entry is not None and len(frame) != entry.get("rows"):
            raise BenchboxError(f"{path} holds {len(frame)} rows, its manifest {entry.get('rows')}")
        return frame

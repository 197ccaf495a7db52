"""Find an evaluation run that already holds what an on-demand evaluation would compute.

``benchbox compare`` evaluates encoder names and trained-model folders on demand; rather than writing a
duplicate run each time, it reuses an evaluation run under ``--runs-dir`` that would give identical numbers
(DESIGN.md: "re-running the same encoder × task × protocol × data … must give identical numbers"). A run is
reused only when all of these hold:

- it is an intact evaluation run (``"kind": "eval"``; its metric and per-item tables match their checksums);
- its encoder has the same name and fingerprint (weights and configuration);
- it recorded every requested task, and its metrics hold rows of each;
- its evaluation options (the protocol switches: ``--text``, ``--fix-stsb-labels``, features, retrieval
  conventions, seed, bootstrap, ...) are equal to the ones asked for;
- it was written by the same benchbox version (the task implementations are part of the package);
- every data file each requested task read still has the sha256 recorded then (the file the data root
  would give now, embedded fallback included).

Of several such runs the newest (by run id, which starts with its UTC time) is taken.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchbox.data import DataRoot
from benchbox.errors import BenchboxError
from benchbox.provenance import package_versions
from benchbox.store import MANIFEST, Run
from benchbox.task import TaskOptions

EMBEDDED_PREFIX = "embedded:"


def recorded_options(options: TaskOptions) -> dict:
    """``options`` as a run manifest stores them (JSON round trip)."""
    return json.loads(json.dumps(options.recorded(), default=str))


def data_unchanged(checksums: dict[str, str], data: DataRoot) -> bool:
    """True when every recorded file (``{label: sha256}``, :meth:`DataRoot.label`) is where the data root
    finds it now with the same sha256."""
    for label, sha256 in checksums.items():
        relpath = label.removeprefix(EMBEDDED_PREFIX)
        found = Path(relpath) if Path(relpath).is_absolute() else data.locate(relpath)
        if found is None or not found.is_file() or data.checksum(found) != sha256:
            return False
    return True


def _matches(run: Run, name: str, fingerprint: str, tasks: list[str], options: dict, version: str | None,
             data: DataRoot) -> bool:
    manifest = run.manifest
    encoder = manifest.get("encoder") or {}
    recorded = manifest.get("tasks") or {}
    if (run.kind != "eval" or encoder.get("name") != name or encoder.get("fingerprint") != fingerprint
            or manifest.get("options") != options or (manifest.get("packages") or {}).get("benchbox") != version
            or not isinstance(recorded, dict) or not set(tasks) <= set(recorded)):
        return False
    if not set(tasks) <= set(run.metrics["task"]):
        return False
    for task in tasks:
        run.items(task)  # checks the per-item table against the manifest
        if not data_unchanged((recorded[task] or {}).get("data_checksums") or {}, data):
            return False
    return True


def find_reusable_run(
    runs_dir: str | os.PathLike,
    *,
    name: str,
    fingerprint: str,
    tasks: list[str],
    options: TaskOptions,
    data: DataRoot,
) -> Run | None:
    """The newest run under ``runs_dir`` that gives what evaluating encoder ``name`` with ``fingerprint`` on
    ``tasks`` under ``options`` and ``data`` would (see the module docstring), or None. Unreadable or altered
    runs are passed over, never reused."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return None
    wanted = recorded_options(options)
    version = package_versions().get("benchbox")
    folders = sorted((p for p in runs_dir.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file()),
                     key=lambda p: p.name, reverse=True)
    for folder in folders:
        try:
            run = Run.open(folder)
            if _matches(run, name, fingerprint, tasks, wanted, version, data):
                return run
        except (BenchboxError, OSError):
            continue
    return None

"""Find an evaluation run that already holds what an on-demand evaluation would compute.

``benchbox compare`` evaluates encoder names and trained-model folders on demand; rather than writing a
duplicate run each time, it reuses an evaluation run under ``--runs-dir`` that would give identical numbers
(re-running the same encoder × task × protocol × data must give identical numbers). A run is reused only
when its whole identity (:mod:`benchbox.storage.identity`) matches the one asked for:

- it is an intact evaluation run (``"kind": "eval"``; its metric and per-item tables match their checksums);
- its encoder record is equal: name, fingerprint (weights and configuration), width, class, providing
  distribution and version, every option (given and defaulted), seed;
- it recorded every requested task, with rows of each in its metrics, and for each the same implementation
  (class, provider and version, the task's declared ``version``) and option values;
- for each task, what decides how two runs' rows pair: its ``item_keys`` and each metric's kind of paired test
  (as its recorded metadata holds them), so a run written before a task fixed them is not reused;
- its evaluation options (the protocol switches: ``--text``, ``--fix-stsb-labels``, features, retrieval
  conventions, seed, bootstrap, ...) are equal to the ones asked for;
- it was written by the same benchbox version (the task implementations are part of the package);
- every data file each requested task read still has the sha256 recorded then (the file the data root
  would give now, embedded fallback included; a file of the task's package folder, such as a task file
  included with ``--include``, by content alone, wherever it is: :func:`data_unchanged`).

Of several such runs the newest (by run id, which starts with its UTC time) is taken. When the newest run of
the same encoder name is passed over, one log line says which field differs.
"""

from __future__ import annotations

import os
from pathlib import Path

from collections.abc import Callable
from typing import Any

from benchbox.data.root import EMBEDDED_PREFIX, DataRoot
from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import to_jsonable
from benchbox.storage.identity import describe_difference, differences, task_record
from benchbox.storage.provenance import package_versions
from benchbox.storage.runs import MANIFEST, Run
from benchbox.task_contract.protocol import DataFile, Task, locate_file
from benchbox.task_contract.options import TaskOptions, option_values


def recorded_options(options: TaskOptions) -> dict:
    """``options`` as a run manifest stores them."""
    return to_jsonable(options.recorded())


def data_unchanged(checksums: dict[str, str], data: DataRoot, task: Task) -> bool:
    """True when ``task`` reads the same data now as the run recorded (``{label: sha256}``,
    :meth:`DataRoot.label`), by content: a data-root file is where the data root finds it now (embedded fallback
    included) with the same sha256; a file of a package folder (a task file included with ``--include``,
    recorded by its resolved path, or by a path relative to the folder the run was made in before) has the sha256
    of one of the files the task reads from its package folder now — so a moved or relatively named copy of the
    same file is the same data, and an edited one is not; a task without package files that reads a file outside
    the data root (the hypernym task's WordNet, labelled by its absolute path, which the task's options name) reads
    the same data while that file is there with the same sha256."""
    packaged: set[str] | None = None
    for label, sha256 in checksums.items():
        relpath = label.removeprefix(EMBEDDED_PREFIX)
        found = None if Path(relpath).is_absolute() else data.locate(relpath)
        if found is not None and data.checksum(found) == sha256:
            continue
        if packaged is None:
            packaged = package_checksums(task, data)
        if sha256 in packaged:
            continue
        outside = Path(relpath)
        if not (outside.is_absolute() and not _reads_package_files(task) and outside.is_file()
                and data.checksum(outside) == sha256):
            return False
    return True


def _reads_package_files(task: Task) -> bool:
    return any(isinstance(f, DataFile) and f.package_dir is not None for f in task.data_files)


def package_checksums(task: Task, data: DataRoot) -> set[str]:
    """The sha256 of every file ``task`` reads from a package folder (:class:`benchbox.task_contract.protocol.DataFile` with a
    ``package_dir``); none when one is missing or altered (the evaluation would refuse it)."""
    try:
        return {data.checksum(locate_file(data, f)) for f in task.data_files
                if isinstance(f, DataFile) and f.package_dir is not None}
    except BenchboxError:
        return set()


def wanted_identity(encoder: dict[str, Any], tasks: list[Task], options: TaskOptions) -> dict[str, Any]:
    """The identity an evaluation of the encoder recorded as ``encoder``
    (:func:`benchbox.storage.identity.encoder_record`) on ``tasks`` under ``options`` would record."""
    return {"encoder": encoder, "options": recorded_options(options),
            "benchbox": package_versions().get("benchbox"),
            "tasks": {task.name: {"implementation": task_record(task),
                                  "options": to_jsonable(option_values(task, options)),
                                  "pairing": pairing(task.recorded_metadata())}
                      for task in tasks}}


def pairing(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """What decides how two runs' rows of a task pair, from its recorded metadata
    (:meth:`~benchbox.task_contract.protocol.Task.recorded_metadata`): the item keys and each metric's kind."""
    metadata = metadata if isinstance(metadata, dict) else {}
    metrics = metadata.get("metrics") if isinstance(metadata.get("metrics"), list) else []
    return {"item_keys": metadata.get("item_keys"),
            "kinds": {m.get("name"): m.get("kind") for m in metrics if isinstance(m, dict)}}


def recorded_identity(run: Run, tasks: list[str]) -> dict[str, Any]:
    """The same of a run that recorded ``tasks`` (:func:`wanted_identity`)."""
    record = run.record
    return {"encoder": record.encoder.record, "options": record.options, "benchbox": record.benchbox_version,
            "tasks": {task: {"implementation": record.tasks[task].implementation,
                             "options": record.tasks[task].options,
                             "pairing": pairing(record.tasks[task].metadata)} for task in tasks}}


def _why_not(run: Run, task_objs: list[Task], wanted: dict[str, Any], data: DataRoot) -> str | None:
    """None when ``run`` can be reused, else the reason (the first fields that differ)."""
    tasks = [task.name for task in task_objs]
    if run.kind != "eval":
        return f"a {run.kind} run"
    missing = [t for t in tasks if t not in run.record.tasks or t not in set(run.metrics["task"])]
    if missing:
        return f"it lacks the task(s) {', '.join(missing)}"
    found = differences(recorded_identity(run, tasks), wanted)
    if found:
        return f"{describe_difference(found)} differ(s)"
    for task in task_objs:
        run.items(task.name)  # checks the per-item table against the manifest
        if not data_unchanged(run.record.tasks[task.name].data_checksums, data, task):
            return f"the data files of {task.name} changed since it was written"
    return None


def find_reusable_run(
    runs_dir: str | os.PathLike,
    *,
    encoder: dict[str, Any],
    tasks: list[Task],
    options: TaskOptions,
    data: DataRoot,
    log: Callable[[str], None] = lambda message: None,
) -> Run | None:
    """The newest run under ``runs_dir`` that gives what evaluating the encoder recorded as ``encoder`` (its
    :func:`~benchbox.storage.identity.encoder_record`, which may be known without loading it) on ``tasks`` under
    ``options`` and ``data`` would (see the module docstring), or None. Unreadable or altered runs are passed over, never
    reused; when the newest run of the encoder's name is passed over, ``log`` says why, in one line."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return None
    wanted = wanted_identity(encoder, tasks, options)
    folders = sorted((p for p in runs_dir.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file()),
                     key=lambda p: p.name, reverse=True)
    said = False
    for folder in folders:
        try:
            run = Run.open(folder)
            if run.record.encoder.name != encoder["name"]:
                continue
            reason = _why_not(run, tasks, wanted, data)
        except (BenchboxError, OSError):
            continue
        if reason is None:
            return run
        if not said:
            log(f"not reusing run {run.path} for {encoder['name']}: {reason}")
            said = True
    return None

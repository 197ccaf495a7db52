"""What the cells of a study will open, checked before the first one starts: a failure is one line naming the
study file and the key, never a cell failing after others ran.

- :func:`check_opens` (every study): each ``run`` folder holds every task studied (its manifest and its metrics
  rows), and each image folder a retrieval task will read exists: the task flag ``images``, else, when an
  encoder embeds image files itself (a :class:`~benchbox.encoding.protocol.VisionLanguageEncoder`), the dataset's folder
  under the data root (:func:`benchbox.data.image_files.image_folders`, the lookup the task makes);
- :func:`build_encoders` (``benchbox study --check``): each encoder evaluated as it is, built with its options
  as its cell's ``benchbox eval`` builds it, so that what the encoder's constructor refuses (an option value out
  of its range, ``dim = -3``; a ``clip`` model folder that does not exist) is found. It loads the weights, so
  it runs only when asked; a trained encoder is built by its cell, after its training.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbox.errors import BenchboxError

if TYPE_CHECKING:
    from benchbox.data.root import DataRoot
    from benchbox.study.schema import StudyFile

#: the task option that names an image folder (:data:`benchbox.tasks.retrieval.IMAGES`)
IMAGES = "images"


def check_opens(path: Path, spec: StudyFile, runs: list[Path | None], targets: list[Any], tasks: list[Any],
                values: dict[str, dict[str, Any]], data: DataRoot) -> None:
    """The run folders' tasks and the image folders (module docstring); ``runs``: per ``[[encoder]]``, the run
    folder it names (None: an encoder)."""
    names = [task.name for task in tasks]
    for i, (entry, run) in enumerate(zip(spec.encoder, runs), 1):
        if run is not None:
            _run_has_tasks(path, f"[[encoder]] {i} run = {entry.run!r}", run, names)
    _image_folders(path, targets, tasks, values, data)


def _run_has_tasks(path: Path, where: str, folder: Path, tasks: list[str]) -> None:
    from benchbox.storage.runs import Run

    try:
        run = Run.open(folder)
        has = set(run.record.tasks) & set(run.metrics["task"])
    except (BenchboxError, OSError) as exc:
        raise BenchboxError(f"{path}: {where}: {folder} cannot be read ({exc})") from None
    missing = [t for t in tasks if t not in has]
    if missing:
        raise BenchboxError(f"{path}: {where}: {folder} lacks the task(s) {', '.join(missing)} of [study] tasks (it "
                            f"has {', '.join(sorted(has)) or 'none'}): evaluate them into a run of that model and "
                            "name that run, or study fewer tasks")


def _image_folders(path: Path, targets: list[Any], tasks: list[Any], values: dict[str, dict[str, Any]],
                   data: DataRoot) -> None:
    from benchbox.data.image_files import image_folders
    from benchbox.encoding.protocol import VisionLanguageEncoder

    embeds_images = any(isinstance(t, type) and issubclass(t, VisionLanguageEncoder) for t in targets)
    for task in tasks:
        if IMAGES not in values[task.name] or not hasattr(task, "dataset"):
            continue
        given = values[task.name][IMAGES]
        if given is None and not embeds_images:
            continue
        try:
            image_folders(data, task.dataset, given)
        except BenchboxError as exc:
            key = f"[study] {IMAGES} = {given!r}" if given is not None else "[study] tasks"
            raise BenchboxError(f"{path}: {key}: {task.name}: {exc}") from None


def build_encoders(path: Path, spec: StudyFile, seed_options: list[str | None]) -> None:
    """Build each encoder evaluated as it is, with its options (and its first seed), as its cell will; what the
    construction refuses is one line naming the ``[[encoder]]`` table (module docstring)."""
    from benchbox.encoding.loading import load_encoder

    for i, (entry, seed_option) in enumerate(zip(spec.encoder, seed_options), 1):
        if entry.name is None or entry.train is not None:
            continue
        options = {key.replace("-", "_"): value for key, value in entry.options.items()}
        if seed_option is not None and entry.seeds:
            options[seed_option] = entry.seeds[0]
        try:
            load_encoder(entry.name, **options)
        except BenchboxError as exc:
            raise BenchboxError(f"{path}: [[encoder]] {i} options: {exc}") from None

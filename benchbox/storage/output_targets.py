"""Output targets never land inside benchbox's results: one rule for every output option (issue #40).

benchbox keeps three kinds of results folder, each known by the file it holds:

* a **run folder** (``manifest.json``: :mod:`benchbox.storage.runs`, evaluation and training runs alike);
* a **study folder** (:data:`STUDY_LOCK`, which a study takes before its first cell and leaves behind);
* the **embedding cache** (its marker ``.benchbox-cache``: :mod:`benchbox.storage.cache`).

A target of any output option (``--json``, ``--csv``, ``--out``, ``--runs-dir``, ``--cache-dir``) is refused in
one line, before any work, when it lies inside one of them, unless that folder is the command's own output
(``holds``: ``train --out RUN --resume`` writes into its run folder, ``study --out`` into its study folder,
``--cache-dir`` into its cache). Symbolic links are followed first (:func:`os.path.realpath`), so a link cannot
lead a write into a run. Without the rule ``compare --json RUN/manifest.json`` replaced a run's manifest with
a comparison (exit 0): the run was lost and the next ``leaderboard`` over its folder ended in ``KeyError``.

A study's cells are the study's own output: ``STUDY/cells/CELL/runs`` and ``STUDY/cells/CELL/train`` (where
:func:`benchbox.study.run.cell_commands` sends ``eval --runs-dir`` and ``train --out``) may be written; every
other path inside a study folder (its comparison, report, cell markers and logs) may not.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchbox.errors import BenchboxError

#: the lock a running study holds in its folder (:func:`benchbox.storage.outdir.output_lock`); it stays there
STUDY_LOCK = ".study.lock"
RUN, STUDY, CACHE = "run folder", "study folder", "embedding cache"
#: the folders of a study cell its own commands write (:func:`benchbox.study.run.cell_commands`)
CELL_OUTPUTS = ("runs", "train")


def results_kind(folder: Path) -> str | None:
    """Which results folder ``folder`` is (:data:`RUN`, :data:`STUDY`, :data:`CACHE`), or None; a folder this
    process may not look into is none (writing there fails on its own, naming the folder)."""
    from benchbox.storage.cache import MARKER
    from benchbox.storage.runs import MANIFEST

    for name, kind in ((MANIFEST, RUN), (STUDY_LOCK, STUDY), (MARKER, CACHE)):
        try:
            if (folder / name).is_file():
                return kind
        except OSError:  # permission denied on the way
            return None
    return None


def _in_a_cell(target: Path, study: Path) -> bool:
    """Whether ``target`` is, or lies inside, ``STUDY/cells/CELL/runs`` or ``STUDY/cells/CELL/train``."""
    parts = target.relative_to(study).parts
    return len(parts) >= 3 and parts[0] == "cells" and parts[2] in CELL_OUTPUTS


def check_outside_results(target: str | os.PathLike, option: str, *, folder: bool = False,
                          holds: str | None = None) -> None:
    """Refuse, in one line, a target inside a run folder, a study folder or the embedding cache (module
    docstring). ``folder``: the target is a folder the command writes into (itself checked too), else a file
    (its folder and those above); ``holds``: the kind of results folder the target itself may be, the
    command's own (:data:`RUN`, :data:`STUDY`, :data:`CACHE`)."""
    path = Path(os.path.realpath(target))
    for container in ([path] if folder else []) + list(path.parents):
        kind = results_kind(container)
        if kind is None or (container == path and kind == holds):
            continue
        if kind == STUDY and _in_a_cell(path, container):
            continue
        shown = target if path == Path(os.path.abspath(target)) else f"{target} (a link to {path})"
        inside = "is" if container == path else "lies inside"
        raise BenchboxError(f"{option} {shown} {inside} the {kind} {container}: benchbox never writes into the "
                            f"results of another command; pass a path outside it")

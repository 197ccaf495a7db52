"""Which cells of a study are reused and which are run, when the study starts (:func:`plan`).

A cell is its identity (:mod:`benchbox.study.keys`): it is reused when its folder holds a finished run of its key
whose data files still have the checksums the run recorded (:func:`benchbox.reuse.data_unchanged`, the check
``compare`` makes before reusing a run); any other cell is run, with one line naming the fields that changed since
the finished cell it replaces. The finished cells the file no longer declares are left out of the comparison,
said in one line on the first run that leaves them out (:data:`LAST_CELLS`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import write_json
from benchbox.study.cells import DONE, cell_folder, read_done, wipe
from benchbox.study.keys import changes

if TYPE_CHECKING:
    from benchbox.study.progress import Progress
    from benchbox.study.run import Cell, Study

#: the cells of the study's last run, in the study folder: a cell the file no longer declares is said once
LAST_CELLS = "cells.json"


def plan(study: Study, log: Callable[[str], None],
         progress: Progress) -> tuple[dict[str, str], list[str], list[Cell]]:
    """Which cells are reused and which are run (module docstring): a cell is reused when its folder holds a
    finished run of its key whose data files are unchanged; any other is wiped and run, with one line saying what
    changed since the cell it replaces (:func:`_replaced`). The finished cells no
    longer in the file (replaced or removed) are left out of the comparison, said in one line when they were in
    the last run; their folders stay, so that undoing an edit finds them again. Returns the finished runs by cell, the cells skipped and the
    cells to run."""
    from benchbox.data.root import DataRoot

    finished: dict[str, str] = {}
    skipped, todo = [], []
    earlier, used = _earlier_cells(study), set()
    data = DataRoot(study.data_dir)
    for cell in study.cells:
        if cell.run is not None:
            finished[cell.name] = cell.run
            skipped.append(cell.name)
            continue
        folder = cell_folder(study.out, cell.name)
        record, problem = read_done(folder)
        if record is not None:
            problem = _stale(record, cell, data)
            record = None if problem else record
        if problem:
            log(f"cell {cell.name}: {problem}; it is run again")
        if record:
            finished[cell.name] = record["run"]
            skipped.append(cell.name)
            progress.finished(record.get("seconds"))
            continue
        replaced = _replaced(cell, earlier, used)
        if replaced is not None:
            used.add(replaced)
            log(f"cell {cell.name} ([[encoder]] {cell.entry}) is run: {changes(earlier[replaced]['key'], cell.key)}"
                f" since cell {replaced}")
        wipe(folder)  # what an interrupted or failed attempt left; the cell starts again from nothing
        todo.append(cell)
    dropped = sorted(set(earlier) & _last_cells(study.out))
    if dropped:
        log(f"{len(dropped)} finished cell(s) of the last run no longer in {study.path}, left out of the comparison: "
            f"{', '.join(dropped)} (their folders stay in {study.out / 'cells'})")
    write_json(study.out / LAST_CELLS, [cell.name for cell in study.cells])
    return finished, skipped, todo


def _last_cells(out: Path) -> set[str]:
    """The cells of the study's last run (:data:`LAST_CELLS`); unreadable or absent (a study folder of an older
    benchbox): every cell folder, so that none is left out unsaid."""
    try:
        names = json.loads((out / LAST_CELLS).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        names = None
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return set(names)
    cells = out / "cells"
    return {folder.name for folder in cells.iterdir()} if cells.is_dir() else set()


def _earlier_cells(study: Study) -> dict[str, dict[str, Any]]:
    """The finished cells in the study folder that the file no longer declares, by folder name."""
    names = {cell.name for cell in study.cells}
    found = {}
    cells = study.out / "cells"
    for folder in sorted(cells.iterdir()) if cells.is_dir() else []:
        if folder.name not in names and folder.is_dir() and not folder.is_symlink():
            record, _ = read_done(folder)
            if record is not None:
                found[folder.name] = {**record, "finished": (folder / DONE).stat().st_mtime_ns}
    return found


def _stale(record: dict[str, Any], cell: Cell, data: Any) -> str | None:
    """Why a finished cell cannot be reused (its record is of another key, or a data file its run read changed),
    else None."""
    from benchbox.reuse import data_unchanged
    from benchbox.storage.runs import Run
    from benchbox.task_contract.protocol import resolve_tasks

    if record.get("key") != cell.key:
        return (f"its {DONE} records another identity ({changes(record['key'], cell.key)})"
                if isinstance(record.get("key"), dict) else f"its {DONE} records no identity (an older study)")
    try:
        tasks = Run.open(Path(record["run"])).record.tasks
        now = {task.name: task for task in resolve_tasks(list(tasks))}
    except (BenchboxError, OSError) as exc:
        return f"its run cannot be read ({exc})"
    changed = [name for name, task in tasks.items() if not data_unchanged(task.data_checksums, data, now[name])]
    return f"the data files of {', '.join(changed)} changed since it ran" if changed else None


def _replaced(cell: Cell, earlier: dict[str, dict[str, Any]], used: set[str]) -> str | None:
    """The earlier cell (a key of ``earlier``, not in ``used``) that ``cell`` takes the place of: of the same
    encoder and seed (at the same position first, then the newest), else at the same position with the same seed;
    None when there is none."""
    keyed = sorted((n for n, r in earlier.items() if isinstance(r.get("key"), dict) and n not in used),
                   key=lambda n: (earlier[n].get("entry") != cell.entry, -earlier[n]["finished"]))
    same = [n for n in keyed if earlier[n].get("encoder") == cell.encoder and earlier[n].get("seed") == cell.seed]
    same = same or [n for n in keyed if earlier[n].get("entry") == cell.entry and earlier[n].get("seed") == cell.seed]
    return same[0] if same else None

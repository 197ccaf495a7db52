"""Tasks declared in a TOML file and loaded with ``benchbox --include TASKS.toml`` (or
:func:`benchbox.include.include_file`), or shipped in a package through the ``benchbox.tasks`` entry point group
as ``NAME = "PACKAGE:FILE.toml"`` (:func:`packaged_task`): data plus metadata, no code (docs/plugins.md). Each ``[[task]]`` table names a base of :mod:`benchbox.tasks.bases` and its data files::

    [[task]]
    name = "my-paraphrase"
    base = "pair-classification"       # pair-correlation, pair-classification, retrieval or classification
    data = ["pairs.tsv"]               # relative to this file; retrieval: queries, then documents
    columns = { gold = "label" }       # the base's column name = the file's
    delimiter = "tab"                  # or "comma"; default: detected from the header line
    description = "paraphrase pairs of my corpus, ROC AUC of the cosine"
    license = "CC-BY-4.0"
    citation = "@misc{mine, title = {My pairs}, year = {2026}}"

The data files are recorded with the sha256 they have when the file is loaded, and checked when the task reads
them, as the bases read them (:mod:`benchbox.tasks.table_files`). Every problem is one line naming the file and
the task; an unknown key lists the keys a ``[[task]]`` table takes.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from benchbox.errors import BenchboxError
from benchbox.suggest import close_to
from benchbox.task_contract.protocol import DataFile, Task
from benchbox.tasks.bases import PairClassificationTask, PairCorrelationTask, ProbeClassificationTask, RetrievalTask
from benchbox.tasks.table_files import DELIMITERS, check_column_names

#: the bases a declared task may name
BASES: dict[str, type[Task]] = {"pair-correlation": PairCorrelationTask, "pair-classification": PairClassificationTask,
                                "retrieval": RetrievalTask, "classification": ProbeClassificationTask}


class DeclaredTask(BaseModel):
    """One ``[[task]]`` table."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[StrictStr, Field(min_length=1, pattern=r"^[^:\s]+$")]
    base: Literal["pair-correlation", "pair-classification", "retrieval", "classification"]
    data: Annotated[list[StrictStr], Field(min_length=1)]
    columns: dict[StrictStr, StrictStr] = {}
    delimiter: Literal[tuple(DELIMITERS)] | None = None
    description: StrictStr = ""
    license: StrictStr = ""
    citation: StrictStr = ""
    reference: StrictStr = ""
    group: StrictStr | None = None
    order: StrictInt | None = None
    version: StrictStr = "1"


class TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    task: Annotated[list[DeclaredTask], Field(min_length=1)]


def load_task_file(path: Path) -> list[type[Task]]:
    """The task classes a TOML file declares (module docstring)."""
    try:
        declared = TaskFile.model_validate(tomllib.loads(path.read_bytes().decode("utf-8"))).task
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BenchboxError(f"{path}: not a readable UTF-8 TOML task file: {exc}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            raise BenchboxError(f"{path}: {_unknown_key(error['loc'])}") from None
        raise BenchboxError(f"{path}: {where}: {error['msg']}") from None
    names = [entry.name for entry in declared]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        tables = [str(i + 1) for i, name in enumerate(names) if name == twice]
        raise BenchboxError(f"{path}: [[task]] tables {' and '.join(tables)} are both named {twice!r}: give each "
                            "task its own name")
    return [_task_class(path, entry) for entry in declared]


def packaged_task(package: str, file: str, name: str) -> type[Task]:
    """Task ``name`` of the TOML file ``file`` in the folder of the installed package ``package``: what an entry
    point ``NAME = "PACKAGE:FILE.toml"`` of the ``benchbox.tasks`` group registers (docs/plugins.md)."""
    import importlib

    folder = Path(importlib.import_module(package).__file__).parent
    tasks = {task.name: task for task in load_task_file(folder / file)}
    if name not in tasks:
        raise BenchboxError(f"{folder / file} declares no task {name!r} (it declares {', '.join(tasks)}): name the "
                            "entry point after a [[task]] of the file")
    return tasks[name]


def _unknown_key(loc: tuple) -> str:
    """An unknown key at ``loc`` (``("task", 0, "colums")``), with the keys its table takes."""
    key = str(loc[-1])
    table, where = (DeclaredTask, f"[[task]] {loc[1] + 1}") if len(loc) == 3 else (TaskFile, "the file")
    keys = list(table.model_fields)
    close = close_to(key, keys)
    return (f"unknown key {key!r} in {where}{f' (did you mean {close!r}?)' if close else ''}; the keys of "
            f"{'a [[task]] table' if table is DeclaredTask else 'the file'}: {', '.join(keys)}")


def _task_class(path: Path, entry: DeclaredTask) -> type[Task]:
    base = BASES[entry.base]
    if len(entry.data) != base.tables:
        raise BenchboxError(f"{path}: task {entry.name}: a {entry.base} task reads {base.tables} data file(s), "
                            f"data names {len(entry.data)}")
    files = []
    for name in entry.data:
        data = path.parent / name
        if not data.is_file():
            raise BenchboxError(f"{path}: task {entry.name}: data file {name} not found beside it ({data})")
        files.append(DataFile(name, sha256=hashlib.sha256(data.read_bytes()).hexdigest(), package_dir=path.parent))
    try:
        check_column_names(entry.columns, base.column_names(), entry.name)
    except BenchboxError as exc:
        raise BenchboxError(f"{path}: {exc}") from None
    attributes = {"name": entry.name, "description": entry.description, "data_files": tuple(files),
                  "columns": dict(entry.columns), "delimiter": entry.delimiter, "license": entry.license,
                  "citation": entry.citation,
                  "reference": entry.reference or f"declared in {path.name}", "version": entry.version,
                  "__module__": __name__}
    attributes.update({key: value for key, value in (("group", entry.group), ("order", entry.order))
                       if value is not None})
    return type(f"Declared_{entry.name.replace('-', '_')}", (base,), attributes)

"""``benchbox --include FILE``: encoders and tasks that are not part of any installed package, for this command.

- ``FILE.py``: a Python file, imported, so that the encoders and tasks it registers (``ENCODERS.register(...)``,
  ``TASKS.register(...)``, provider ``local``) or defines (usable as ``module:attribute`` under the module name
  ``FILE``'s stem) exist;
- ``FILE.toml``: tasks declared as data and metadata on the task bases (:mod:`benchbox.tasks.declarative`),
  registered under their names (provider ``local``).

A Python file runs once per process, as a module named after its stem (``my_encoders.py`` → ``my_encoders``),
which must not shadow an importable module. Its folder is not added to ``sys.path``. :data:`INCLUDED` lists the
files this process included, so that the commands a study runs for its cells include them too.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from benchbox.errors import BenchboxError
from benchbox.names import check_path_name

#: the files included in this process, in order
INCLUDED: list[Path] = []


def include_file(path: str | os.PathLike) -> None:
    """Import ``path`` as a module named after its stem, or register the tasks a TOML file declares; every failure
    is a one-line :class:`BenchboxError`."""
    path = Path(path)
    if not path.is_file():
        raise BenchboxError(f"--include {path}: no such file; give a .py file that registers encoders or tasks, or a "
                            ".toml file that declares tasks")
    if path.suffix == ".toml":
        _declared_tasks(path)
    elif path.suffix != ".py" or not path.stem.isidentifier():
        raise BenchboxError(f"--include {path}: neither a Python file with an importable name (NAME.py) nor a task "
                            "file (NAME.toml)")
    else:
        _import(path)
    if path.resolve() not in INCLUDED:
        INCLUDED.append(path.resolve())


def _declared_tasks(path: Path) -> None:
    from benchbox.registry import TASKS
    from benchbox.tasks.declarative import load_task_file

    try:
        tasks = load_task_file(path)
    except BenchboxError as exc:
        raise BenchboxError(f"--include {exc}") from None
    for i, task in enumerate(tasks):  # a name becomes a file name in every run: checked as one
        check_path_name(task.name, f"--include {path}: task.{i}.name")
    for task in tasks:
        TASKS.register(task.name, task)


def _import(path: Path) -> ModuleType:
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "") or "").resolve() == path.resolve():
            return loaded
        raise BenchboxError(f"--include {path}: a module named {name!r} is already imported "
                            f"({getattr(loaded, '__file__', 'built in')}); rename the file")
    found = importlib.util.find_spec(name)
    if found is not None and Path(found.origin or "").resolve() != path.resolve():
        raise BenchboxError(f"--include {path}: its name {name!r} would shadow the module {found.origin}; "
                            "rename the file")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the file's own code: any error, or an exit, becomes one line
        del sys.modules[name]
        if isinstance(exc, BenchboxError):
            raise BenchboxError(f"--include {path}: {exc}") from exc
        if isinstance(exc, SystemExit):
            raise BenchboxError(f"--include {path} called sys.exit({exc.code!r}) while being imported: a file "
                                "that registers plugins must not end the program") from exc
        raise BenchboxError(f"--include {path} failed: {type(exc).__name__}: {exc}") from exc
    return module

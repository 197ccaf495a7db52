"""Names that become paths: one check, run where a name is declared (issue #40).

A task's name is a file name in every run (``items/NAME.csv``: :mod:`benchbox.storage.runs`), so a name is one
path component: not empty, no separator (``/``, or ``\\`` which Windows reads as one), not ``.`` or ``..``, no
NUL byte. An absolute path holds a separator, so it is refused too. Without the check a declared task named
``../../../victim`` wrote its per-item table to ``./victim.csv``, outside the run folder, over a user's file.
"""

from __future__ import annotations

from benchbox.errors import BenchboxError

#: characters a path name may not hold
SEPARATORS = ("/", "\\", "\0")


def check_path_name(name: object, where: str) -> str:
    """``name`` if it is one path component (module docstring), else a one-line :class:`BenchboxError` that
    starts with ``where`` (the file and key that declare it)."""
    if not isinstance(name, str) or not name or name in (".", "..") or any(s in name for s in SEPARATORS):
        raise BenchboxError(f"{where}: {name!r} is not a name: it becomes a file name in every run, so it must be "
                            "one path component (not empty, no '/' or '\\', not '.' or '..')")
    return name

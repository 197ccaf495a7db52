"""Output folders: checked writable before any work, and locked while a command writes into them.

``check_writable(folder)`` creates the folder and writes (then removes) a probe file in it, so a read-only or
unwritable ``--runs-dir``/``--out`` fails in the first second, not after an hour of evaluation or training.
``output_lock(folder)`` also holds an OS file lock (``fcntl``/``msvcrt`` through the ``filelock`` package) on
``<folder>/.benchbox.lock`` while the command runs: a second command writing into the same folder stops at
once with one line, instead of mixing two runs' files (two trainings into one ``--out`` once left a manifest
of one seed beside the weights of another). The OS drops the lock when the process exits, however it exits
(a crash or ``kill -9`` included), so a stale lock file never blocks the next run.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchbox.storage.atomic import written_in_place
from benchbox.errors import BenchboxError

LOCK_FILE = ".benchbox.lock"


def check_writable(folder: str | os.PathLike, option: str = "--out") -> Path:
    """Create ``folder`` if needed and prove it writable by writing a probe file; else a one-line error."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".benchbox-probe-"):
            pass
    except OSError as exc:
        raise BenchboxError(
            f"cannot write into {folder} ({exc.strerror or exc}): pass a writable folder as {option}"
        ) from None
    return folder


def check_could_write(folder: str | os.PathLike, option: str = "--out") -> Path:
    """:func:`check_writable` for a command that only checks (``study --check``), leaving nothing behind: the
    folders it had to create are removed again, deepest first."""
    folder = Path(folder)
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        return check_writable(folder, option)
    finally:
        for path in created:
            with contextlib.suppress(OSError):
                path.rmdir()


def check_output_file(path: str | os.PathLike | None, option: str) -> None:
    """An output file named by ``option`` (``--json``, ``--csv``), checked before any work: its folder exists
    and is writable, and it is not itself a folder; else a one-line error. ``-`` (standard output) and None
    (option not given) pass."""
    if path is None or os.fspath(path) == "-":
        return
    path = Path(path)
    if path.is_dir():
        raise BenchboxError(f"{option} {path} is a folder: pass a file name (or - for standard output)")
    if written_in_place(path):  # a device or FIFO is written directly (benchbox.storage.atomic): no folder to probe
        return
    if path.is_symlink():  # the file the link names is written, in its own folder
        path = Path(os.path.realpath(path))
    folder = path.parent
    if not folder.is_dir():
        raise BenchboxError(f"{option} {path}: the folder {folder} does not exist; create it or pass another path")
    check_writable(folder, option)


@contextmanager
def output_lock(folder: str | os.PathLike, option: str = "--out", *, name: str = LOCK_FILE,
                remove: bool = False) -> Iterator[Path]:
    """Check ``folder`` writable and hold its lock ``folder/name`` for the ``with`` block; another holder is
    an error. One output file among others in a folder gets a lock of its own (:func:`output_file_lock`);
    ``remove``: the lock file is deleted at the end of the block (while still held, so that a process that
    opens it then finds it locked and stops), leaving nothing beside the user's file."""
    from filelock import FileLock, Timeout

    folder = check_writable(folder, option)
    lock = FileLock(folder / name)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise BenchboxError(
            f"another benchbox process is writing into {folder} (it holds {folder / name}): wait for it to "
            f"finish or pass another {option}"
        ) from None
    try:
        yield folder
    finally:
        if remove:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
        lock.release()


def output_file_lock(path: str | os.PathLike, option: str = "--out") -> contextlib.AbstractContextManager[Path]:
    """The lock of one output file (and what is written beside it): ``.<name>.lock`` in its folder while the
    file is written, removed afterwards (an empty lock file stayed beside every report)."""
    path = Path(path)
    return output_lock(path.parent, option, name=f".{path.name}.lock", remove=True)

"""A study cell's folder, its state markers and the processes that run it.

Each cell lives in ``<out>/cells/<name>/``. Its name is sanitised (:func:`safe_name`) and :func:`cell_folder`
refuses any folder that would not sit directly inside ``<out>/cells``, so no study file can make a wipe touch
anything else (a name like ``x/../../../victim`` once made a resume delete ``./victim``).

The folder says how far the cell got, for the live table and for ``benchbox study --status`` from another shell
(:func:`cell_state`): ``stage.json`` (training or evaluating, since when, on which host and process), then
``done.json`` (written last, atomically: the cell is finished and never redone) or ``failed.json``.

Every ``benchbox`` command of a cell runs in its own session (a process group of its own), so that stopping a
cell stops its children too: :class:`Processes` sends the group SIGTERM, then SIGKILL after
:data:`GRACE_SECONDS`. On Linux the command is also told to die with the thread that started it
(``PR_SET_PDEATHSIG``): a study or a Ray worker killed outright leaves no orphaned ``benchbox eval`` writing into
a cell that the resume (or Ray's retry) is about to start again.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.storage.jsonio import write_json
from benchbox.storage.output_targets import STUDY_LOCK
from benchbox.storage.runs import MANIFEST

DONE = "done.json"
FAILED = "failed.json"
STAGE = "stage.json"
LOG = "log.txt"
#: seconds a stopped cell's processes get between SIGTERM and SIGKILL
GRACE_SECONDS = 5.0
#: what a cell folder's name may hold
SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")


class CellStopped(Exception):
    """The cell was stopped (the study was interrupted): it is neither done nor failed, and is redone on resume."""


class CellFailed(Exception):
    """A command of the cell failed; the message says which and how."""


def safe_name(text: str) -> str:
    """``text`` as a folder name: runs of anything but letters, digits, ``.``, ``_`` and ``-`` become one ``-``,
    so do runs of dots and dashes (``..`` never survives); no leading or trailing dot or dash, at most 120
    characters."""
    name = re.sub(r"[-.]{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", text)).strip(".-")[:120].rstrip(".-")
    return name or "cell"


def cell_folder(out: Path, name: str) -> Path:
    """``<out>/cells/<name>``, refusing a name that is not :data:`SAFE` (one path component, never ``.``/``..``).
    A link found there is removed by :func:`wipe`, never followed."""
    if not SAFE.fullmatch(name):
        raise BenchboxError(f"cell name {name!r} would leave {out / 'cells'}: refused")
    return out / "cells" / name


def wipe(folder: Path) -> None:
    """Remove a cell folder before its cell starts again; a link is removed, never followed."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


def read_done(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The cell's ``done.json`` record when it is whole and names an existing run, else None with the reason
    (None when there is no marker at all): a corrupt marker means the cell is redone, not a traceback. The
    marker names its run relative to the study folder (``cells/<cell>/runs/<run>``), so that the study is read
    the same from any working directory; the record returned names it as a path from here."""
    marker = folder / DONE
    if not marker.is_file():
        return None, None
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"its {DONE} is unreadable ({type(exc).__name__})"
    if not isinstance(record, dict) or not isinstance(record.get("run"), str):
        return None, f"its {DONE} names no run"
    run = folder.parent.parent / record["run"]  # <out>/cells/<cell>: the study folder is two levels up
    if not (run / MANIFEST).is_file():
        return None, f"the run its {DONE} names is gone ({record['run']})"
    return {**record, "run": str(run)}, None


def cell_state(folder: Path) -> dict[str, Any]:
    """``{"state": queued|training|evaluating|done|failed, "since": epoch seconds or None, "seconds": the
    duration of a finished cell or None}`` from the markers in the folder."""
    done, _ = read_done(folder)
    if done is not None:
        return {"state": "done", "since": None, "seconds": done.get("seconds")}
    for marker, key in ((FAILED, "failed"), (STAGE, None)):
        try:
            record = json.loads((folder / marker).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(record, dict):
            since = record.get("since")
            return {"state": key or str(record.get("stage", "running")),
                    "since": since if isinstance(since, (int, float)) else None, "seconds": record.get("seconds")}
    return {"state": "queued", "since": None, "seconds": None}


def study_running(out: Path) -> bool:
    """Whether a study holds the lock of the study folder ``out`` now (read-only: the lock is not kept)."""
    from filelock import FileLock, Timeout

    if not (out / STUDY_LOCK).exists():
        return False
    lock = FileLock(out / STUDY_LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def mark_stage(folder: Path, stage: str, started: float) -> None:
    write_json(folder / STAGE, {"stage": stage, "since": started, "stage_since": time.time(),
                                "host": socket.gethostname(), "pid": os.getpid()}, sort_keys=True)


def mark_failed(folder: Path, reason: str, started: float) -> None:
    write_json(folder / FAILED, {"reason": reason, "since": started, "seconds": round(time.time() - started, 1)},
               sort_keys=True)


class Processes:
    """The process groups of the running cells of one study, and the stop that ends them all (local pool).
    ``on_start`` is called once, from the thread that started it, when the first cell's process has started
    (the study's :class:`benchbox.study.warmup.Warmup` begins then, never before a cell)."""

    def __init__(self, on_start: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self._on_start = on_start
        self.stopped = threading.Event()

    def add(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._running.add(process)
        if self.stopped.is_set():  # started while the stop was under way
            terminate(process)
        else:
            self.mark_started()

    def mark_started(self) -> None:
        """A cell has started (a process here, or the study's tasks submitted to Ray): ``on_start``, the first
        time only and not after a stop."""
        with self._lock:
            on_start, self._on_start = self._on_start, None
        if on_start is not None and not self.stopped.is_set():
            on_start()

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._running.discard(process)

    def stop(self) -> None:
        """Stop every running cell: SIGTERM to each process group now, SIGKILL to what is left after
        :data:`GRACE_SECONDS` (from a helper thread: this is called from a signal handler)."""
        self.stopped.set()
        with self._lock:
            running = list(self._running)
        for process in running:
            terminate(process)
        threading.Thread(target=self._kill_later, args=(running,), daemon=True).start()

    @staticmethod
    def _kill_later(processes: list[subprocess.Popen]) -> None:
        deadline = time.monotonic() + GRACE_SECONDS
        for process in processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                terminate(process, signal.SIGKILL)


def terminate(process: subprocess.Popen, signum: int = signal.SIGTERM) -> None:
    """Send ``signum`` to the process group of ``process`` (its own session), if it is still there."""
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


#: the C library's ``prctl``, loaded and looked up before any fork: between fork and exec the child only makes
#: the call and runs no dynamic-loader code (``dlsym``), whose state another thread of the study may have been
#: changing at the fork (the warm-up importing an extension module, :mod:`benchbox.study.warmup`)
_PRCTL = ctypes.CDLL(None).prctl if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL when the thread that started it ends (a killed study or Ray worker)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_command(command: list[str], log: Any, processes: Processes | None, env: dict[str, str] | None = None) -> int:
    """Run one command of a cell in its own session, output to ``log``, in ``env`` (None: this process's); returns
    its exit status. When the wait is interrupted (a Ray task cancelled: KeyboardInterrupt) the group is stopped
    before the exception goes on."""
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=_die_with_parent, env=env)
    if processes is not None:
        processes.add(process)
    try:
        return process.wait()
    except BaseException:
        terminate(process)
        try:
            process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            terminate(process, signal.SIGKILL)
            process.wait()
        raise
    finally:
        if processes is not None:
            processes.discard(process)

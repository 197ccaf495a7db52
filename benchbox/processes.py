"""The start method of every process pool benchbox starts.

A forked child inherits the parent's memory but only the forking thread: any lock another thread held (OpenMP's
and OpenBLAS's thread pools, torch's intra-op pool, a logging handler) stays locked in the child forever, so
``fork`` from a multi-threaded process can deadlock (Python warns of it since 3.12, and 3.14 no longer defaults to
it on Linux). benchbox's parents are multi-threaded as soon as torch or numpy has run, so its pools start their
workers by ``forkserver`` (a clean single-threaded server process forks them; Python 3.14's Linux default) where
the platform has it, else by ``spawn``: the same choice on Python 3.11–3.14. Worker arguments must then be
picklable (no closures).
"""

from __future__ import annotations

import multiprocessing


def safe_start_method() -> str:
    """``"forkserver"`` where the platform offers it (Linux, macOS), else ``"spawn"`` (Windows)."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"

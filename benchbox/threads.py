"""CPU threads for a command's tensor and BLAS work: ``--threads N``, else the cores that are free when it starts.

torch and OpenBLAS start one thread per core of the machine, which ignores the container's CPU quota, the
process's affinity mask and every other process on the machine. Threads beyond the free cores do not add
speed, they take it away: a parallel region ends at a barrier where every thread waits for the slowest, and
on an oversubscribed core the slowest is one the scheduler has put aside for a time slice (milliseconds, for
microseconds of work). Issue #27: a char-GRU step 5× slower with two threads than with one on a busy 2-core
machine; issue #41: ``eval glove-bow --task semantic`` with two other CPU-bound processes on 2 cores, 636 s
wall and 170 s CPU with two threads against 87 s and 9.8 s with one (idle: 8.5 s). Three rules, each
against one part of that collapse:

- **The default count is the free cores** (:func:`default_threads`): the CPUs this process may use
  (:func:`joblib.cpu_count`: the affinity mask and the cgroup v1/v2 CPU quota) less the machine's
  1-minute load average, rounded, at least 1. An idle 2-core machine gets 2, one with another busy process
  gets 1. An ``OMP_NUM_THREADS`` set by the environment (``torchrun`` sets 1 for each of its processes, a
  study sets each cell's) is honoured, and ``--threads N`` wins over both.
- **Waiting threads sleep** (:func:`prepare_environment`, run by the command line before torch or
  scikit-learn load their OpenMP runtime): ``OMP_WAIT_POLICY=PASSIVE``, unless the environment sets a
  policy. GNU OpenMP's default lets a thread with nothing to do spin for a while before it sleeps; on a
  machine whose load rises after the start (the count above cannot see it), those spinning threads burn
  the cores the working threads and the other processes need (the 170 s of CPU for 9.8 s of work).
- **SentEval's probes and relatedness regressor run on one thread** (:func:`one_thread`): every step is a
  mini-batch of 64 rows through a linear layer, thousands of steps per fit, far too little work per
  parallel region to pay for its synchronisation, and the whole of a warm ``--task semantic`` run.

The measurement (``benchmarks/bench_busy_threads.py``, docs/benchmarks.md) starts the default and
``--threads 1`` side by side beside two spinning processes. The count in force is recorded in every run
manifest (``provenance.cpu.threads``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


#: how OpenMP's idle threads wait unless the environment says otherwise (see the module docstring)
WAIT_POLICY = "PASSIVE"


def prepare_environment() -> None:
    """Set ``OMP_WAIT_POLICY`` to :data:`WAIT_POLICY` when the environment has none. OpenMP reads it once,
    when its runtime loads (with torch or scikit-learn), so the command line calls this before any command
    imports them; child processes (a study's cells) inherit it."""
    os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)


def default_threads(cpus: int, load: float) -> int:
    """The cores free for this process: ``cpus`` (those it may use) less the 1-minute ``load`` average,
    rounded to the nearest whole core, at least 1 and at most ``cpus``."""
    return max(1, min(cpus, round(cpus - load)))


def cpu_count() -> int:
    """The CPUs this process may use: :func:`joblib.cpu_count` (the affinity mask and the cgroup CPU quota),
    imported here, not at the top: the command line's start imports this module and needs no joblib."""
    from joblib import cpu_count as usable_cpus

    return usable_cpus()


def free_cores() -> int:
    """:func:`default_threads` of this machine now (:func:`cpu_count`, :func:`os.getloadavg`; a system
    without a load average counts as idle)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return default_threads(cpu_count(), load)


def set_threads(threads: int | None = None) -> int:
    """Use ``threads`` CPU threads (None: ``OMP_NUM_THREADS`` when set, else :func:`free_cores`) for torch's
    intra-op pool and the BLAS libraries; returns the count. torch, when not imported yet, reads it from
    ``OMP_NUM_THREADS`` at import."""
    from threadpoolctl import threadpool_limits

    count = threads or _from_environment() or free_cores()
    threadpool_limits(limits=count)
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ["OMP_NUM_THREADS"] = str(count)
    else:
        torch.set_num_threads(count)
    return count


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block on one torch and BLAS thread (small per-step work: SentEval's probes and regressor),
    then restore the counts in force before."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(before)


def threads_in_use() -> int | None:
    """torch's intra-op thread count when torch is imported, else ``OMP_NUM_THREADS`` when set, else None."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else _from_environment()


def _from_environment() -> int | None:
    """``OMP_NUM_THREADS`` when it is a positive integer, else None."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None

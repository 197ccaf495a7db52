"""CPU threads for a command's tensor and BLAS work: ``--threads N``, else the CPUs this process may use.

torch and OpenBLAS start one thread per core of the machine, which ignores the container's CPU quota and the
process's affinity mask; on a busy or quota-limited machine that oversubscribes the cores (issue #27: a
char-GRU encoding step was 5× slower with two threads than with one on a busy 2-core machine). The default
here is joblib's :func:`joblib.cpu_count`, which takes the affinity mask and the cgroup v1/v2 CPU quota into
account; an ``OMP_NUM_THREADS`` set by the environment (``torchrun`` sets 1 for each of its processes) is
honoured. The count in force is recorded in every run manifest (``provenance.cpu.threads``).
"""

from __future__ import annotations

import os
import sys

from joblib import cpu_count
from threadpoolctl import threadpool_limits


def set_threads(threads: int | None = None) -> int:
    """Use ``threads`` CPU threads (None: ``OMP_NUM_THREADS`` when set, else :func:`joblib.cpu_count`) for
    torch's intra-op pool and the BLAS libraries; returns the count. torch, when not imported yet, reads it
    from ``OMP_NUM_THREADS`` at import."""
    count = threads or _from_environment() or cpu_count()
    threadpool_limits(limits=count)
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ["OMP_NUM_THREADS"] = str(count)
    else:
        torch.set_num_threads(count)
    return count


def threads_in_use() -> int | None:
    """torch's intra-op thread count when torch is imported, else ``OMP_NUM_THREADS`` when set, else None."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else _from_environment()


def _from_environment() -> int | None:
    """``OMP_NUM_THREADS`` when it is a positive integer, else None."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None

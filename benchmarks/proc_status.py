"""Memory figures of the running process for the benchmark scripts (Linux ``/proc/self/status``)."""


def status_mb(key: str) -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (peak resident) of this process, in MiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(key)

"""Memory estimates checked before big allocations, so an option that cannot fit fails at once with one line
naming the option value that would fit, instead of an allocation traceback minutes (or terabytes) later.

:func:`require_memory` compares an estimate with the memory available now: on CPU the smaller of the
kernel's ``MemAvailable`` and the cgroup limit (containers) minus its usage; on a CUDA device the free memory
it reports. Estimates are upper bounds measured on the code that allocates (each caller says how); the
check keeps 10% of the available memory as headroom.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchbox.errors import BenchboxError

#: share of the available memory an estimate may use
HEADROOM = 0.9


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_bytes(device: str = "cpu") -> int | None:
    """Bytes available for new allocations on ``device`` (``"cpu"`` or a CUDA device); None if unknown."""
    if str(device).startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    candidates = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                candidates.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    limit, usage = _read_int(Path("/sys/fs/cgroup/memory.max")), _read_int(Path("/sys/fs/cgroup/memory.current"))
    if limit is not None and usage is not None:
        candidates.append(max(limit - usage, 0))
    if not candidates and hasattr(os, "sysconf"):
        try:
            candidates.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError):
            pass
    return min(candidates) if candidates else None


def format_bytes(n: float) -> str:
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    return f"{n:.1f} {units[i]}"


def fits(nbytes: float, device: str = "cpu") -> bool:
    available = available_bytes(device)
    return available is None or nbytes <= HEADROOM * available


def max_units(per_unit: float, device: str = "cpu") -> int | None:
    """How many units of ``per_unit`` bytes fit in the available memory (None if unknown)."""
    available = available_bytes(device)
    return None if available is None else int(HEADROOM * available // max(per_unit, 1))


#: the least memory a resample takes: its statistic, one float64 (the smallest estimate of any resampling here)
MIN_BYTES_PER_RESAMPLE = 8


def require_resamples(option: str, n: int, per_resample: float = MIN_BYTES_PER_RESAMPLE,
                      why: str = "one 8-byte statistic per resample at least") -> None:
    """Refuse ``n`` resamples of ``per_resample`` bytes each that cannot fit, in one line naming ``option`` (the
    option the user set), its limit here and the reason (``why``: what one resample holds)."""
    largest = max_units(per_resample)
    require_memory(n * per_resample, f"{option} {n} ({format_bytes(per_resample)} per resample: {why})",
                   f"use {option} {largest} or fewer")


def require_memory(nbytes: float, what: str, fix: str, device: str = "cpu") -> None:
    """Raise :class:`BenchboxError` if ``what`` (needing about ``nbytes``) cannot fit; ``fix`` says which option
    value would (e.g. ``"use --bootstrap 20000 or fewer"``)."""
    available = available_bytes(device)
    if available is not None and nbytes > HEADROOM * available:
        raise BenchboxError(f"{what} needs about {format_bytes(nbytes)} of memory but {format_bytes(available)} is "
                            f"available{'' if device == 'cpu' else f' on {device}'}: {fix}")

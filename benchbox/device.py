"""Where torch work runs: a ``--device`` value (``auto``, ``cpu``, ``cuda``, ``cuda:N``) resolved to a torch device.

:func:`check_device_name` checks the spelling without importing torch, so a command refuses ``--device tpu``
before any work even when none of its tasks uses a device (it was once accepted and recorded); :func:`check_device`
also checks that the machine has the device (the ``--device`` option of every command).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from benchbox.errors import BenchboxError

if TYPE_CHECKING:
    import torch

#: the device names benchbox takes
DEVICE_NAME = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_device_name(device: str) -> str:
    """``device`` if it is one of :data:`DEVICE_NAME`, else a one-line :class:`BenchboxError`."""
    if not isinstance(device, str) or not DEVICE_NAME.fullmatch(device):
        raise BenchboxError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N")
    return device


def check_device(device: str) -> str:
    """``device`` if :func:`check_device_name` takes it and this machine has it: ``cuda`` and ``cuda:N`` need a
    GPU that torch sees (N below their count); else one line, before any work. Without it ``--device cuda``
    on a machine without a GPU was accepted, and recorded, for a task that computes nothing on a device
    (``glove-bow`` on ``stsb-cosine``). ``auto`` and ``cpu`` import nothing."""
    check_device_name(device)
    if device.startswith("cuda"):
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if count == 0:
            raise BenchboxError(f"--device {device}: no CUDA device here; use --device cpu or auto")
        if index >= count:
            raise BenchboxError(f"--device {device}: this machine has {count} CUDA device(s), cuda:0 to "
                                f"cuda:{count - 1}; use one of them, cpu or auto")
    return device


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """``auto`` (or None): CUDA when torch sees a GPU, else CPU. ``cuda`` without a GPU is an error."""
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise BenchboxError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N") from exc
    if resolved.type not in ("cpu", "cuda"):
        raise BenchboxError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N")
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise BenchboxError(f"device {device!r} asked for, but torch sees no CUDA GPU: use --device cpu or auto")
    return resolved

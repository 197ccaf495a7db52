"""Where torch work runs: a ``--device`` value (``auto``, ``cpu``, ``cuda``, ``cuda:N``) resolved to a torch device."""

from __future__ import annotations

import torch

from benchbox.errors import BenchboxError


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """``auto`` (or None): CUDA when torch sees a GPU, else CPU. ``cuda`` without a GPU is an error."""
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

"""Where trained probes run: ``TaskOptions.device`` (``auto``, ``cpu``, ``cuda``) resolved to a torch device."""

from __future__ import annotations

import torch

from benchbox.errors import BenchboxError


def resolve_device(device: str) -> torch.device:
    """``auto``: CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise BenchboxError("--device cuda asked for, but torch sees no GPU: use --device cpu or auto")
        return torch.device("cuda")
    raise BenchboxError(f"unknown device {device!r}: use auto, cpu or cuda")

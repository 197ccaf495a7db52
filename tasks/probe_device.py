"""What the two SentEval probes share: where they run (``TaskOptions.device`` resolved to a torch device) and
torch's Adam update written out for weights that carry a leading model dimension (several fits at once)."""

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


ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
"""``torch.optim.Adam``'s defaults, which SentEval's probes use (no weight decay in the optimiser)."""


def adam_step_(w: torch.Tensor, grad: torch.Tensor, m: torch.Tensor, v: torch.Tensor, step: int) -> None:
    """One in-place Adam update of ``w`` (step counted from 1), the arithmetic of ``torch.optim.Adam``."""
    b1, b2 = ADAM["beta1"], ADAM["beta2"]
    m.lerp_(grad, 1 - b1)
    v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
    denom = (v.sqrt() / (1 - b2**step) ** 0.5).add_(ADAM["eps"])
    w.addcdiv_(m, denom, value=-ADAM["lr"] / (1 - b1**step))

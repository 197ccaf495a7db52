"""torch's Adam update written out for the SentEval probes, whose weights carry a leading model dimension
(several fits at once); the arithmetic of ``torch.optim.Adam`` with its defaults, as SentEval uses it."""

from __future__ import annotations

import torch

ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
"""``torch.optim.Adam``'s defaults, which SentEval's probes use (no weight decay in the optimiser)."""


def adam_step_(w: torch.Tensor, grad: torch.Tensor, m: torch.Tensor, v: torch.Tensor, step: int) -> None:
    """One in-place Adam update of ``w`` (step counted from 1), the arithmetic of ``torch.optim.Adam``."""
    b1, b2 = ADAM["beta1"], ADAM["beta2"]
    m.lerp_(grad, 1 - b1)
    v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
    denom = (v.sqrt() / (1 - b2**step) ** 0.5).add_(ADAM["eps"])
    w.addcdiv_(m, denom, value=-ADAM["lr"] / (1 - b1**step))

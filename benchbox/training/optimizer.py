"""The optimiser of char-RNN training: Adam (Merkx & Frank 2019; docs/protocols.md#char-rnn-encoders).

Where the installed PyTorch has it for the parameters' device (CPU from PyTorch 2.4, CUDA), Adam's fused
implementation: one pass over each parameter for the whole update instead of about ten element-wise passes
(at n = 1024 on one CPU thread about 20 against 70 ms per step, of a step of 2–3 s). The arithmetic is
Adam's, equal to the default implementation's to float rounding (not bit for bit); elsewhere the default
implementation. A checkpoint stores the choice with the optimiser's state, so a resumed run goes on with the
implementation it started with.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def adam(parameters: Iterable[torch.nn.Parameter], lr: float) -> torch.optim.Adam:
    """Adam over ``parameters`` with learning rate ``lr`` (fused where available, module docstring)."""
    parameters = list(parameters)
    try:
        return torch.optim.Adam(parameters, lr=lr, fused=True)
    except (RuntimeError, ValueError, TypeError):  # no fused Adam for this device in this PyTorch
        return torch.optim.Adam(parameters, lr=lr)

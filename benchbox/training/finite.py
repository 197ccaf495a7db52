"""Training stops at the first non-finite number, before it reaches the weights or a checkpoint.

Two checks per step (:class:`FiniteGuard`): the loss before ``backward()`` (a NaN/inf loss would turn every
weight NaN in the update), and the parameters after the optimiser step (a finite loss can still give a
non-finite update, e.g. an infinite learning rate). NaN weights make every similarity NaN, and NaN
similarities rank every target first under the optimistic tie rule (dev R@1 = 100), so a diverged run would
otherwise be selected as the best snapshot. The trainer writes checkpoints only after both checks pass, so
the last checkpoint on disk is always finite and ``--resume`` continues from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

from benchbox.errors import BenchboxError


class NonFiniteTraining(BenchboxError):
    """A loss or the weights became NaN or infinite; ``weights_ok`` says whether the model is still finite."""

    def __init__(self, message: str, *, weights_ok: bool) -> None:
        super().__init__(message)
        self.weights_ok = weights_ok


class FiniteGuard:
    """Per-step checks; remembers the last finite loss for the message."""

    def __init__(self) -> None:
        self.last: tuple[int, float] | None = None

    def _last(self) -> str:
        return "no finite value yet" if self.last is None else f"last finite value {self.last[1]:.6g} at step {self.last[0]}"

    def check_loss(self, step: int, term: str, value: float) -> None:
        """Before the update: raise if the loss ``term`` of ``step`` is not finite."""
        if not math.isfinite(value):
            raise NonFiniteTraining(f"training stopped at step {step}: the loss {term} is {value} ({self._last()})",
                                    weights_ok=True)
        self.last = (step, value)

    def check_weights(self, step: int, parameters: Iterable[torch.Tensor], hint: str = "lower --lr-max") -> None:
        """After the update: raise if any parameter is not finite (``hint``: what the user can change)."""
        for p in parameters:
            if not bool(torch.isfinite(p.detach()).all()):
                loss = f"its loss was {self.last[1]:.6g}" if self.last else "no finite loss"
                raise NonFiniteTraining(f"training stopped at step {step}: the update made the weights NaN or "
                                        f"infinite ({loss}); {hint}", weights_ok=False)

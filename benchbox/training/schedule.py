"""The cyclic cosine learning rate of Merkx & Frank (2019), annealed at every step.

Within a cycle of ``steps_per_cycle`` steps (4 epochs), the rate follows
``lr_min + (lr_max − lr_min) · ½ (cos(π (1 + 2 t / steps_per_cycle)) + 1)`` for t = 0 … steps_per_cycle:
it starts at lr_min, peaks at lr_max half-way and returns to lr_min at the end of the cycle, where a
snapshot is taken. This is Merkx's ``create_cyclic_scheduler`` (DannyMerkx/caption2image,
``PyTorch/flickr_char/char_net.py``); it differs from SGDR (Loshchilov & Hutter 2017), which restarts at
lr_max, but shares its point: every cycle ends in a low-rate minimum, and snapshots of those minima form
an ensemble (Huang et al. 2017, "Snapshot ensembles"). The rate is a pure function of the global step, so
a resumed run needs to store nothing but the step.
"""

from __future__ import annotations

import math


def cyclic_cosine_lr(step: int, steps_per_cycle: int, lr_max: float, lr_min: float = 1e-6) -> float:
    """Learning rate for global ``step`` (0-based)."""
    if steps_per_cycle < 1:
        raise ValueError("steps_per_cycle must be positive")
    t = step % steps_per_cycle
    return lr_min + (lr_max - lr_min) * 0.5 * (math.cos(math.pi * (1 + 2 * t / steps_per_cycle)) + 1)

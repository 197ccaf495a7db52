"""Memory a char-RNN training run needs, estimated from its sizes before the model is built
(checked by :func:`benchbox.memory.require_memory`; issue: ``--hidden 100000`` ended in an allocation traceback).

Parameters (PyTorch's bidirectional GRU/LSTM: per direction ``gates·(20·n + n² + 2n)``; attention 2n → 128 → 2n;
image projection feature_dim → 2n) cost 16 bytes each in training: float32 weights, gradients and Adam's two
moments. Activations kept for backward, per caption and character: per direction the gate activations and
the state (``gates + 1`` values of n), plus the 2n output, attention scores and weights (3 · 2n), float32,
doubled for autograd's temporaries; for the longest caption in the data, the whole batch, and twice as many
captions when each row has a partner caption (``--visual cluster``, ``--loss cluster``), plus the text batch
of the textual term for its longest sentence (``text_length``; 0 without it). The GRU scan of CPU training
(:mod:`benchbox.encoders.gru_scan`) keeps 7 values of n per direction (four gate-gradient coefficients, r, z
and the state), within the doubled estimate. An upper bound in practice: hidden 512, batch 32, ``--visual
cluster`` on 3200 Flickr8k captions, the estimate is 665 MB and the process's peak RSS grew by 392 MB over
three training steps (341 MB before the scan).
"""

from __future__ import annotations

from benchbox.memory import fits, require_memory

CHAR_DIM = 20
ATTENTION_HIDDEN = 128


def training_bytes(*, rnn: str, hidden: int, batch_size: int, max_length: int, feature_dim: int | None,
                   vocab_size: int, partner: bool, text_length: int = 0) -> int:
    gates = 3 if rnn == "gru" else 4
    params = 2 * gates * (CHAR_DIM * hidden + hidden * hidden + 2 * hidden) + vocab_size * CHAR_DIM
    params += 2 * (2 * hidden * ATTENTION_HIDDEN) + (feature_dim or 0) * 2 * hidden
    per_step = 2 * (gates + 1) * hidden + 3 * 2 * hidden
    activations = 4 * 2 * batch_size * (max_length * (2 if partner else 1) + text_length) * per_step
    return 16 * params + activations


def require_training_memory(device: str, **sizes: int) -> None:
    """Refuse a run whose estimate does not fit on ``device``, naming a ``--hidden`` that would."""
    need = training_bytes(**sizes)
    hidden = sizes["hidden"]
    smaller = hidden
    while smaller > 1 and not fits(training_bytes(**{**sizes, "hidden": smaller}), device):
        smaller //= 2
    require_memory(need, f"training with --hidden {hidden} and --batch-size {sizes['batch_size']} "
                         f"(captions up to {sizes['max_length']} characters)",
                   f"use --hidden {smaller} or less, or a smaller --batch-size", device=device)

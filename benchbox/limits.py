"""The length limit on sentences and captions.

A sentence or caption longer than the limit is an error naming it, raised before any encoding or training
step: one 1 MB caption once made a character-level training run grow to 24 GB for 37 minutes (a recurrent
encoder's memory and time grow with the longest text of a batch). The default, 10,000 characters, is 14
times the longest text of every dataset benchbox knows (694 characters, in SUBJ); set ``$BENCHBOX_MAX_CHARS``
to change it. It is checked on every encoder input (:meth:`benchbox.encoder.Encoder.encode`), on caption
splits (training and retrieval) and on NLI training pairs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from benchbox.errors import BenchboxError

ENV_VAR = "BENCHBOX_MAX_CHARS"
DEFAULT_MAX_CHARS = 10_000


def max_chars() -> int:
    """The limit: ``$BENCHBOX_MAX_CHARS`` if set, else :data:`DEFAULT_MAX_CHARS`."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_CHARS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise BenchboxError(f"${ENV_VAR} must be a positive whole number of characters, not {raw!r}")
    return value


def check_lengths(texts: Sequence[str], name: Callable[[int], str]) -> None:
    """Raise for the first text over the limit; ``name(i)`` says which text ``i`` is (file, image, index)."""
    limit = max_chars()
    for i, text in enumerate(texts):
        if len(text) > limit:
            raise BenchboxError(
                f"{name(i)} has {len(text):,} characters, over the limit of {limit:,} (it starts {text[:40]!r}): "
                f"shorten or drop it, or raise ${ENV_VAR}"
            )

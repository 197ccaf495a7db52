"""The limits on inputs: the length of sentences and captions, and the size of image files.

A sentence or caption longer than the limit is an error naming it, raised before any encoding or training
step: one 1 MB caption once made a character-level training run grow to 24 GB for 37 minutes (a recurrent
encoder's memory and time grow with the longest text of a batch). The default, 10,000 characters, is 14
times the longest text of every dataset benchbox knows (694 characters, in SUBJ); set ``$BENCHBOX_MAX_CHARS``
to change it. It is checked on every encoder input (:meth:`benchbox.encoding.protocol.Encoder.encode`), on caption
splits (training and retrieval) and on NLI training pairs.

An image file larger than its limit is an error naming it, raised before the file is opened (it is one check of
:func:`benchbox.data.image_files.find_images`, with regular files only: a FIFO or a link to ``/dev/zero`` once made
retrieval read for ever). The default, 50 MB, is over 50 times the largest image file of Flickr8k and COCO (their
images are at most 640 pixels a side, each file under 1 MB); set ``$BENCHBOX_MAX_IMAGE_MB`` to change it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from benchbox.errors import BenchboxError

ENV_VAR = "BENCHBOX_MAX_CHARS"
DEFAULT_MAX_CHARS = 10_000
IMAGE_ENV_VAR = "BENCHBOX_MAX_IMAGE_MB"
DEFAULT_MAX_IMAGE_MB = 50


def _setting(var: str, default: int, unit: str) -> int:
    """``$var`` as a positive whole number of ``unit`` if set, else ``default``."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise BenchboxError(f"${var} must be a positive whole number of {unit}, not {raw!r}")
    return value


def max_chars() -> int:
    """The limit: ``$BENCHBOX_MAX_CHARS`` if set, else :data:`DEFAULT_MAX_CHARS`."""
    return _setting(ENV_VAR, DEFAULT_MAX_CHARS, "characters")


def max_image_bytes() -> int:
    """The limit on an image file, in bytes: ``$BENCHBOX_MAX_IMAGE_MB`` (or :data:`DEFAULT_MAX_IMAGE_MB`) MB."""
    return _setting(IMAGE_ENV_VAR, DEFAULT_MAX_IMAGE_MB, "megabytes (MB)") * 1_000_000


def check_lengths(texts: Sequence[str], name: Callable[[int], str]) -> None:
    """Raise for the first text over the limit; ``name(i)`` says which text ``i`` is (file, image, index)."""
    limit = max_chars()
    for i, text in enumerate(texts):
        if len(text) > limit:
            raise BenchboxError(
                f"{name(i)} has {len(text):,} characters, over the limit of {limit:,} (it starts {text[:40]!r}): "
                f"shorten or drop it, or raise ${ENV_VAR}"
            )

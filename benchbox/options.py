"""Numeric options checked before any work starts, by one rule for the command line and the Python API, and the
defaults every entry point shares.

:func:`check_number`: every float must be finite (click parses ``inf`` and ``nan``); ``None`` (an optional option
left out) passes; a value out of range raises :class:`BenchboxError` naming the option, the value and the range, so
the CLI prints one line and exits 2 before anything is loaded or trained. The command line declares each numeric
option's range with a callback built on it (:mod:`benchbox.commands.options`); checks that span several options
(``--lr-min`` ≤ ``--lr-max``) and the Python API call it from the configuration object's validation (e.g.
``TrainConfig.__post_init__``).
"""

from __future__ import annotations

import math
from typing import Any

from benchbox.errors import BenchboxError


def _describe(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '≥'} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '≤'} {high:g}")
    return " and ".join(parts) if parts else "finite"


def check_number(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise :class:`BenchboxError` unless ``value`` is a finite number in the range (``None`` passes)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BenchboxError(f"{name} must be a number, got {value!r}")
    expected = _describe(low, high, low_open, high_open)
    if not math.isfinite(value):
        raise BenchboxError(f"{name} must be a finite number ({expected}), got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        raise BenchboxError(f"{name} must be {expected}, got {value:g}")


#: the seed of every random choice, unless one is given: SentEval's (probes, folds, bootstrap draws) and the
#: training's (initialisation, data order)
DEFAULT_SEED = 1111
#: bootstrap resamples of the intervals without a closed form, and of the paired bootstrap tests
DEFAULT_RESAMPLES = 1000
#: the task group of the leaderboard's overall score and ranks (the paper's 26 semantic rows)
DEFAULT_GROUP = "semantic"

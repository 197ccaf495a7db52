"""Numeric options checked before any work starts, in one place that commands declare against.

A command declares the range of each numeric option with a typer callback from here::

    batch_size: Annotated[int, typer.Option(help="...", callback=AT_LEAST_1)] = 128
    lr: Annotated[float, typer.Option(help="...", callback=POSITIVE)] = 0.1
    dropout: Annotated[float, typer.Option(help="...", callback=in_range(0, 1, high_open=True))] = 0.0

Every float must be finite (click parses ``inf`` and ``nan``); ``None`` (an optional option left out) passes.
A value out of range raises :class:`BenchboxError` naming the option, the value and the range, so the CLI
prints one line and exits 2 before anything is loaded or trained. Checks that span several options
(``--lr-min`` ≤ ``--lr-max``) and the Python API go through :func:`check_number` in the configuration
object's validation (e.g. ``TrainConfig.__post_init__``), so both entry points share the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

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


def in_range(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[..., Any]:
    """A typer option callback that checks its value with :func:`check_number` (the option's name as typed)."""

    def callback(param: typer.CallbackParam, value: Any) -> Any:
        name = max(param.opts, key=len) if param.opts else f"--{param.name}"
        for item in value if isinstance(value, (list, tuple)) else [value]:
            check_number(name, item, low=low, high=high, low_open=low_open, high_open=high_open)
        return value

    return callback


#: integers ≥ 1: sizes, counts, epochs, threads, steps
AT_LEAST_1 = in_range(1)
#: integers ≥ 0: seeds, worker counts, resample counts where 0 means "none"
AT_LEAST_0 = in_range(0)
#: reals > 0: learning rates, norms, durations
POSITIVE = in_range(0, low_open=True)
#: reals ≥ 0: margins, lower bounds of learning rates
NON_NEGATIVE = in_range(0)
#: probabilities of dropping a unit: 0 ≤ p < 1
DROPOUT = in_range(0, 1, high_open=True)

#: ``--threads``, declared once for every command that computes (applied by :func:`benchbox.threads.set_threads`)
THREADS = Annotated[Optional[int], typer.Option(
    "--threads", help="CPU threads for tensor and BLAS work (default: the CPUs this process may use, its cgroup "
    "quota and affinity included); recorded in the run manifest.", callback=AT_LEAST_1)]

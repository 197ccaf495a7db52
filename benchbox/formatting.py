"""How numbers appear to a person, in terminal tables and reports alike, as each metric's
:class:`~benchbox.task_contract.protocol.MetricSpec` declares: its value × ``scale`` (correlations × 100, as Merkx & Frank 2019
print them) with ``decimals`` decimals, or, where a metric declares none, four significant digits; a value and its
interval bounds at one precision, intervals in brackets or as ± half-widths, p-values with three decimals, and
never ``-0.0``. Machine output (JSON, CSV, run folders) keeps the stored values unscaled."""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

MISSING = "—"
#: the display convention, stated once wherever scaled numbers are shown
SCALE_NOTE = "correlations (Pearson, Spearman) × 100"
#: significant digits of a metric that declares no decimals
SIGNIFICANT = 4


class Display(Protocol):
    """What formatting reads of a metric (a :class:`~benchbox.task_contract.protocol.MetricSpec`)."""

    scale: float
    decimals: int | None


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def one_decimal(value: Any) -> str:
    return MISSING if is_missing(value) else _fixed(float(value), 1)


def decimals(spec: Display, *shown: float) -> int:
    """Decimals of a metric in display units: the ones its spec declares; else four significant digits of the
    largest of ``shown`` (at most six decimals), so that a value and its interval bounds share one precision
    (``0.0945 [0.0237, 0.1754]``)."""
    if spec.decimals is not None:
        return spec.decimals
    magnitude = max((abs(x) for x in shown if math.isfinite(x)), default=0.0)
    return SIGNIFICANT if magnitude == 0 else min(6, max(0, SIGNIFICANT - 1 - math.floor(math.log10(magnitude))))


def _fixed(value: float, places: int) -> str:
    """``value`` with ``places`` decimals, never ``-0.0``: a value that rounds to zero has no sign."""
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def number(value: Any, spec: Display, places: int | None = None) -> str:
    """``value`` in display units (``—`` when missing), with ``places`` decimals (default: :func:`decimals` of
    the value)."""
    if is_missing(value):
        return MISSING
    value = float(value) * spec.scale
    return _fixed(value, decimals(spec, value) if places is None else places)


def _shared_places(spec: Display, *values: Any) -> int:
    """One precision for a value and its interval bounds (:func:`decimals` of the largest)."""
    return decimals(spec, *(float(v) * spec.scale for v in values if not is_missing(v)))


def with_interval(value: Any, low: Any, high: Any, spec: Display) -> str:
    """``42.3 [36.2, 48.0]``; the bare value when there is no interval."""
    if is_missing(low) or is_missing(high):
        return number(value, spec)
    places = _shared_places(spec, value, low, high)
    return f"{number(value, spec, places)} [{number(low, spec, places)}, {number(high, spec, places)}]"


def plus_minus(value: Any, low: Any, high: Any, spec: Display) -> str:
    """``27.5 ± 2.8`` as in the paper's Table 2; ``27.5 +2.9/−2.7`` when the interval is not symmetric at the
    displayed precision; the bare value when there is no interval."""
    if is_missing(value) or is_missing(low) or is_missing(high):
        return number(value, spec)
    places = _shared_places(spec, value, low, high)
    above = number(float(high) - float(value), spec, places)
    below = number(float(value) - float(low), spec, places)
    if above == below:
        return f"{number(value, spec, places)} ± {above}"
    return f"{number(value, spec, places)} +{above}/−{below}"


def p_value(p: Any) -> str:
    if is_missing(p):
        return MISSING
    return "<0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def plain(value: Any) -> str:
    """A configuration value as text: strings as they are, everything else as compact JSON-like text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)

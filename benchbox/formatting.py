"""How numbers appear to a person, in terminal tables and reports alike: correlations × 100 (as Merkx & Frank
2019 print them), percentages and ranks with one decimal, other values with four significant digits, a value
and its interval bounds at one precision, intervals in brackets or as ± half-widths, p-values with three
decimals, and never ``-0.0``. Machine output (JSON, CSV, run folders) keeps the stored values unscaled."""

from __future__ import annotations

import json
import math
from typing import Any

#: metrics stored as raw correlations in [-1, 1] (also their ``_mean``/``_wmean``/``_pooled`` aggregates)
CORRELATIONS = ("pearson", "spearman")
#: metrics already in percent or rank units: shown with one decimal as stored
ONE_DECIMAL = ("accuracy", "f1", "r1", "r5", "r10", "rsum", "medr", "meanr")
MISSING = "—"
#: the display convention, stated once wherever scaled numbers are shown
SCALE_NOTE = "correlations (Pearson, Spearman) × 100"


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def scale(metric: str) -> float:
    """The display factor of ``metric``: 100 for correlations, 1 otherwise."""
    return 100.0 if metric.split("_")[0] in CORRELATIONS else 1.0


def one_decimal(value: Any) -> str:
    return MISSING if is_missing(value) else _fixed(float(value), 1)


def decimals(metric: str, *shown: float) -> int:
    """Decimals of ``metric`` in display units: one for correlations × 100, percentages and ranks; for any
    other metric four significant digits of the largest of ``shown`` (at most six decimals), so that a value
    and its interval bounds share one precision (``0.0945 [0.0237, 0.1754]``)."""
    if scale(metric) != 1.0 or metric in ONE_DECIMAL:
        return 1
    magnitude = max((abs(x) for x in shown if math.isfinite(x)), default=0.0)
    return 4 if magnitude == 0 else min(6, max(0, 3 - math.floor(math.log10(magnitude))))


def _fixed(value: float, places: int) -> str:
    """``value`` with ``places`` decimals, never ``-0.0``: a value that rounds to zero has no sign."""
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def number(value: Any, metric: str, places: int | None = None) -> str:
    """``value`` of ``metric`` in display units (``—`` when missing), with ``places`` decimals (default:
    :func:`decimals` of the value)."""
    if is_missing(value):
        return MISSING
    value = float(value) * scale(metric)
    return _fixed(value, decimals(metric, value) if places is None else places)


def _shared_places(metric: str, *values: Any) -> int:
    """One precision for a value and its interval bounds (:func:`decimals` of the largest)."""
    return decimals(metric, *(float(v) * scale(metric) for v in values if not is_missing(v)))


def with_interval(value: Any, low: Any, high: Any, metric: str) -> str:
    """``42.3 [36.2, 48.0]``; the bare value when there is no interval."""
    if is_missing(low) or is_missing(high):
        return number(value, metric)
    places = _shared_places(metric, value, low, high)
    return f"{number(value, metric, places)} [{number(low, metric, places)}, {number(high, metric, places)}]"


def plus_minus(value: Any, low: Any, high: Any, metric: str) -> str:
    """``27.5 ± 2.8`` as in the paper's Table 2; ``27.5 +2.9/−2.7`` when the interval is not symmetric at the
    displayed precision; the bare value when there is no interval."""
    if is_missing(value) or is_missing(low) or is_missing(high):
        return number(value, metric)
    places = _shared_places(metric, value, low, high)
    above = number(float(high) - float(value), metric, places)
    below = number(float(value) - float(low), metric, places)
    if above == below:
        return f"{number(value, metric, places)} ± {above}"
    return f"{number(value, metric, places)} +{above}/−{below}"


def p_value(p: Any) -> str:
    if is_missing(p):
        return MISSING
    return "<0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def plain(value: Any) -> str:
    """A configuration value as text: strings as they are, everything else as compact JSON-like text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)

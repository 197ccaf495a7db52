"""Does benchbox's number reproduce the paper's? The difference with its interval, and the verdict rule
(docs/protocols.md#reproduction-verdicts).

The difference d = ours − published gets its 95% interval by MOVER (the method of variance estimates recovery,
Newcombe 1998, *Statistics in Medicine* 17, 873–890; Zou & Donner 2008, *Statistics in Medicine* 27,
1693–1702): from the two estimates' own 95% intervals, each side separately, so that asymmetric intervals
(Wilson, Fisher z) stay asymmetric:

    low  = d − √((ours − ours_low)² + (published_high − published)²)
    high = d + √((ours_high − ours)² + (published − published_low)²)

A published number without an interval counts as exact (width 0): the interval is then benchbox's alone.

The verdict is an equivalence test, two one-sided tests at α = 0.05 (TOST; Schuirmann 1987, *J.
Pharmacokinetics and Biopharmaceutics* 15, 657–680): the number **reproduces** when the 90% interval of d lies
inside (−margin, +margin), the margin declared per table of the paper file. The 90% interval is the 95% one with
each side's half-width scaled by z₀.₉₅ / z₀.₉₇₅ (both intervals are normal-approximation intervals). Otherwise
it **differs** when the 95% interval of d excludes 0 (the direction and size are said), and is
**inconclusive** when it does not (the interval is too wide to show either).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

#: the two-sided 95% and the one-sided 95% (two-sided 90%) normal quantiles
Z95 = float(norm.ppf(0.975))
Z90 = float(norm.ppf(0.95))

REPRODUCED = "reproduced"
DIFFERS = "differs"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Difference:
    """ours − published with its 95% interval."""

    value: float
    low: float
    high: float


def _width(centre: float, bound: float | None) -> float:
    return 0.0 if bound is None or math.isnan(bound) else abs(centre - bound)


def difference(ours: float, ours_low: float, ours_high: float, published: float,
               published_low: float | None = None, published_high: float | None = None) -> Difference:
    """ours − published and its 95% MOVER interval (module docstring)."""
    d = ours - published
    low = d - math.hypot(_width(ours, ours_low), _width(published, published_high))
    high = d + math.hypot(_width(ours, ours_high), _width(published, published_low))
    return Difference(d, low, high)


@dataclass(frozen=True)
class Verdict:
    kind: str
    words: str


def verdict(diff: Difference, margin: float, unit: str = "") -> Verdict:
    """The verdict of the difference ``diff`` against the equivalence ``margin`` (module docstring), in words;
    ``unit`` follows each number (``" pp"``)."""
    if any(math.isnan(x) for x in (diff.value, diff.low, diff.high)):
        return Verdict(INCONCLUSIVE, "inconclusive: benchbox's number has no interval")
    scale = Z90 / Z95
    low90 = diff.value - scale * (diff.value - diff.low)
    high90 = diff.value + scale * (diff.high - diff.value)
    size = f"{abs(diff.value):.3g}{unit}"
    if -margin < low90 and high90 < margin:
        return Verdict(REPRODUCED, f"reproduced: within ±{margin:g}{unit} (90% interval {low90:+.3g} to {high90:+.3g})")
    if diff.low > 0 or diff.high < 0:
        direction = "higher" if diff.value > 0 else "lower"
        return Verdict(DIFFERS, f"differs: benchbox {size} {direction} (95% interval {diff.low:+.3g} to "
                                f"{diff.high:+.3g}; margin ±{margin:g}{unit})")
    return Verdict(INCONCLUSIVE, f"inconclusive: the interval {diff.low:+.3g} to {diff.high:+.3g} is too wide for the "
                                 f"±{margin:g}{unit} margin")

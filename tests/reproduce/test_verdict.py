"""The verdict rule of ``benchbox reproduce`` (benchbox/reproduce/verdict.py, docs/protocols.md#reproduction-verdicts)
against hand-computed cases: MOVER's interval of the difference and TOST at 5% against the table's margin."""

from __future__ import annotations

import math

import pytest

from benchbox.reproduce.verdict import DIFFERS, INCONCLUSIVE, REPRODUCED, Z90, Z95, Difference, difference, verdict


def test_mover_interval_adds_the_sides_in_quadrature():
    # ours 91.5 [90.9, 92.1], published 90.6 [90.0, 91.4]: d = 0.9; low = 0.9 - hypot(0.6, 0.8) = -0.1;
    # high = 0.9 + hypot(0.6, 0.6) = 0.9 + 0.8485...
    d = difference(91.5, 90.9, 92.1, 90.6, 90.0, 91.4)
    assert d.value == pytest.approx(0.9, abs=1e-12)
    assert d.low == pytest.approx(-0.1, abs=1e-12)
    assert d.high == pytest.approx(0.9 + 0.6 * math.sqrt(2), abs=1e-12)


def test_a_published_number_without_interval_counts_as_exact():
    d = difference(80.0, 79.0, 81.5, 78.6)
    assert (d.value, d.low, d.high) == pytest.approx((1.4, 0.4, 2.9), abs=1e-12)


def test_reproduced_when_the_90_percent_interval_is_inside_the_margin():
    # 95% half-widths 0.6 → 90% half-widths 0.6 * 1.64485 / 1.95996 = 0.50354: [0.39646, 1.40354] inside ±1.5
    assert Z90 / Z95 == pytest.approx(0.839226, abs=1e-6)
    judged = verdict(Difference(0.9, 0.3, 1.5), 1.5)
    assert judged.kind == REPRODUCED and "+0.396 to +1.4" in judged.words
    # the same difference with a margin of 1.4: the 90% bound 1.40354 is outside, and 0 is outside the 95% interval
    assert verdict(Difference(0.9, 0.3, 1.5), 1.4).kind == DIFFERS


def test_differs_says_the_direction_and_size():
    judged = verdict(Difference(-3.0, -4.0, -2.0), 1.0, " pp")
    assert judged.kind == DIFFERS and judged.words.startswith("differs: benchbox 3 pp lower")
    assert verdict(Difference(2.5, 1.0, 4.0), 1.0).words.startswith("differs: benchbox 2.5 higher")


def test_inconclusive_when_the_interval_holds_zero_and_exceeds_the_margin():
    judged = verdict(Difference(0.2, -2.0, 2.4), 1.0)
    assert judged.kind == INCONCLUSIVE and "too wide" in judged.words
    assert verdict(Difference(0.2, math.nan, math.nan), 1.0).kind == INCONCLUSIVE


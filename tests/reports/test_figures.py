"""The report's figures show each number as its metric's spec says (``MetricSpec.scale``), as the tables do: the
semantic figure hard-coded × 100 whatever the spec."""

from __future__ import annotations

import math

import pandas as pd

from benchbox.reports.figures import as_shown, semantic_figure
from benchbox.task_contract.protocol import MetricSpec
from benchbox.tasks.sts import CORRELATIONS

PEARSON = next(spec for spec in CORRELATIONS if spec.name == "pearson")


def rows(spec: MetricSpec) -> pd.DataFrame:
    return pd.DataFrame({"label": ["a", "a", "b", "b"], "reference": [False] * 4, "source_rank": [0, 0, 1, 1],
                         "task": ["t"] * 4, "subset": ["x", "y", "x", "y"], "value": [0.5, 0.6, 0.4, math.nan],
                         "ci_low": [0.4, 0.5, 0.3, math.nan], "ci_high": [0.6, 0.7, 0.5, math.nan],
                         "spec": [spec] * 4})


def test_values_are_shown_at_their_specs_scale():
    shown = as_shown(rows(PEARSON))
    assert shown["value"].tolist()[:3] == [50.0, 60.0, 40.0] and math.isnan(shown["value"].iloc[3])
    assert shown["ci_high"].tolist()[:3] == [60.0, 70.0, 50.0]
    assert as_shown(rows(MetricSpec("pearson", unit="r")))["value"].tolist()[:3] == [0.5, 0.6, 0.4]


def test_the_semantic_figure_says_the_scale_its_spec_declares():
    assert PEARSON.scale == 100
    scaled = semantic_figure(rows(PEARSON))
    assert scaled.caption.startswith("Pearson r × 100 per subset") and "Pearson r × 100 (95% interval)" in scaled.svg
    plain = semantic_figure(rows(MetricSpec("pearson", unit="r")))
    assert plain.caption.startswith("Pearson r per subset") and "× 100" not in plain.svg + plain.alt

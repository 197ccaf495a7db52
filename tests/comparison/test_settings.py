"""How a comparison tests and corrects, declared once (:class:`benchbox.comparison.settings.CompareSettings`, issue
#44): every field is an option of `compare` and of `report --compare` with the same flag, help and default, a key of
a study's [study] table, and checked where it is made; each correction declared in
:mod:`benchbox.stats.corrections` gets its p column and its choice, and its adjustment is statsmodels'."""

from __future__ import annotations

import re

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests
from typer.main import get_command

from benchbox.cli import app
from benchbox.comparison.compare import COLUMNS
from benchbox.comparison.settings import CompareSettings, settings_fields
from benchbox.errors import BenchboxError
from benchbox.stats.corrections import CORRECTIONS


def _options(command: str) -> dict[str, object]:
    """The options of ``benchbox COMMAND`` by flag."""
    params = get_command(app).commands[command].params
    return {opt: param for param in params for opt in param.opts if opt.startswith("--")}


@pytest.mark.parametrize("command", ["compare", "report"])
def test_every_setting_is_an_option_of_compare_and_of_report(command):
    options = _options(command)
    for name, setting, default in settings_fields():
        option = options[f"--{setting.flag}"]
        assert option.name == name and option.default == default and option.help == setting.help


def test_a_setting_is_checked_where_it_is_made():
    assert CompareSettings().p_column == "p_holm" and CompareSettings(correction="bh").p_column == "p_bh"
    for given, message in [({"correction": "bonferroni-ish"}, "unknown --correction 'bonferroni-ish': use holm"),
                           ({"family": "rows"}, "unknown --family 'rows': use all (every row of every pair) or pair"),
                           ({"n_boot": 1}, "--test-resamples must be ≥ 2, got 1"),
                           ({"seed": -1}, "--seed must be ≥ 0, got -1"),
                           ({"seed": "7"}, "--seed must be an integer, got '7'")]:
        with pytest.raises(BenchboxError, match=re.escape(message)):
            CompareSettings(**given)


def test_each_correction_has_its_column_and_statsmodels_adjustment():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
    for correction in CORRECTIONS.values():
        assert correction.p_column in COLUMNS
        adjusted = correction.adjust(p)
        assert np.allclose(adjusted[:4], multipletests(p[:4], method=correction.method)[1]) and np.isnan(adjusted[4])
    assert [c.p_column for c in CORRECTIONS.values()] == [c for c in COLUMNS if c.startswith("p_")]

"""docs/plugins.md checked against the code: the keys a ``[[task]]`` table takes (the TOML loader's model), the
worked custom metric (the listing is docs/examples/custom_metric.py), ``PairedKind.test``'s signature and
``RowTest``'s fields, and what the plugin kit reports on the broken plugin (its output, run now)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings
from pathlib import Path

import pytest

from benchbox.task_contract.paired_tests import PairedKind, RowTest
from benchbox.tasks.declarative import BASES, DeclaredTask
from benchbox.testing import check_encoder, check_task
from tests.helpers import markdown_table

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")


def code_block(containing: str, language: str = "python") -> str:
    """The fenced block of ``language`` that holds ``containing``."""
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC, re.S)
    return next(block for block in blocks if containing in block)


def test_the_toml_keys_table_lists_the_loaders_keys_in_order_with_what_is_required():
    rows = markdown_table(DOC, "The keys of a `[[task]]` table")
    assert [row[0].strip("`") for row in rows] == list(DeclaredTask.model_fields)
    assert {row[0].strip("`"): row[1] == "yes" for row in rows} == {
        name: field.is_required() for name, field in DeclaredTask.model_fields.items()}
    base = next(row[2] for row in rows if row[0] == "`base`")
    assert re.findall(r"`([a-z-]+)`", base) == list(BASES)


def test_the_worked_custom_metric_is_the_example_file():
    example = (ROOT / "docs" / "examples" / "custom_metric.py").read_text(encoding="utf-8")
    assert code_block("class ParaphraseAP") == example[example.index("from __future__"):]


def test_the_paired_kind_contract_is_the_codes():
    documented = code_block("def test(self, pair").strip()
    signature = str(inspect.signature(PairedKind.test)).replace("'", "")
    assert documented == f"def test{signature}"
    fields = [row[0].strip("`") for row in markdown_table(DOC, "Return None when there is nothing to test")]
    assert fields == [field.name for field in dataclasses.fields(RowTest)]


def test_the_kit_output_shown_is_what_the_kit_reports():
    from benchbox_badplugin.nonconforming import NoItems

    shown = code_block("does not conform", "text")
    reports = []
    for check, target in ((check_encoder, "benchbox_badplugin.nonconforming:HalfPrecision"), (check_task, NoItems)):
        with pytest.raises(AssertionError) as raised, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(target)
        reports.append(str(raised.value))
    assert shown == "\n\n".join(reports) + "\n"

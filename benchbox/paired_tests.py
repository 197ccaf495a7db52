"""Deprecated: the kinds of paired test moved to :mod:`benchbox.task_contract.paired_tests`. ``from benchbox.paired_tests import PairedKind``
still works for one release, with one warning saying what to write (docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import paired_tests

    value = getattr(paired_tests, name)  # an unknown name: AttributeError, as for any module
    renamed(f"benchbox.paired_tests.{name}", f"benchbox.task_contract.paired_tests.{name}")
    return value

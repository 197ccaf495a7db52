"""Deprecated: the kinds of paired test, now :mod:`benchbox.task_contract.paired_tests`. Importing a name from
this old module (``PairedKind``, ...) still works for one release, with one warning saying what to write
(docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import paired_tests

    value = getattr(paired_tests, name)  # an unknown name: AttributeError, as for any module
    renamed(f"{__name__}.{name}", f"{paired_tests.__name__}.{name}")
    return value

"""Deprecated: the task options moved to :mod:`benchbox.task_contract.options`. ``from benchbox.task_options import TaskOption``
still works for one release, with one warning saying what to write (docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import options

    value = getattr(options, name)  # an unknown name: AttributeError, as for any module
    renamed(f"benchbox.task_options.{name}", f"benchbox.task_contract.options.{name}")
    return value

"""Deprecated: the task options, now :mod:`benchbox.task_contract.options`. Importing a name from this old module
(``TaskOption``, ...) still works for one release, with one warning saying what to write (docs/plugins.md,
"Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import options

    value = getattr(options, name)  # an unknown name: AttributeError, as for any module
    renamed(f"{__name__}.{name}", f"{options.__name__}.{name}")
    return value

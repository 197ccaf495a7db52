"""Deprecated: the task protocol, now :mod:`benchbox.task_contract.protocol`. Importing a name from this old module
(``Task``, ...) still works for one release, with one warning saying what to write (docs/plugins.md,
"Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import protocol

    value = getattr(protocol, name)  # an unknown name: AttributeError, as for any module
    renamed(f"{__name__}.{name}", f"{protocol.__name__}.{name}")
    return value

"""Deprecated: the task protocol moved to :mod:`benchbox.task_contract.protocol`. ``from benchbox.task import Task``
still works for one release, with one warning saying what to write (docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from benchbox.registry import renamed
    from benchbox.task_contract import protocol

    value = getattr(protocol, name)  # an unknown name: AttributeError, as for any module
    renamed(f"benchbox.task.{name}", f"benchbox.task_contract.protocol.{name}")
    return value

"""Deprecated: the task protocol, now :mod:`benchbox.task_contract.protocol`. Importing a name from this old module
(``Task``, ...) still works for one release, with one warning saying what to write (docs/plugins.md,
"Compatibility")."""

from __future__ import annotations

from benchbox.registry import moved

__getattr__ = moved(__name__, "benchbox.task_contract.protocol")

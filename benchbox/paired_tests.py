"""Deprecated: the kinds of paired test, now :mod:`benchbox.task_contract.paired_tests`. Importing a name from
this old module (``PairedKind``, ...) still works for one release, with one warning saying what to write
(docs/plugins.md, "Compatibility")."""

from __future__ import annotations

from benchbox.registry import moved

__getattr__ = moved(__name__, "benchbox.task_contract.paired_tests")

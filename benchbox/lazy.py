"""Modules imported when first used, so that the command line starts without them.

``benchbox --help``, ``list``, ``describe`` and an argument error import every command module (typer reads
their options) but need none of pandas, joblib, scipy or torch, which take about a second to import. A
module that uses pandas only inside its functions declares ``pd = lazy_module("pandas")`` instead of
``import pandas as pd``: the first attribute read (``pd.DataFrame``) imports pandas, every later one reads
the imported module. ``tests/core/test_startup.py`` checks which modules ``--help`` imports.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """Stands for the module ``name`` and imports it at the first attribute read. A module itself, so that
    what inspects a function's globals (TorchScript resolving ``torch.mm``) takes it for one."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self.__name__)
        return getattr(self._module, attribute)

    def __repr__(self) -> str:
        return f"<lazily imported module {self.__name__!r}>"


def lazy_module(name: str) -> Any:
    """A :class:`LazyModule` for ``name`` (typed ``Any``: use it as the module)."""
    return LazyModule(name)

"""One registry for encoders and tasks, fed by entry points and imported lazily.

Built-in plugins are declared in ``pyproject.toml`` under the entry-point groups ``benchbox.encoders`` and
``benchbox.tasks`` exactly like third-party ones, so there is a single mechanism (modelled on
lm-evaluation-harness's ``lm_eval/api/registry.py``). Nothing is imported until a name is looked up.
Tests and notebooks may add entries at run time with :meth:`Registry.register`.
"""

from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points
from typing import Any

from benchbox.errors import BenchboxError


class Registry:
    """Name → object, where the object is an ``module:attribute`` reference imported on first use."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._targets: dict[str, str | Any] | None = None
        self._loaded: dict[str, Any] = {}

    def _entries(self) -> dict[str, str | Any]:
        if self._targets is None:
            self._targets = {ep.name: ep.value for ep in entry_points(group=self.group)}
        return self._targets

    def register(self, name: str, target: str | Any) -> None:
        """Add ``name``; ``target`` is an object or a ``"module:attribute"`` string imported lazily."""
        self._entries()[name] = target
        self._loaded.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._entries())

    def __contains__(self, name: str) -> bool:
        return name in self._entries()

    def get(self, name: str) -> Any:
        """The registered object for ``name``; an unknown name raises a :class:`BenchboxError`."""
        entries = self._entries()
        if name not in entries:
            close = difflib.get_close_matches(name, entries, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise BenchboxError(
                f"unknown {self.kind} {name!r}.{hint} Available: {', '.join(self.names()) or '(none)'}"
                f" (`benchbox list {self.kind}s`)."
            )
        if name not in self._loaded:
            target = entries[name]
            if isinstance(target, str):
                module_name, _, attribute = target.partition(":")
                try:
                    obj: Any = importlib.import_module(module_name)
                    for part in attribute.split("."):
                        obj = getattr(obj, part)
                except (ImportError, AttributeError) as exc:
                    raise BenchboxError(
                        f"{self.kind} {name!r} is registered as {target!r}, which cannot be imported: {exc}"
                    ) from exc
                target = obj
            self._loaded[name] = target
        return self._loaded[name]


ENCODERS = Registry("benchbox.encoders", "encoder")
TASKS = Registry("benchbox.tasks", "task")

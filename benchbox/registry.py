"""One registry for encoders and tasks, fed by entry points and imported lazily.

Built-in plugins are declared in ``pyproject.toml`` under the entry-point groups ``benchbox.encoders`` and
``benchbox.tasks`` exactly like third-party ones, so there is a single mechanism (modelled on
lm-evaluation-harness's ``lm_eval/api/registry.py``). Nothing is imported until a name is looked up.

Every entry knows its **provider**: the distribution that declares the entry point (name and version from
``importlib.metadata``'s ``EntryPoint.dist``), or ``local`` for names added at run time with
:meth:`Registry.register` (tests, notebooks, ``benchbox --include FILE``). Any entry can be named by its
qualified name ``PROVIDER:NAME`` (e.g. ``benchbox-toyplugin:tfidf``, ``benchbox:glove-bow``). A plain name
resolves by these rules (documented in ``docs/plugins.md``):

- one provider: that entry;
- a built-in (provider ``benchbox``) is never shadowed: the built-in wins, and the first lookup warns once
  (:class:`PluginWarning`) naming both providers and the qualified name that still reaches the other entry;
  :meth:`Registry.register` of a built-in name is an error;
- two or more third-party providers and no built-in: the plain name is ambiguous, an error naming every
  provider and their qualified names (nothing is chosen by installation order);
- re-registering a name from the same provider replaces it (re-running a notebook cell).

Loading an entry may raise anything (a plugin's module failing at import time): the exception is contained
in a :class:`BenchboxError` naming the entry and its provider, so ``benchbox list`` still lists the others.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.names import check_path_name

#: provider of the entries declared by benchbox's own ``pyproject.toml``; they can never be shadowed
BUILTIN = "benchbox"
#: provider of the entries added with :meth:`Registry.register`
LOCAL = "local"


class PluginWarning(UserWarning):
    """A plugin entry refused because it collides with a built-in name."""


class PluginDeprecationWarning(PluginWarning, FutureWarning):
    """A plugin uses a name of the plugin API that was renamed: it works for one more release (docs/plugins.md,
    "Compatibility"). A :class:`FutureWarning`, so that Python shows it outside ``__main__`` too."""


def renamed(old: str, new: str) -> None:
    """Warn that ``old`` (a renamed public argument of the plugin API, still accepted) is to be written ``new``:
    the compatibility promise of docs/plugins.md, said in one place. The command line says each once."""
    warnings.warn(f"{old} is deprecated: write {new}; the old name goes in the next release",
                  PluginDeprecationWarning, stacklevel=4)


def moved(old: str, new: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of the module ``old``, renamed ``new``: importing a name from the old module still
    works for one release, with one :func:`renamed` warning saying what to write."""

    def __getattr__(name: str) -> Any:
        value = getattr(importlib.import_module(new), name)  # an unknown name: AttributeError, as for any module
        renamed(f"{old}.{name}", f"{new}.{name}")
        return value

    return __getattr__


def normalise(provider: str) -> str:
    """A distribution name as PEP 503 compares it (``Benchbox_ToyPlugin`` == ``benchbox-toyplugin``)."""
    return re.sub(r"[-_.]+", "-", provider).lower()


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a target need not be hashable
class Entry:
    """One registered name: its target (an object, or a ``"module:attribute"`` string imported on first use)
    and who provides it."""

    name: str
    target: Any
    provider: str
    version: str = ""

    @property
    def qualified(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def source(self) -> str:
        """``provider version`` as ``benchbox list`` shows it."""
        return f"{self.provider} {self.version}".strip()

    @property
    def builtin(self) -> bool:
        return normalise(self.provider) == BUILTIN


class Registry:
    """Name → object, where each name may be provided by several distributions (see the module docstring)."""

    def __init__(self, group: str, kind: str, files: dict[str, str] | None = None) -> None:
        self.group = group
        self.kind = kind
        #: a file suffix → the ``module:function`` that loads an entry naming such a file of a package
        #: (``"PACKAGE:FILE.toml"``) as ``function(package, file, name)``
        self.files = dict(files or {})
        self._by_name: dict[str, list[Entry]] | None = None
        self._loaded: dict[Entry, Any] = {}
        self._warned: set[str] = set()

    def _entries(self) -> dict[str, list[Entry]]:
        if self._by_name is None:
            self._by_name = {}
            sources: dict[int, tuple[str, str]] = {}  # one metadata read per distribution, not per entry point
            for ep in entry_points(group=self.group):
                dist = ep.dist
                if dist is None:
                    provider, version = "unknown-distribution", ""
                else:
                    if id(dist) not in sources:
                        sources[id(dist)] = dist.metadata["Name"], dist.version
                    provider, version = sources[id(dist)]
                self._add(Entry(ep.name, ep.value, provider, version))
        return self._by_name

    def _add(self, entry: Entry) -> None:
        same = self._by_name.setdefault(entry.name, [])
        same[:] = [e for e in same if normalise(e.provider) != normalise(entry.provider)] + [entry]
        same.sort(key=lambda e: (not e.builtin, normalise(e.provider)))

    def register(self, name: str, target: Any, *, provider: str = LOCAL) -> None:
        """Add ``name`` at run time; ``target`` is an object or a ``"module:attribute"`` string imported lazily.
        A built-in name cannot be registered again (use another name); the same provider replaces its own."""
        if not name or ":" in name:
            raise BenchboxError(f"cannot register {self.kind} {name!r}: a name must be non-empty and have no ':'")
        if self.kind == "task":  # a task's name is a file name in every run (items/NAME.csv)
            check_path_name(name, "cannot register a task")
        existing = self._entries().get(name, [])
        if normalise(provider) != BUILTIN and any(e.builtin for e in existing):
            raise BenchboxError(f"cannot register {self.kind} {name!r} from {provider}: it is a built-in benchbox "
                                f"{self.kind}, which cannot be replaced; register it under another name")
        for entry in existing:
            self._loaded.pop(entry, None)
        self._add(Entry(name, target, provider))

    def unregister(self, name: str, *, provider: str = LOCAL) -> None:
        """Remove what ``provider`` registered as ``name`` at run time (tests, notebooks); a no-op if nothing was."""
        kept = [e for e in self._entries().get(name, []) if normalise(e.provider) != normalise(provider)]
        for entry in self._entries().get(name, []):
            if entry not in kept:
                self._loaded.pop(entry, None)
        if kept:
            self._by_name[name] = kept
        else:
            self._by_name.pop(name, None)

    def names(self) -> list[str]:
        """The plain names, sorted."""
        return sorted(self._entries())

    def entries(self) -> list[Entry]:
        """Every entry, by name, the one a plain name resolves to first."""
        return [e for name in self.names() for e in self._entries()[name]]

    def entries_named(self, name: str) -> list[Entry]:
        """The entries of a plain name, the one it resolves to first (empty if none)."""
        return list(self._entries().get(name, []))

    def _qualified(self, text: str) -> Entry | None:
        provider, sep, name = text.partition(":")
        if not sep:
            return None
        for entry in self._entries().get(name, []):
            if normalise(entry.provider) == normalise(provider):
                return entry
        return None

    def __contains__(self, name: str) -> bool:
        return name in self._entries() or self._qualified(name) is not None

    def resolve(self, name: str) -> Entry:
        """The entry a plain or qualified name selects; an unknown or ambiguous name raises a
        :class:`BenchboxError`."""
        qualified = self._qualified(name)
        if qualified is not None:
            return qualified
        candidates = self._entries().get(name)
        if not candidates:
            close = difflib.get_close_matches(name, self._entries(), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise BenchboxError(
                f"unknown {self.kind} {name!r}.{hint} Available: {', '.join(self.names()) or '(none)'}"
                f" (`benchbox list {self.kind}s`)."
            )
        first = candidates[0]
        if len(candidates) == 1:
            return first
        others = candidates[1:]
        if first.builtin:
            if name not in self._warned:
                self._warned.add(name)
                warnings.warn(
                    f"{self.kind} {name!r} from {', '.join(e.source for e in others)} is refused: the built-in "
                    f"{name!r} ({first.source}) cannot be shadowed; the plugin's stays reachable as "
                    f"{', '.join(e.qualified for e in others)}", PluginWarning, stacklevel=3)
            return first
        raise BenchboxError(
            f"{self.kind} {name!r} is provided by {' and '.join(e.source for e in candidates)}: choose one with "
            f"its qualified name, {' or '.join(e.qualified for e in candidates)}"
        )

    def get(self, name: str) -> Any:
        """The registered object for a plain or qualified ``name``, imported on first use. An unknown or
        ambiguous name, or a plugin that fails to import (any exception), raises a :class:`BenchboxError`."""
        return self.load(self.resolve(name))

    def load(self, entry: Entry) -> Any:
        """``entry``'s object; any exception while importing it becomes a one-line :class:`BenchboxError`."""
        if entry not in self._loaded:
            target = entry.target
            if isinstance(target, str):
                try:
                    module, _, attribute = target.partition(":")
                    loader = next((self.files[suffix] for suffix in self.files if attribute.endswith(suffix)), None)
                    target = (import_attribute(target) if loader is None
                              else import_attribute(loader)(module, attribute, entry.name))
                except (Exception, SystemExit) as exc:  # a plugin may raise (or exit) at import time: contain it
                    raise BenchboxError(
                        f"{self.kind} {entry.name!r} from {entry.source} ({target}) failed to load: "
                        f"{type(exc).__name__}: {exc}; fix or uninstall {entry.provider}"
                    ) from exc
            self._loaded[entry] = target
        return self._loaded[entry]


def import_attribute(reference: str, *, current_folder: bool = False) -> Any:
    """The object ``"package.module:attribute.path"`` names (raises what the import or lookup raises).
    ``current_folder``: a module a user names on the command line is also looked for in the current folder, after
    ``sys.path`` (as ``python -m`` finds it; the ``benchbox`` script alone would not)."""
    if current_folder and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    module_name, _, attribute = reference.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        obj = getattr(obj, part)
    return obj


ENCODERS = Registry("benchbox.encoders", "encoder")
#: a package's TOML task file registers each task it declares as ``NAME = "PACKAGE:FILE.toml"``
TASKS = Registry("benchbox.tasks", "task", files={".toml": "benchbox.tasks.declarative:packaged_task"})

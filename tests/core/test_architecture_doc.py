"""docs/architecture.md checked against the import rule's code (tests/core/test_architecture.py): the layers table
names every layer's modules, and the table of imports within ``tasks/`` and ``encoders/`` is the tree's."""

from __future__ import annotations

import re

from tests.core.test_architecture import LAYERS, ROOT, graph
from tests.helpers import markdown_table

DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def shown(module: str) -> str:
    """How the layers table names a layer's module: its file or folder in ``benchbox/`` (as installed)."""
    if module == "benchbox":
        return "__init__.py"
    name = module.removeprefix("benchbox.")
    return f"{name}/" if (ROOT / name).is_dir() or (ROOT / "benchbox" / name).is_dir() else f"{name}.py"


def test_the_layers_table_is_the_rules():
    documented = {int(row[0].split()[0]): set(re.findall(r"`([^`]+)`", row[1]))
                  for row in markdown_table(DOC, "| layer |")}
    wanted: dict[int, set[str]] = {}
    for module, level in LAYERS.items():
        wanted.setdefault(level, set()).add(shown(module))
    assert documented == wanted


def test_the_imports_within_the_plugin_packages_are_the_trees():
    documented = {row[0].strip("`"): re.findall(r"`([^`]+)`", row[1])
                  for row in markdown_table(DOC, "| module | imports")}
    edges = graph()
    wanted = {}
    for package in ("tasks", "encoders"):
        prefix = f"benchbox.{package}."
        for module, targets in edges.items():
            inside = sorted(t.removeprefix(prefix) for t in targets if t.startswith(prefix))
            if module.startswith(prefix) and inside:
                wanted[f"{package}/{module.removeprefix(prefix)}"] = inside
    assert documented == wanted

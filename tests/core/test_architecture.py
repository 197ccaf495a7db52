"""The import rule of docs/architecture.md: a module imports only from its own layer or the layers below it,
``tasks`` and ``encoders`` never import each other, and nothing imports ``commands`` but the CLI. Every
``import`` counts, including the lazy ones inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: source folder -> the package it is installed as (pyproject's package-dir)
PACKAGES = {"benchbox": "benchbox", "tasks": "benchbox.tasks", "reports": "benchbox.reports",
            "encoders": "benchbox.encoders"}
#: the layers, bottom first; a module not named here is in ``core``
LAYERS = {
    "core": 0,
    "benchbox.tasks": 1, "benchbox.encoders": 1,
    "benchbox.training": 3, "benchbox.evaluation": 3, "benchbox.reuse": 3, "benchbox.comparison": 3,
    "benchbox.include": 3, "benchbox.testing": 3,
    "benchbox.results": 3, "benchbox.neighbours": 3,
    "benchbox.reports": 4, "benchbox.tables": 4, "benchbox.study": 4,
    "benchbox.commands": 5, "benchbox.cli": 5, "benchbox.__main__": 5, "benchbox": 5,
}
#: layers that may not import each other although they are at one level
SIBLINGS_APART = {frozenset({"benchbox.tasks", "benchbox.encoders"})}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """The longest prefix of ``module`` that names a layer (``core`` for the rest of ``benchbox``)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS and (prefix != "benchbox" or module == "benchbox"):
            return prefix
    return "core"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(tree: ast.AST, package: str, modules: set[str] = frozenset()) -> list[tuple[int, str]]:
    """(line, module) of every benchbox module imported anywhere in ``tree``; ``from benchbox import x``
    counts as importing ``benchbox.x``, and so does ``from P import x`` where ``P.x`` is one of ``modules``.
    Imports for type checkers only (``if TYPE_CHECKING:``) are not dependencies and do not count."""
    found = []
    type_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                 for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "benchbox"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "benchbox":
                continue
            if base == "benchbox":
                found += [(node.lineno, f"benchbox.{a.name}") for a in node.names]
            elif any(f"{base}.{a.name}" in modules for a in node.names):
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names if f"{base}.{a.name}" in modules]
            else:
                found.append((node.lineno, base))
    return found


def sources() -> list[Path]:
    return sorted(p for folder in PACKAGES for p in (ROOT / folder).rglob("*.py"))


def violations() -> list[str]:
    out = []
    for path in sources():
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        mine = layer(name)
        for line, target in imported(ast.parse(path.read_text(encoding="utf-8")), package):
            theirs = layer(target)
            if theirs == mine:
                continue
            if LAYERS[theirs] > LAYERS[mine] or frozenset({mine, theirs}) in SIBLINGS_APART:
                out.append(f"{path.relative_to(ROOT)}:{line}: {name} ({mine}) imports {target} ({theirs})")
    return out


def test_every_import_follows_the_layers():
    assert violations() == []


def test_no_two_modules_import_each_other():
    modules = {module_name(p) for p in sources()}
    graph = {}
    for path in sources():
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {t for _, t in imported(ast.parse(path.read_text(encoding="utf-8")), package, modules)
                       if t in modules and t != name}
    both_ways = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph[b]})
    assert both_ways == []


def test_the_rule_catches_an_upward_and_a_sideways_import(tmp_path):
    tree = ast.parse("from benchbox.comparison.compare import compare\nimport benchbox.encoders.glove_bow\n")
    found = imported(tree, "benchbox.tasks")
    assert [layer(t) for _, t in found] == ["benchbox.comparison", "benchbox.encoders"]
    assert LAYERS[layer("benchbox.comparison.compare")] > LAYERS[layer("benchbox.tasks.sts")]
    assert frozenset({layer("benchbox.tasks.sts"), layer("benchbox.encoders.glove_bow")}) in SIBLINGS_APART
    assert layer("benchbox.stats") == "core" and layer("benchbox") == "benchbox"
    assert imported(ast.parse("from . import sts\n"), "benchbox.tasks") == [(1, "benchbox.tasks")]
    assert imported(ast.parse("if TYPE_CHECKING:\n    from benchbox.comparison.compare import Source\n"), "benchbox") == []


def test_every_module_of_the_tree_is_seen():
    names = {module_name(p) for p in sources()}
    assert {"benchbox.cli", "benchbox.tasks.sts", "benchbox.reports", "benchbox.training.trainer"} <= names

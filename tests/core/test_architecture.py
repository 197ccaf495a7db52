"""The import rule of docs/architecture.md: every module is in a layer and imports only from its own layer or the
layers below it; ``tasks`` and ``encoders``, ``stats`` and ``storage`` never import each other; no cycle of
imports, of any length, between modules or between packages (strongly connected components). Every ``import``
counts, including the lazy ones inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: source folder -> the package it is installed as (pyproject's package-dir)
PACKAGES = {"benchbox": "benchbox", "tasks": "benchbox.tasks", "reports": "benchbox.reports",
            "encoders": "benchbox.encoders"}
#: the layers, bottom first (docs/architecture.md, "Layers"); every module of the tree is in one, named here by
#: itself or by its package
LAYERS = {
    # 0 foundation: helpers that know no benchbox concept beyond errors and names
    "benchbox.errors": 0, "benchbox.names": 0, "benchbox.limits": 0, "benchbox.options": 0, "benchbox.suggest": 0,
    "benchbox.console": 0, "benchbox.formatting": 0, "benchbox.threads": 0, "benchbox.memory": 0,
    "benchbox.device": 0, "benchbox.processes": 0, "benchbox.registry": 0, "benchbox.embedding_checks": 0,
    "benchbox.lazy": 0, "benchbox.collector": 0,
    # 1 statistics and storage, which never import each other
    "benchbox.stats": 1, "benchbox.storage": 1,
    # 2 the encoder contract (the protocol, the adapter, typed options, loading), and the protocol's old name
    "benchbox.encoding": 2, "benchbox.encoder": 2,
    # 3 data access
    "benchbox.data": 3,
    # 4 the task contract (the protocol, options, metadata, the paired-test kinds, item checks), the old names of
    # three of its modules (task.py, task_options.py, paired_tests.py); run labels
    "benchbox.task_contract": 4, **{f"benchbox.{old}": 4 for old in ("task", "task_options", "paired_tests")},
    "benchbox.labels": 4,
    # 5 plugins: the protocols and the encoders
    "benchbox.tasks": 5, "benchbox.encoders": 5,
    # 6 workflows
    "benchbox.training": 6, "benchbox.evaluation": 6, "benchbox.reuse": 6, "benchbox.comparison": 6,
    "benchbox.include": 6, "benchbox.testing": 6, "benchbox.results": 6, "benchbox.neighbours": 6,
    # 7 presentation and studies
    "benchbox.reports": 7, "benchbox.tables": 7, "benchbox.study": 7, "benchbox.reproduce": 7,
    # 8 interface
    "benchbox.commands": 8, "benchbox.cli": 8, "benchbox.__main__": 8, "benchbox": 8,
}
#: layers that may not import each other although they are at one level
SIBLINGS_APART = {frozenset({"benchbox.tasks", "benchbox.encoders"}), frozenset({"benchbox.stats", "benchbox.storage"})}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str | None:
    """The longest prefix of ``module`` that names a layer; None for a module no layer names."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS and (prefix != "benchbox" or module == "benchbox"):
            return prefix
    return None


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


def graph() -> dict[str, set[str]]:
    """Each module of the tree → the modules of the tree it imports."""
    modules = {module_name(p) for p in sources()}
    found = {}
    for path in sources():
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found[name] = {t for _, t in imported(ast.parse(path.read_text(encoding="utf-8")), package, modules)
                       if t in modules and t != name}
    return found


def violations() -> list[str]:
    out = []
    for path in sources():
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        mine = layer(name)
        for line, target in imported(ast.parse(path.read_text(encoding="utf-8")), package):
            theirs = layer(target)
            if theirs == mine or theirs is None or mine is None:  # a module without a layer: its own test
                continue
            if LAYERS[theirs] > LAYERS[mine] or frozenset({mine, theirs}) in SIBLINGS_APART:
                out.append(f"{path.relative_to(ROOT)}:{line}: {name} ({mine}) imports {target} ({theirs})")
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of the graph ``edges`` that hold a cycle (two nodes or more), each
    sorted (Tarjan 1972, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def package_of(module: str, packages: set[str]) -> str:
    """The sub-package of ``benchbox`` that holds ``module`` (``benchbox.storage``), else the module itself."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and ".".join(parts[:2]) in packages else module


def test_every_module_is_in_a_layer():
    assert [name for name in sorted(module_name(p) for p in sources()) if layer(name) is None] == []


def test_every_import_follows_the_layers():
    assert violations() == []


def test_no_modules_import_each_other_through_a_cycle_of_any_length():
    assert cycles(graph()) == []


def test_no_packages_import_each_other_through_a_cycle_of_any_length():
    edges = graph()
    packages = {module_name(p) for p in sources() if p.name == "__init__.py"}
    between: dict[str, set[str]] = {}
    for source, targets in edges.items():
        mine = package_of(source, packages)
        between.setdefault(mine, set()).update(t for t in map(lambda t: package_of(t, packages), targets) if t != mine)
    assert cycles(between) == []


def test_the_cycle_finder_finds_long_cycles_and_only_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c", "a"}}) == [["a", "b"], ["c", "d", "e"]]
    packages = {"benchbox.data", "benchbox.storage"}
    assert package_of("benchbox.storage.runs", packages) == "benchbox.storage"
    assert package_of("benchbox.task_contract.protocol", packages) == "benchbox.task_contract.protocol"


def test_the_rule_catches_an_upward_and_a_sideways_import(tmp_path):
    tree = ast.parse("from benchbox.comparison.compare import compare\nimport benchbox.encoders.glove_bow\n")
    found = imported(tree, "benchbox.tasks")
    assert [layer(t) for _, t in found] == ["benchbox.comparison", "benchbox.encoders"]
    assert LAYERS[layer("benchbox.comparison.compare")] > LAYERS[layer("benchbox.tasks.sts")]
    assert frozenset({layer("benchbox.tasks.sts"), layer("benchbox.encoders.glove_bow")}) in SIBLINGS_APART
    assert LAYERS[layer("benchbox.data.root")] > LAYERS[layer("benchbox.storage.runs")]  # storage never reads data
    assert layer("benchbox.stats.pooling") == "benchbox.stats" and layer("benchbox") == "benchbox"
    assert layer("benchbox.encoders") == "benchbox.encoders" and layer("benchbox.encoding.protocol") == "benchbox.encoding"
    assert layer("benchbox.tasks.sts") == "benchbox.tasks"
    assert layer("benchbox.task_contract.protocol") == "benchbox.task_contract"
    assert layer("benchbox.unplaced") is None
    assert imported(ast.parse("from . import sts\n"), "benchbox.tasks") == [(1, "benchbox.tasks")]
    assert imported(ast.parse("if TYPE_CHECKING:\n    from benchbox.comparison.compare import Source\n"), "benchbox") == []


def test_every_module_of_the_tree_is_seen():
    names = {module_name(p) for p in sources()}
    assert {"benchbox.cli", "benchbox.tasks.sts", "benchbox.reports", "benchbox.training.trainer"} <= names

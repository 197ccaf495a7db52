"""``benchbox describe TASK``: everything a task declares (:class:`benchbox.task_contract.protocol.Task`), as plain text."""

from __future__ import annotations

from typing import Annotated

import typer

from benchbox.console import out
from benchbox.data.root import published_sha256
from benchbox.errors import BenchboxError
from benchbox.registry import TASKS
from benchbox.task_contract.protocol import DataFile, TaskGroup, task_class
from benchbox.task_contract.options import TaskOptions, option_values


def describe_lines(name: str) -> list[str]:
    """The description of task (or group) ``name``: metrics with their tests, main score, options with defaults
    and ranges, data files, licence, version and citation."""
    target = TASKS.get(name)
    if isinstance(target, TaskGroup):
        return [f"{name}: group of {', '.join(target.members)}", *([target.description] if target.description else [])]
    task = task_class(name)
    if task is None:
        raise BenchboxError(f"{name!r} is registered as {target!r}, which is not a benchbox Task")
    lines = [f"{name}: {task.description}", f"  group: {task.group} (order {task.order}); version {task.version}",
             f"  main score: {task.main_score}; splits: {', '.join(task.splits)}"]
    if task.item_kind:
        lines.append(f"  per-item rows: {task.item_kind}; paired on {', '.join(task.item_keys)}")
    lines.append("  metrics:")
    for m in task.metrics:
        direction = "higher is better" if m.higher_is_better else "lower is better"
        test = f"paired test: {m.kind}" if m.kind else "not tested"
        lines.append(f"    {m.name}: {m.unit}, {direction}, {test}{', summary unit' if m.summary else ''}"
                     f"{'; ' + m.description if m.description else ''}")
    lines.append("  options (-t TASK:KEY=VALUE):" if task.options else "  options: none")
    for o in task.options:
        lines.append(f"    {o.name}: {o.describe()}{'; ' + o.help if o.help else ''}")
    declared = [f for f in task.data_files if isinstance(f, DataFile)]
    files = [f for f in task().required_files(option_values(task, TaskOptions())) if f not in {d.path for d in declared}]
    lines.append("  data files (default options):" if files or declared else "  data files: none")
    expected = published_sha256()
    lines += [f"    {f}{' sha256 ' + expected[f] if f in expected else ' (no published checksum)'}" for f in files]
    for f in declared:
        where = f" (in {f.package_dir})" if f.package_dir else ""
        lines.append(f"    {f.path}{where}{' sha256 ' + f.sha256 if f.sha256 else ''}")
    lines.append(f"  license: {task.license or 'not stated'}")
    if task.reference:
        lines.append(f"  reference: {task.reference}")
    if task.citation:
        lines.append("  citation:")
        lines += ["    " + line for line in task.citation.splitlines()]
    return lines


def describe_command(task: Annotated[str, typer.Argument(help="Task or group name (`benchbox list tasks`).")]) -> None:
    """Show a task's metrics (with their paired tests), main score, options, data files, licence and citation."""
    out.print("\n".join(describe_lines(task)), highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("describe")(describe_command)

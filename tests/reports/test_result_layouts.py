"""The report's own layouts (the paper's tables) name groups and metrics that benchbox's tasks declare: the groups
are read off the task classes, and every metric a layout shows is declared by a task of its group, so renaming
one in a task cannot silently empty a section."""

from __future__ import annotations

from benchbox.registry import TASKS
from benchbox.reports import results
from benchbox.task_contract.protocol import task_class


def declared() -> dict[str, set[str]]:
    """Each group of benchbox's own tasks → the metrics its tasks declare."""
    found: dict[str, set[str]] = {}
    for entry in TASKS.entries():
        cls = task_class(entry.name) if entry.builtin else None
        if cls is not None:
            found.setdefault(cls.group, set()).update(spec.name for spec in cls.metrics)
    return found


def test_every_laid_out_group_and_metric_is_declared_by_a_task():
    groups = declared()
    assert set(results.LAID_OUT) <= set(groups)
    assert set(results.RETRIEVAL_METRICS) <= groups[results.RETRIEVAL]
    assert set(results.TRANSFER_METRICS) <= groups[results.TRANSFER]
    assert set(results.STRUCTURE_METRICS) <= groups[results.STRUCTURE]
    assert "pearson" in groups[results.SEMANTIC]

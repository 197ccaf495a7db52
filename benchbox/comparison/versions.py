"""The versions two compared runs were computed with, where they differ: benchbox's, and per task compared its
declared ``version`` (bumped when its numbers change) and, for a plugin's task, its package's version. Runs of
different versions still compare (their protocols and data agree, :func:`benchbox.comparison.compare.protocol_mismatches`),
but a difference between them may come from the versions alone: ``compare`` says so in one line per pair and records
each difference (docs/schema.md, "Compare JSON": ``version_differences``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchbox.registry import BUILTIN, normalise

if TYPE_CHECKING:
    from benchbox.comparison.sources import Source

#: the fields of one recorded difference
VERSION_FIELDS = ("model_a", "model_b", "what", "task", "version_a", "version_b")


def _versions(source: Source, tasks: list[str]) -> dict[tuple[str, str | None], str | None]:
    """(what, task) → the version ``source``'s run recorded (None: not recorded)."""
    record = source.run.record
    found: dict[tuple[str, str | None], str | None] = {("benchbox", None): record.benchbox_version}
    for task in tasks:
        entry = record.tasks.get(task)
        if entry is None:
            continue
        found[("task version", task)] = entry.version
        provider = entry.implementation.get("provider")
        if isinstance(provider, dict) and provider.get("distribution") and \
                normalise(str(provider["distribution"])) != BUILTIN:
            found[(f"task package {provider['distribution']}", task)] = \
                None if provider.get("version") is None else str(provider["version"])
    return found


def version_differences(a: Source, b: Source, tasks: list[str]) -> list[dict[str, Any]]:
    """Each version (of ``VERSION_FIELDS``' ``what``) that the runs of ``a`` and ``b`` recorded differently for
    ``tasks``; none when either is published numbers."""
    if a.run is None or b.run is None:
        return []
    va, vb = _versions(a, tasks), _versions(b, tasks)
    return [dict(zip(VERSION_FIELDS, (a.label, b.label, what, task, va.get((what, task)), vb.get((what, task)))))
            for what, task in dict.fromkeys([*va, *vb]) if va.get((what, task)) != vb.get((what, task))]


def version_lines(differences: list[dict[str, Any]]) -> list[str]:
    """One line per pair of models whose runs differ in a version."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for d in differences:
        where = d["what"] if d["task"] is None else f"{d['task']} {d['what']}"
        pairs.setdefault((d["model_a"], d["model_b"]), []).append(
            f"{where} {d['version_a'] or 'unrecorded'} vs {d['version_b'] or 'unrecorded'}")
    return [f"{a} vs {b} were computed by different versions: {', '.join(found)}; a difference may come from "
            "them alone" for (a, b), found in pairs.items()]

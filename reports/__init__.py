"""Report rendering: markdown and self-contained HTML with figures (``benchbox report``).

``write_report(["runs/a", "runs/b"], "report.html", compare=True, references=["paper:merkx2019/glove-bow"])``
opens the runs, optionally compares them (:func:`benchbox.comparison.compare.compare`), builds the format-neutral
:class:`~benchbox.reports.document.Report` (:func:`~benchbox.reports.build.build_report`) and renders it.
Output is deterministic: the same runs give byte-identical files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchbox.errors import BenchboxError

FORMATS = {"md": (".md", ".markdown"), "html": (".html", ".htm")}


def resolve_format(fmt: str | None, out: Path | None) -> str:
    """``fmt`` if given, else from ``out``'s suffix, else markdown; a clear error for anything else."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise BenchboxError(f"unknown report format {fmt!r}: use {' or '.join(FORMATS)}")
        return fmt
    if out is not None:
        for name, suffixes in FORMATS.items():
            if out.suffix.lower() in suffixes:
                return name
        raise BenchboxError(f"cannot tell the report format from {out.name!r}: give --format md or --format html")
    return "md"


def write_report(
    runs: list[str | os.PathLike],
    out: str | os.PathLike | None = None,
    *,
    fmt: str | None = None,
    compare: bool = False,
    references: list[str] | None = None,
    neighbours: list[str | os.PathLike] | None = None,
    log: Callable[[str], None] = lambda message: None,
    seeds: dict[str, list[str]] | None = None,
    comparison: Any = None,
    settings: Any = None,
) -> Path:
    """Render a report on ``runs`` (run folders, or folders of runs) to ``out`` (default ``report.md`` /
    ``report.html``) and return its path. ``compare``: add pairwise significance tests between the evaluation
    runs and references; ``references``: published comparators (``paper:merkx2019/<model>``, ``mteb:PATH``);
    ``neighbours``: ``benchbox neighbours --json`` files to show as tables; ``log``: progress messages; ``seeds``: declared seed
    groups for the claims (:func:`benchbox.comparison.compare.compare`); ``settings``: how ``compare`` tests and
    corrects (a :class:`benchbox.comparison.settings.CompareSettings`; default: compare's defaults); ``comparison``: a comparison already made of
    these runs (a :class:`benchbox.comparison.compare.Comparison`, labelled as the report labels runs), rendered as it is
    instead of ``compare`` making one, so that a study's report and its ``comparison.json`` are one answer."""
    from benchbox.reports import html, markdown
    from benchbox.reports.build import build_report
    from benchbox.reports.significance import compare_pairs
    from benchbox.storage.atomic import write_text
    from benchbox.storage.outdir import output_file_lock
    from benchbox.comparison.sources import reference_sources, resolve_sources

    out_path = Path(out) if out is not None else None
    fmt = resolve_format(fmt, out_path)
    out_path = out_path or Path(f"report{FORMATS[fmt][0]}")
    if not runs:
        raise BenchboxError("no run given: pass one or more run folders (e.g. runs/<run-id>)")
    sources = resolve_sources(list(runs))
    sources += [source for name in references or [] for source in reference_sources(name, log=log)]
    with output_file_lock(out_path, "--out"):  # checked writable before the work, locked while written
        if compare and comparison is None:
            comparison = compare_pairs([s for s in sources if s.run is None or s.run.kind == "eval"], log, seeds,
                                       settings)
        report = build_report(sources, comparison, [str(p) for p in neighbours or []])
        if fmt == "html":
            write_text(out_path, html.render(report))
            return out_path
        return markdown.write(report, out_path)


__all__ = ["FORMATS", "resolve_format", "write_report"]

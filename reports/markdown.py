"""GitHub-flavoured markdown: ``report.md`` plus its figures as SVG files in ``<stem>_figures/``, linked relatively.

Every value printed by the template is escaped for markdown by the environment's ``finalize`` hook (a
default-escape design, like HTML autoescaping, but no HTML entities: the file stays readable as text, ``<0.001``
and ``R&D`` as they are). Markdown-significant characters get a backslash (CommonMark 0.31, "Backslash
escapes"), and so do ``<`` where it could open raw HTML or an autolink and ``&`` where it could start an entity
reference, so that a run name or sentence cannot open a link, a table cell, emphasis or raw HTML.
Only :class:`markupsafe.Markup` values (markdown the renderer made itself) pass through.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from benchbox.storage.atomic import write_text
from benchbox.reports.document import Figure, Report

#: characters with a meaning in GitHub markdown anywhere in a line
INLINE = re.compile(r"([\\`*_\[\]|~])")
#: ``<`` that could open an HTML tag, comment, declaration or autolink (CommonMark: ``<`` then a letter, ``/``,
#: ``!`` or ``?``) and ``&`` that could start an entity or numeric character reference
HTML_START = re.compile(r"(<(?=[A-Za-z/!?])|&(?=#?\w+;))")
#: markers that only mean something at the start of a line: headings, bullets, block quotes, thematic breaks
LINE_START = re.compile(r"^(\s*)([#+\-](?=\s|$)|>|[-=](?=[-=\s]*$))")
#: ordered-list markers ("1. ", "2) "): the punctuation is escaped, digits cannot be
ORDERED = re.compile(r"^(\s*\d+)([.)])(?=\s|$)")


def escape(value: Any) -> str:
    """``value`` as literal markdown text on one line."""
    text = " ".join(str(value).split()) if value is not None else ""
    text = INLINE.sub(r"\\\1", text)
    text = HTML_START.sub(r"\\\1", text)
    text = LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return ORDERED.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def _finalize(value: Any) -> str:
    return str(value) if isinstance(value, Markup) else escape(value)


def anchor(title: str) -> str:
    """GitHub's heading anchor for a (static) section title."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def figures_dir(out: Path) -> Path:
    return out.with_name(f"{out.stem}_figures")


def figure_path(out: Path, figure: Figure) -> Path:
    return figures_dir(out) / f"{figure.slug}.svg"


def render(report: Report, out: Path) -> str:
    """The markdown text of ``report``, whose figures will lie in :func:`figures_dir` of ``out``."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchbox.reports", "templates"), autoescape=False,
                             finalize=_finalize, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["anchor"] = lambda title: Markup(anchor(title))
    env.filters["figure_link"] = lambda figure: Markup(
        quote(f"{figures_dir(out).name}/{figure_path(out, figure).name}"))
    env.filters["alignment"] = lambda numeric: Markup("|".join(" ---: " if n else " --- " for n in numeric))
    return env.get_template("report.md.j2").render(report=report)


def write(report: Report, out: Path) -> Path:
    """Write ``out`` and its figure files (stale figures of an earlier report are removed)."""
    folder = figures_dir(out)
    if folder.is_dir():
        for old in folder.glob("*.svg"):
            old.unlink()
    written: list[Path] = []
    try:
        if report.figures:
            folder.mkdir(parents=True, exist_ok=True)
            for figure in report.figures:
                write_text(figure_path(out, figure), figure.svg)
                written.append(figure_path(out, figure))
        write_text(out, render(report, out))
    except BaseException:  # a full disk, an interrupt: no figures without their report
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return out

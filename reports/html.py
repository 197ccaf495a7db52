"""One self-contained HTML file: inline CSS and SVG, no scripts, fonts or other network resources.

Jinja2 autoescaping escapes every value; the only markup let through is each figure's SVG (made by
:mod:`benchbox.reports.svg`, whose text matplotlib escapes as XML). Tables sit in horizontally scrolling
regions for narrow screens, have captions and ``th`` cells with ``scope``; figures carry ``role="img"``, a
``<title>`` and a text description.
"""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from benchbox.reports.document import Figure, Report
from benchbox.reports.svg import inline


def render(report: Report) -> str:
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchbox.reports", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["inline_svg"] = lambda figure: Markup(inline(figure.svg)) if isinstance(figure, Figure) else ""
    return env.get_template("report.html.j2").render(report=report)

"""Matplotlib figures as byte-stable, accessible SVG that can be inlined in HTML or written beside markdown.

Determinism: a fixed ``svg.hashsalt`` (ids of clip paths) and no ``Date``/``Creator`` metadata. Text stays text
(``svg.fonttype = none``; matplotlib escapes it as XML) and is never parsed as mathtext, so a ``$`` in a run
name is shown as it is. Every id is prefixed with the figure's slug so that several figures can share one HTML
page, and the root element gets ``role="img"``, a ``<title>`` and a ``<desc>`` for screen readers.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape

import matplotlib
from matplotlib.figure import Figure

RC = {
    "svg.hashsalt": "benchbox-report",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@contextmanager
def figure_context() -> Iterator[None]:
    """The report's matplotlib settings, for building and saving a figure (nothing global changes)."""
    with matplotlib.rc_context(RC):
        yield


def to_svg(fig: Figure, slug: str, title: str, description: str) -> str:
    """``fig`` as a standalone SVG document with ``<title>`` and ``<desc>`` (call inside :func:`figure_context`)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{slug}-{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{slug}-{m.group(1)})", text)
    text = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{slug}-{m.group(1)}"', text)
    # matplotlib's stylesheet applies to "*": scope it to this figure, which may share a page with others
    text = text.replace('<style type="text/css">*{', f'<style type="text/css">#{slug}-figure *{{')
    opening = re.search(r"<svg\b[^>]*>", text)
    assert opening is not None, "matplotlib wrote no <svg> element"
    root = opening.group(0)[:-1] + f' id="{slug}-figure" role="img" aria-labelledby="{slug}-title" aria-describedby="{slug}-desc">'
    heading = f'\n <title id="{slug}-title">{escape(title)}</title>\n <desc id="{slug}-desc">{escape(description)}</desc>'
    return text[: opening.start()] + root + heading + text[opening.end():]


def inline(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration or doctype), for embedding in HTML."""
    return svg[svg.index("<svg"):].strip()

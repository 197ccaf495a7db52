"""The format-neutral report: sections of paragraphs, bullet lists, tables and figures.

Builders fill these with plain (untrusted) strings; the markdown and HTML renderers escape every one of them.
Only figures carry markup (SVG made by :mod:`benchbox.reports.figures`, whose text matplotlib escapes).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: str = "paragraph"


@dataclass(frozen=True)
class Bullets:
    items: list[str]
    kind: str = "bullets"


@dataclass(frozen=True)
class Table:
    """A table whose first ``row_headers`` columns label the row (rendered as ``<th scope="row">``)."""

    caption: str
    header: list[str]
    rows: list[list[str]]
    #: per column: right-align (numbers)
    numeric: list[bool] = field(default_factory=list)
    row_headers: int = 1
    kind: str = "table"

    def __post_init__(self) -> None:
        if not self.numeric:
            object.__setattr__(self, "numeric", [False] * len(self.header))
        assert all(len(row) == len(self.header) for row in self.rows), "ragged table"


@dataclass(frozen=True)
class Figure:
    """An SVG figure: ``slug`` names its file beside a markdown report; ``alt`` describes it in words."""

    slug: str
    title: str
    alt: str
    svg: str
    caption: str = ""
    kind: str = "figure"


Block = Paragraph | Bullets | Table | Figure


@dataclass(frozen=True)
class Section:
    """``collapsed``: reference material (an appendix) that HTML shows folded in a ``<details>`` element."""

    slug: str
    title: str
    blocks: list[Block]
    collapsed: bool = False


@dataclass(frozen=True)
class Report:
    title: str
    intro: list[str]
    sections: list[Section]
    #: the answer first, above the intro: one plain sentence per claim (:func:`benchbox.comparison.claims.verdict`)
    verdicts: list[str] = field(default_factory=list)

    @property
    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]

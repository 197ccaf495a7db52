"""The reproduction table as the terminal shows it, as markdown and HTML (each with the figure: published
against reproduced, per cell) and as JSON (``reproduction.json``: the rows of
:func:`benchbox.reproduce.run.reproduction_rows`, NaN as null)."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchbox import formatting
from benchbox.reproduce.run import ModelPlan

#: the columns of the table: heading → how a row shows it
COLUMNS = ("table", "row", "task/subset/metric", "published", "benchbox (95% CI)", "difference (95% CI)", "verdict",
           "departures")


@dataclass(frozen=True)
class AsPublished:
    """The :class:`benchbox.formatting.Display` of a reproduction row: numbers in the paper's own units (no
    scaling), the published value, benchbox's and their difference at one precision, that of the row's largest
    number (four significant digits, :func:`benchbox.formatting.decimals`)."""

    decimals: int | None = None
    scale: float = 1.0

    @classmethod
    def of(cls, row: dict[str, Any]) -> AsPublished:
        shown = [float(row[k]) for k in ("published", "value") if row[k] is not None and math.isfinite(row[k])]
        return cls(formatting.decimals(cls(), *shown))


def cells(row: dict[str, Any]) -> list[str]:
    """A row's cells, in :data:`COLUMNS` order (plain text)."""
    what = f"{row['task']}/{row['subset']}/{row['metric']}"
    if row["benchbox_metric"] != row["metric"]:
        what += f" (benchbox {row['benchbox_metric']})"
    spec = AsPublished.of(row)
    return [row["table"], row["row"], what,
            formatting.with_interval(row["published"], row["published_low"], row["published_high"], spec),
            formatting.with_interval(row["value"], row["low"], row["high"], spec),
            formatting.with_interval(row["difference"], row["difference_low"], row["difference_high"], spec),
            row["words"], "; ".join(row["departures"]) or "none"]


def plan_lines(plans: list[ModelPlan]) -> list[str]:
    """The plan, one line per model (the first screen of every run, and ``--plan``)."""
    lines = []
    for plan in plans:
        line = f"{plan.model.label} ({plan.model.encoder}, tasks {', '.join(plan.model.tasks)}): {plan.state}"
        if plan.needs:
            line += f": {plan.needs}"
        elif plan.model.train is not None:
            line += f"; trains here (full-size on a GPU ≈ {plan.model.gpu_hours:g} GPU-hours)" if plan.model.gpu_hours \
                else "; trains here"
        if plan.departures:
            line += f"; departures: {'; '.join(plan.departures)}"
        lines.append(line)
    return lines


def write_json(rows: list[dict[str, Any]], path: Path, paper: str) -> None:
    from benchbox.storage.jsonio import write_json as write

    clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()} for row in rows]
    write(path, {"paper": paper, "cells": clean}, sort_keys=True)


def figure_svg(rows: list[dict[str, Any]], title: str) -> str:
    """Published (open circle) and benchbox (dot, with its 95% interval) per compared cell, one panel per table."""
    from matplotlib.figure import Figure

    from benchbox.reports.svg import figure_context, to_svg

    shown = [r for r in rows if not math.isnan(r["value"]) and not math.isnan(r["published"])]
    tables = list(dict.fromkeys(r["table"] for r in shown)) or ["(no cell compared)"]
    with figure_context():
        fig = Figure(figsize=(6.5, 1.2 + 0.28 * max(1, len(shown))))
        axes = fig.subplots(len(tables), 1, squeeze=False)[:, 0]
        for ax, name in zip(axes, tables):
            mine = [r for r in shown if r["table"] == name]
            labels = [f"{r['row']} · {r['subset']} · {r['benchbox_metric']}" for r in mine]
            ys = list(range(len(mine)))
            for y, r in zip(ys, mine):
                low = r["low"] if not math.isnan(r["low"]) else r["value"]
                high = r["high"] if not math.isnan(r["high"]) else r["value"]
                ax.plot([low, high], [y, y], color="tab:blue", linewidth=1.5)
                if not math.isnan(r["published_low"]):
                    ax.plot([r["published_low"], r["published_high"]], [y + 0.2, y + 0.2], color="0.5", linewidth=1)
            ax.scatter([r["value"] for r in mine], ys, color="tab:blue", zorder=3, label="benchbox (95% CI)")
            ax.scatter([r["published"] for r in mine], [y + 0.2 for y in ys], facecolors="none", edgecolors="black",
                       zorder=3, label="published")
            ax.set_yticks(ys, labels)
            ax.invert_yaxis()
            ax.set_title(name, loc="left")
            if mine:
                ax.legend(loc="lower right", fontsize=7, frameon=False)
        fig.tight_layout()
        return to_svg(fig, "reproduction", title, "published value against benchbox's, with its 95% interval, "
                      "for every cell of the paper that ran")


def markdown(title: str, citation: str, plans: list[str], rows: list[dict[str, Any]], figure: str | None) -> str:
    from benchbox.reports.markdown import escape

    lines = [f"# Reproduction: {escape(title)}", "", escape(citation), "", "## Plan", ""]
    lines += [f"- {escape(line)}" for line in plans]
    lines += ["", "## Cells", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(escape(c).replace("|", "\\|") for c in cells(row)) + " |" for row in rows]
    lines += ["", "Verdicts: docs/protocols.md#reproduction-verdicts (TOST at 5% against each table's margin)."]
    if figure:
        lines += ["", f"![published against benchbox]({figure})"]
    return "\n".join(lines) + "\n"


def html_page(title: str, citation: str, plans: list[str], rows: list[dict[str, Any]], svg: str) -> str:
    from benchbox.reports.svg import inline

    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells(row)) + "</tr>" for row in rows)
    plan = "".join(f"<li>{e(line)}</li>" for line in plans)
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Reproduction: {e(title)}</title>"
            f"</head><body><h1>Reproduction: {e(title)}</h1><p>{e(citation)}</p><h2>Plan</h2><ul>{plan}</ul>"
            f"<h2>Cells</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<figure>{inline(svg)}</figure></body></html>\n")


def write_reports(out: Path, title: str, citation: str, plans: list[str], rows: list[dict[str, Any]],
                  paper: str) -> dict[str, Path]:
    """``reproduction.json``, ``reproduction.md`` (with ``reproduction.svg`` beside it) and ``reproduction.html``
    (the figure inlined) in ``out``."""
    from benchbox.storage.atomic import write_text

    svg = figure_svg(rows, f"{title}: published against benchbox")
    paths = {"json": out / "reproduction.json", "markdown": out / "reproduction.md", "html": out / "reproduction.html",
             "figure": out / "reproduction.svg"}
    write_json(rows, paths["json"], paper)
    write_text(paths["figure"], svg)
    write_text(paths["markdown"], markdown(title, citation, plans, rows, paths["figure"].name))
    write_text(paths["html"], html_page(title, citation, plans, rows, svg))
    return paths

"""A leaderboard (:class:`benchbox.comparison.leaderboard.Board`) shown: the cells of the terminal table and one
self-contained HTML page (inline CSS and script, a Content-Security-Policy that forbids every network
resource): columns sortable by a click on their header, each model's 95% rank interval drawn as a bar over the
ranks, and the method stated under the table."""

from __future__ import annotations

import math
from typing import Any

import jinja2
import pandas as pd

from benchbox import formatting
from benchbox.comparison.leaderboard import Board
from benchbox.task_contract.protocol import MetricSpec

#: the overall score and the Borda count, as shown
OVERALL = MetricSpec("overall", unit="r", scale=100, decimals=1)
BORDA = MetricSpec("borda", unit="value", decimals=1)
UNPAIRED = "published, unpaired"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def rank_text(row: pd.Series) -> str:
    """``2 [1–3]``; ``—`` for a row without a rank (unpaired, or a group task missing)."""
    if _missing(row["rank"]):
        return formatting.MISSING
    return f"{int(row['rank'])} [{int(row['rank_low'])}–{int(row['rank_high'])}]"


def rank_all_text(row: pd.Series) -> str:
    """The rank among the standard runs and the published rows, ``3 [1–7]``; ``—`` without one."""
    if _missing(row["rank_all"]):
        return formatting.MISSING
    return f"{int(row['rank_all'])} [{int(row['rank_all_low'])}–{int(row['rank_all_high'])}]"


def overall_text(row: pd.Series) -> str:
    """The overall score with its interval; without one, ``— (no sts12 (spearman_mean))``: why."""
    if _missing(row["overall"]) and row.get("no_overall"):
        return f"{formatting.MISSING} ({row['no_overall']})"
    return formatting.with_interval(row["overall"], row["overall_low"], row["overall_high"], OVERALL)


def borda_text(row: pd.Series) -> str:
    if _missing(row["borda"]):
        return formatting.MISSING
    return f"{formatting.with_interval(row['borda'], row['borda_low'], row['borda_high'], BORDA)} " \
           f"(#{int(row['borda_rank'])})"


def cell(row: pd.Series, task: str, spec: MetricSpec) -> str:
    """``81.2 [79.0, 83.1] ±0.4``: the main score, its interval and the seeds' standard deviation (× 100 for
    correlations, as the reports show them)."""
    text = formatting.with_interval(row[task], row[f"{task}_low"], row[f"{task}_high"], spec)
    sd = row[f"{task}_sd"]
    return text if _missing(sd) else f"{text} ±{formatting.number(sd, spec)}"


def model_text(row: pd.Series) -> str:
    """The model's name (a seed group's says its seeds), published numbers labelled unpaired."""
    return row["label"] if row["paired"] else f"{row['label']} ({UNPAIRED})"


def pipe_table(headers: list[str], rows: list[list[str]]) -> str:
    """A pipe table for the terminal (and GitHub markdown): cells as they read, only ``|`` and line breaks
    escaped, so that intervals keep their brackets."""
    def clean(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(clean(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return "\n".join(lines + ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows])


#: the header of the rank among every standard run and published row (shown when there is one)
AMONG_ALL = "rank among all [95%, approx.]"


def headers(board: Board) -> list[str]:
    return ["rank [95%]", *([AMONG_ALL] if board.among_all else []), "model", "protocol",
            *(c.header for c in board.columns), f"overall ({board.overall_over}, ×100)", "Borda [95%] (#)", "group"]


def text_rows(board: Board, specs: dict[str, MetricSpec]) -> list[list[str]]:
    """The terminal table's cells, one list per row (:func:`headers`)."""
    return [[rank_text(row), *([rank_all_text(row)] if board.among_all else []), model_text(row), row["protocol"],
             *(cell(row, c.task, specs[c.task]) for c in board.columns),
             overall_text(row), borda_text(row), row["group"] or formatting.MISSING]
            for _, row in board.frame.iterrows()]


def html_page(board: Board, specs: dict[str, MetricSpec]) -> str:
    """The leaderboard as one HTML page (module docstring)."""
    frame = board.frame
    ranked = frame["rank_high"].dropna()
    most = int(ranked.max()) if len(ranked) else 1
    rows = []
    for (_, row), cells in zip(frame.iterrows(), text_rows(board, specs)):
        sort_keys = [row["rank"], *([row["rank_all"]] if board.among_all else []), row["label"], row["protocol"],
                     *(row[c.task] for c in board.columns),
                     row["overall"], row["borda"], row["group"]]
        bar = None
        if not _missing(row["rank"]):
            bar = {"left": 100 * (row["rank_low"] - 1) / most, "width": 100 * (row["rank_high"] - row["rank_low"] + 1) / most,
                   "point": 100 * (row["rank"] - 0.5) / most}
        rows.append({"cells": cells, "keys": ["" if _missing(k) else k for k in sort_keys], "bar": bar,
                     "unpaired": not row["paired"], "citation": row["citation"]})
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchbox.reports", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    numeric = [True, *([True] if board.among_all else []), False, False, *(True for _ in board.columns), True, True,
               False]
    return env.get_template("leaderboard.html.j2").render(
        headers=headers(board), numeric=numeric, rows=rows, method=board.method(), notes=board.notes,
        standings=board.standings, ranks=most, group=board.overall_over)

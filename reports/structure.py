"""The report's structure section (Bordes et al. 2019, Table 2): E_intra, E_inter, their difference and ρ_vis
per model with 95% bootstrap intervals, a figure of the same, and optional nearest-neighbour tables (their
Table 3) from ``benchbox neighbours --json`` output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure

from benchbox.errors import BenchboxError
from benchbox import formatting as fmt
from benchbox.reports.document import Block, Figure, Paragraph, Section, Table
from benchbox.reports.figures import COLORS, WIDTH
from benchbox.reports.results import STRUCTURE, STRUCTURE_METRICS
from benchbox.reports.svg import figure_context, to_svg

#: metric → column heading, in the paper's order
STRUCTURE_HEADINGS = dict(zip(STRUCTURE_METRICS, ("E_intra", "E_inter", "E_intra − E_inter", "ρ_vis",
                                                  "ρ_vis (image side)")))


def structure_rows(data: pd.DataFrame) -> pd.DataFrame:
    return data[data["metric"].isin(STRUCTURE_METRICS) & (data["group"] == STRUCTURE)]


def structure_table(rows: pd.DataFrame) -> Table:
    metrics = [m for m in STRUCTURE_HEADINGS if m in set(rows["metric"])]
    body = []
    for task in rows["task"].unique():
        part = rows[rows["task"] == task]
        for label in part.sort_values("source_rank", kind="stable")["label"].unique():
            mine = part[part["label"] == label].set_index("metric")
            body.append([task, label] + [
                fmt.with_interval(*mine.loc[m, ["value", "ci_low", "ci_high", "spec"]]) if m in mine.index else fmt.MISSING
                for m in metrics])
    return Table(caption="Structure of the caption space (Bordes et al. 2019, Table 2): mean cosine within an "
                         "image's captions and between images' captions, their difference, and ρ_vis (Pearson of "
                         "caption and image-feature cosines over caption pairs of different images), with 95% "
                         "bootstrap intervals over images",
                 header=["Task", "Model", *[STRUCTURE_HEADINGS[m] for m in metrics]], rows=body,
                 numeric=[False, False] + [True] * len(metrics), row_headers=2)


def structure_figure(rows: pd.DataFrame) -> Figure:
    """One panel per metric, a horizontal bar per (task, model) with its 95% interval."""
    metrics = [m for m in STRUCTURE_HEADINGS if m in set(rows["metric"])]
    keys = list(dict.fromkeys(zip(rows["task"], rows["label"])))
    title = "Caption-space structure"
    alt = (f"Bar charts, one panel each for {', '.join(STRUCTURE_HEADINGS[m] for m in metrics)}, one bar per "
           f"model and task ({', '.join(f'{l} on {t}' for t, l in keys)}), with 95% interval whiskers. "
           "The same numbers are in the table above.")
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 0.8 + 0.35 * len(keys) * len(metrics)), layout="constrained")
        axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
        for ax, metric in zip(axes, metrics):
            part = rows[rows["metric"] == metric].set_index(["task", "label"])
            present = [key for key in keys if key in part.index]
            value = np.array([float(part.loc[key, "value"]) for key in present])
            low = np.array([float(part.loc[key, "ci_low"]) for key in present])
            high = np.array([float(part.loc[key, "ci_high"]) for key in present])
            y = np.arange(len(present))
            ax.barh(y, value, color=[COLORS[keys.index(k) % len(COLORS)] for k in present], alpha=0.85)
            ax.errorbar(value, y, xerr=np.nan_to_num(np.abs(np.vstack([value - low, high - value]))), fmt="none",
                        ecolor="#222222", elinewidth=0.7, capsize=1.5)
            ax.set_yticks(y, [f"{label} ({task})" for task, label in present])
            ax.invert_yaxis()
            ax.axvline(0, color="#444444", linewidth=0.6)
            ax.set_xlabel(STRUCTURE_HEADINGS[metric])
            ax.grid(axis="x", color="#dddddd", linewidth=0.5)
            ax.set_axisbelow(True)
        svg = to_svg(fig, "structure", title, alt)
    return Figure(slug="structure", title=title, alt=alt, svg=svg, caption="Whiskers: 95% bootstrap intervals over images.")


def neighbours_blocks(path: str | Path) -> list[Block]:
    """One table per query of a ``benchbox neighbours --json`` file: rank, then each encoder's sentence and cosine."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        encoders, queries = payload["encoders"], payload["queries"]
        blocks: list[Block] = [Paragraph(
            f"Nearest neighbours (cosine) of {len(queries)} queries among the {payload['corpus_size']} distinct "
            f"captions of {payload['corpus']}, as in Bordes et al. (2019), Table 3.")]
        for entry in queries:
            found = entry["neighbours"]
            rows = []
            for rank in range(payload["k"]):
                row = [str(rank + 1)]
                for label in encoders:
                    hit = found[label][rank]
                    row += [str(hit["sentence"]), f"{float(hit['cosine']):.3f}"]
                rows.append(row)
            header = ["#"] + [h for label in encoders for h in (label, "cos")]
            blocks.append(Table(caption=f"Query: {entry['query']}", header=header, rows=rows,
                                numeric=[True] + [False, True] * len(encoders)))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        raise BenchboxError(f"{path} is not the JSON output of `benchbox neighbours --json` ({exc})") from exc
    return blocks


def structure_section(data: pd.DataFrame, neighbours: list[str | Path] = ()) -> Section | None:
    rows = structure_rows(data[~data["reference"].astype(bool)])
    blocks: list[Block] = []
    if not rows.empty:
        blocks += [structure_table(rows), structure_figure(rows)]
    for path in neighbours:
        blocks += neighbours_blocks(path)
    return Section("structure", "Structure of the caption space", blocks) if blocks else None

"""The report's figures (matplotlib → SVG): per-subset Pearson with interval bars per model (the paper's
Figure 3), training curves per snapshot (its Figure 4) and model selection across sizes and architectures
(its Figure 2). Each function takes tidy data and returns a :class:`~benchbox.reports.document.Figure`."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import MaxNLocator

from benchbox.reports.document import Figure
from benchbox.reports.svg import figure_context, to_svg

WIDTH = 7.0  # inches
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")


def as_shown(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with value, ci_low and ci_high as a person sees them: × the ``scale`` of each row's metric spec
    (column ``spec``, a :class:`~benchbox.task_contract.protocol.MetricSpec`; Pearson r × 100)."""
    scale = rows["spec"].map(lambda spec: spec.scale).to_numpy(float)
    return rows.assign(**{c: rows[c].to_numpy(float) * scale for c in ("value", "ci_low", "ci_high")})


def times(rows: pd.DataFrame) -> str:
    """`` × 100``: the scale the rows' metric is shown at (nothing at scale 1), from the first row's spec."""
    scale = rows["spec"].iloc[0].scale
    return "" if scale == 1 else f" × {scale:g}"


def semantic_figure(rows: pd.DataFrame) -> Figure:
    """Horizontal bars of Pearson r per (task, subset), shown at its metric spec's scale (× 100), one bar per
    source with its 95% interval; published references are pale. ``rows``: label, reference, task, subset,
    value, ci_low, ci_high, spec."""
    shown = times(rows)
    rows = as_shown(rows)
    keys = list(dict.fromkeys(zip(rows["task"], rows["subset"])))
    labels = list(rows.sort_values("source_rank", kind="stable")["label"].unique())
    reference = dict(zip(rows["label"], rows["reference"].astype(bool)))
    band = 0.8 / len(labels)
    title = "Semantic similarity per subset"
    alt = (f"Horizontal bar chart of Pearson r{shown} with 95% confidence interval bars for {len(keys)} "
           f"task subsets, one bar per model: {', '.join(labels)}. The same numbers are in the table above.")
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 0.9 + len(keys) * (0.12 + band * 0.45 * len(labels))))
        ax = fig.add_subplot()
        index = {key: i for i, key in enumerate(keys)}
        for j, label in enumerate(labels):
            mine = rows[rows["label"] == label]
            y = np.array([index[k] for k in zip(mine["task"], mine["subset"])]) - 0.4 + band * (j + 0.5)
            value = mine["value"].to_numpy(float)
            err = np.abs(np.vstack([value - mine["ci_low"].to_numpy(float), mine["ci_high"].to_numpy(float) - value]))
            color = COLORS[j % len(COLORS)]
            ax.barh(y, value, height=band, color=color, alpha=0.4 if reference[label] else 0.85,
                    edgecolor=color, linewidth=0.8,
                    label=f"{label} (published)" if reference[label] else label)
            ax.errorbar(value, y, xerr=np.nan_to_num(err), fmt="none", ecolor="#222222", elinewidth=0.7, capsize=1.5)
        ax.set_yticks(range(len(keys)), [f"{task} {subset}" for task, subset in keys])
        ax.invert_yaxis()
        ax.set_ylim(len(keys) - 0.5, -0.5)
        ax.set_xlabel(f"Pearson r{shown} (95% interval)")
        ax.axvline(0, color="#444444", linewidth=0.6)
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 2), frameon=False)
        svg = to_svg(fig, "semantic", title, alt)
    published = "; pale bars: published results" if any(reference.values()) else ""
    return Figure(slug="semantic", title=title, alt=alt, svg=svg,
                  caption=f"Pearson r{shown} per subset; whiskers: 95% intervals{published}.")


def curves_figure(curves: pd.DataFrame, slug: str, title: str) -> Figure:
    """Stacked panels of per-epoch curves. ``curves``: panel, series, epoch, value, ci_low, ci_high
    (panels and series in order of appearance)."""
    panels = list(dict.fromkeys(curves["panel"]))
    alt = (f"Line charts over training epochs, one panel each for {', '.join(panels)}; "
           f"series: {', '.join(dict.fromkeys(curves['series']))}.")
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 2.5 * len(panels) + 0.4), layout="constrained")
        axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
        for ax, panel in zip(axes, panels):
            part = curves[curves["panel"] == panel]
            for j, series in enumerate(dict.fromkeys(part["series"])):
                line = part[part["series"] == series].sort_values("epoch")
                color = COLORS[j % len(COLORS)]
                ax.plot(line["epoch"], line["value"], marker="o", markersize=3, color=color, linewidth=1.2, label=series)
                low, high = line["ci_low"].to_numpy(float), line["ci_high"].to_numpy(float)
                if not np.isnan(low).all():
                    ax.fill_between(line["epoch"].to_numpy(float), low, high, color=color, alpha=0.15, linewidth=0)
            ax.set_ylabel(panel)
            ax.grid(color="#dddddd", linewidth=0.5)
            ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False, fontsize=8)
        axes[-1].set_xlabel("epoch")
        axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
        svg = to_svg(fig, slug, title, alt)
    return Figure(slug=slug, title=title, alt=alt, svg=svg, caption="Shaded bands: 95% intervals where available.")


def selection_figure(points: pd.DataFrame) -> Figure:
    """Model selection: per panel, a score against the hidden size, one line per architecture group.
    ``points``: panel, group, hidden, value."""
    panels = list(dict.fromkeys(points["panel"]))
    title = "Model selection across sizes and architectures"
    alt = (f"Line chart of {', '.join(panels)} against the hidden size for the architectures "
           f"{', '.join(dict.fromkeys(points['group']))}. The numbers are in the model selection table.")
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 2.8 * len(panels) + 0.4), layout="constrained")
        axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
        for ax, panel in zip(axes, panels):
            part = points[points["panel"] == panel]
            for j, group in enumerate(dict.fromkeys(part["group"])):
                line = part[part["group"] == group].sort_values("hidden")
                ax.plot(line["hidden"], line["value"], marker="o", color=COLORS[j % len(COLORS)], label=group)
            sizes = sorted(set(part["hidden"]))
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes, [str(int(s)) for s in sizes])
            ax.minorticks_off()
            ax.set_xlabel("hidden units per direction")
            ax.set_ylabel(panel)
            ax.grid(color="#dddddd", linewidth=0.5)
            ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False, fontsize=8)
        svg = to_svg(fig, "selection", title, alt)
    return Figure(slug="selection", title=title, alt=alt, svg=svg, caption="One point per training run.")

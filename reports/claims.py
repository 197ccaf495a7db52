"""The report's claims section: one headline per claim (:mod:`benchbox.comparison.claims`), a forest plot of the per-row
differences with their 95% intervals and the pooled random-effects diamond, and the per-seed scores of the
models that have several seeds."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Polygon

from benchbox.reports.document import Block, Bullets, Figure, Paragraph
from benchbox.reports.figures import COLORS, WIDTH
from benchbox.reports.svg import figure_context, to_svg

Z95 = 1.959963984540054


def _slug(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def forest_figure(claim: pd.Series, rows: pd.DataFrame) -> Figure:
    """Per-row differences (A − B on the claim's scale) with 95% intervals, and the pooled diamond."""
    a, b, scale = claim["model_a"], claim["model_b"], claim["scale"]
    slug = _slug("forest", a, b, claim["kind"])
    title = f"{a} vs {b}: {claim['kind']} rows"
    alt = (f"Forest plot of {len(rows)} per-row differences {scale} of {a} minus {b} with 95% intervals, and "
           f"the pooled random-effects estimate {claim['estimate']:+.3f} [{claim['ci_low']:+.3f}, "
           f"{claim['ci_high']:+.3f}] as a diamond.")
    effect = rows["effect"].to_numpy(float)
    half = Z95 * np.sqrt(rows["var"].to_numpy(float))
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 1.0 + 0.22 * (len(rows) + 2)))
        ax = fig.add_subplot()
        y = np.arange(len(rows))
        ax.errorbar(effect, y, xerr=half, fmt="s", color=COLORS[0], markersize=3, elinewidth=0.8, capsize=1.5)
        bottom = len(rows) + 0.5
        ax.add_patch(Polygon([(claim["ci_low"], bottom), (claim["estimate"], bottom - 0.4),
                              (claim["ci_high"], bottom), (claim["estimate"], bottom + 0.4)],
                             closed=True, color=COLORS[1]))
        ax.set_yticks([*y, bottom], [*(f"{t} {s}" for t, s in zip(rows["task"], rows["subset"])),
                                     f"pooled ({claim['pooling'].upper()})"])
        ax.set_ylim(bottom + 1, -1)
        ax.axvline(0, color="#444444", linewidth=0.6)
        ax.set_xlabel(f"{scale} = {a} − {b} (95% interval)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        ax.set_axisbelow(True)
        svg = to_svg(fig, slug, title, alt)
    return Figure(slug=slug, title=title, alt=alt, svg=svg,
                  caption=f"Per-row differences with 95% intervals; diamond: pooled random-effects estimate "
                          f"(I² = {claim['i2']:.0f}%).")


def seed_figure(claim: pd.Series, scores: pd.DataFrame) -> Figure:
    """The per-seed scores (weighted mean over rows on the claim's scale) of both models, one dot per run."""
    a, b = claim["model_a"], claim["model_b"]
    slug = _slug("seeds", a, b, claim["kind"])
    title = f"Seeds: {a} vs {b}"
    alt = (f"Dot plot of the per-seed scores of {a} ({claim['seeds_a']} runs) and {b} ({claim['seeds_b']} runs), "
           f"weighted means over the {claim['rows']} rows on the pooled scale.")
    with figure_context():
        fig = MplFigure(figsize=(WIDTH, 1.4))
        ax = fig.add_subplot()
        for j, model in enumerate((a, b)):
            values = scores.loc[scores["model"] == model, "score"].to_numpy(float)
            ax.plot(values, np.full(len(values), j), "o", color=COLORS[j], markersize=5, alpha=0.8)
            ax.plot([values.mean()] * 2, [j - 0.3, j + 0.3], color=COLORS[j], linewidth=1.5)
        ax.set_yticks([0, 1], [a, b])
        ax.set_ylim(1.6, -0.6)
        ax.set_xlabel("per-seed score (weighted mean over rows; Fisher z or proportion)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        svg = to_svg(fig, slug, title, alt)
    return Figure(slug=slug, title=title, alt=alt, svg=svg, caption="One dot per run; bar: the mean over seeds.")


def claims_blocks(claims: pd.DataFrame | None, rows: pd.DataFrame | None, scores: pd.DataFrame | None,
                  headlines: list[str], notes: list[str] | None = None) -> list[Block]:
    """Headline, forest plot and (with seeds) seed distributions of every claim; then why the pairs in ``notes``
    have no claim (published comparators)."""
    blocks: list[Block] = [Paragraph(
        "One claim per pair of models and kind of row: the per-row differences pooled by a random-effects "
        "meta-analysis (Fisher z for correlations, proportions for accuracies and recalls), with a seed-aware "
        "test when a model has several seeds; a claim is significant when both reject, after the correction "
        "over all claims.")]
    keys = ["model_a", "model_b", "kind"]
    claims = claims if claims is not None else pd.DataFrame(columns=keys)
    for (_, claim), line in zip(claims.iterrows(), headlines):
        blocks.append(Paragraph(line))
        mine = (rows[keys] == claim[keys].to_numpy()).all(axis=1)
        blocks.append(forest_figure(claim, rows[mine]))
        seeds = None if scores is None else scores[(scores[keys] == claim[keys].to_numpy()).all(axis=1)]
        if seeds is not None and not seeds.empty:
            blocks.append(seed_figure(claim, seeds))
    if notes:
        blocks.append(Bullets(list(notes)))
    return blocks

"""Assemble a :class:`~benchbox.reports.document.Report` from runs, published references and a comparison."""

from __future__ import annotations

import re

import pandas as pd

from benchbox import formatting as fmt
from benchbox.comparison.claims import headline, verdicts
from benchbox.reports import provenance, results, training
from benchbox.reports.claims import claims_blocks
from benchbox.reports.document import Block, Bullets, Paragraph, Report, Section
from benchbox.reports.figures import curves_figure, selection_figure, semantic_figure
from benchbox.reports.significance import ComparisonLike, appendix_blocks, significance_blocks
from benchbox.reports.structure import structure_section
from benchbox.comparison.sources import Source


def build_report(sources: list[Source], comparison: ComparisonLike | None = None,
                 neighbours: list[str] | None = None) -> Report:
    """The report on ``sources`` (runs first, then published references), in this order; ``neighbours``:
    ``benchbox neighbours --json`` files shown as tables in the structure section."""
    runs = [s for s in sources if not s.is_reference]
    references = [s for s in sources if s.is_reference]
    data = results.tidy(sources)
    sections: list[Section] = []
    # the answer first: the claims, then the evidence per task, then the tests, training and provenance
    claims = getattr(comparison, "claims", None)
    notes = list(getattr(comparison, "claim_notes", None) or [])
    if (claims is not None and not claims.empty) or notes:
        sections.append(Section("claims", "Claims", claims_blocks(
            claims, comparison.claim_rows, comparison.claim_seeds,
            [] if claims is None else [headline(c) for _, c in claims.iterrows()], notes)))
    for section in (_semantic_section(data, references), _retrieval_section(data), _transfer_section(data),
                    structure_section(data, neighbours or [])):
        if section:
            sections.append(section)
    sections += [Section(f"group-{_slug(group)}", group[:1].upper() + group[1:], [table])
                 for group, table in results.group_tables(data)]
    if comparison is not None:
        sections.append(Section("significance", "Pairwise significance", significance_blocks(comparison)))
    sections.extend(_training_sections(runs))
    other = results.other_table(data)
    if other:
        sections.append(Section("other-metrics", "Other metrics", [other]))
    sections += [_runs_section(runs, references), _provenance_section(runs)]
    if comparison is not None:
        sections.append(Section("appendix-tests", "Appendix: all pairwise tests", appendix_blocks(comparison),
                                collapsed=True))
    labels = ", ".join(s.label for s in runs)
    intro = [f"{len(runs)} run(s): {labels}.",
             f"Numbers are shown as in Merkx & Frank (2019): {fmt.SCALE_NOTE}, percentages and ranks as they are; "
             "the runs' JSON and CSV files keep correlations as fractions."]
    if references:
        intro.append("Published references: " + ", ".join(s.label for s in references) + ".")
    # the answer in words before anything else: one sentence per claim, the statistics follow in Claims
    return Report(title="benchbox report", intro=intro, sections=sections,
                  verdicts=[f"{line}." for line in verdicts(claims)])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tasks"


def _runs_section(runs: list[Source], references: list[Source]) -> Section:
    blocks: list[Block] = [
        Paragraph("The runs in this report (times in UTC); their encoder configurations, options, data checksums "
                  "and package versions are in Provenance details below."),
        provenance.runs_table(runs),
    ]
    if references:
        blocks.append(Bullets([f"{s.label}: {s.citation}" for s in references]))
    return Section("runs", "Runs and provenance", blocks)


def _provenance_section(runs: list[Source]) -> Section:
    tables = (provenance.encoder_table(runs), provenance.options_table(runs), provenance.checksums_table(runs),
              provenance.packages_table(runs))
    return Section("provenance", "Provenance details", [t for t in tables if t])


def _semantic_section(data: pd.DataFrame, references: list[Source]) -> Section | None:
    table = results.semantic_table(data)
    if table is None:
        return None
    blocks: list[Block] = [
        Paragraph("Pearson correlation × 100 between cosine similarities (or a task's predicted scores) and human "
                  "judgements, per subset, with 95% confidence intervals (Fisher z), as in Merkx & Frank (2019), "
                  "Figure 3."),
        table,
        semantic_figure(results.semantic_rows(data)),
    ]
    if references:
        blocks.insert(1, Paragraph("Published rows exist only for the tasks the paper reports; its STS-B and "
                                   "SICK-R rows are the supervised stsb/sickr tasks, not the cosine variants."))
    aggregates = results.aggregate_table(data)
    if aggregates:
        blocks.append(aggregates)
    return Section("semantic", "Semantic similarity", blocks)


def _retrieval_section(data: pd.DataFrame) -> Section | None:
    tables = results.retrieval_tables(data)
    if not tables:
        return None
    intro = Paragraph("Image–caption retrieval in the layout of Merkx & Frank (2019), Table 2: recall at 1, 5 and "
                      "10 in % and the median rank, for caption → image and image → caption, with the half-width "
                      "of the 95% interval (+upper/−lower where it is not symmetric).")
    return Section("retrieval", "Retrieval", [intro, *tables])


def _transfer_section(data: pd.DataFrame) -> Section | None:
    table = results.transfer_table(data)
    return Section("transfer", "Transfer tasks", [table]) if table else None


def _training_sections(runs: list[Source]) -> list[Section]:
    trained = [(s.label, s.run) for s in runs if s.run.kind == "train"]
    if not trained:
        return []
    blocks: list[Block] = [Paragraph(
        "Per-snapshot scores of the training runs, as in Merkx & Frank (2019), Figure 4: dev retrieval (the "
        "snapshot selection criterion), semantic scores where the run evaluated them (--eval-semantic), and the "
        "training loss.")]
    for i, (label, run) in enumerate(trained, 1):
        state = training.status(run, detail=True)
        if state != "complete":
            blocks.append(Paragraph(f"{label}: {state}."))
        curves = training.curves(run)
        if curves.empty:
            blocks.append(Paragraph(f"{label}: no snapshot or epoch recorded yet."))
        else:
            blocks.append(curves_figure(curves, f"training-{i}", f"Training curves: {label}"))
    sections = [Section("training", "Training curves", blocks)]
    table = training.selection(trained)
    if not table.empty:
        selection_blocks: list[Block] = [training.selection_table(table)]
        points = training.selection_points(table)
        if points["hidden"].nunique() > 1 or points["group"].nunique() > 1:
            selection_blocks.append(selection_figure(points))
        sections.append(Section("model-selection", "Model selection", selection_blocks))
    return sections


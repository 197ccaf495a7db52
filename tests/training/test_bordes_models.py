"""Bordes et al. (2019)'s models as published: the presets against the paper's Table 2 as quoted in
docs/protocols.md#bordes-models (the markdown table is parsed, so docs and code cannot drift)."""

from __future__ import annotations

from pathlib import Path

from benchbox.training.config import LOSS_PRESETS

PROTOCOL_PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
#: the table's weight columns → the ``--loss`` terms they weight
COLUMNS = {"α_T": "textual", "α_P": "perceptual", "α_C": "cluster", "projection": "hinge-sum"}


def paper_table() -> dict[str, dict[str, float]]:
    """preset → {term: weight} of the nonzero weights in the table of docs/protocols.md#bordes-models."""
    section = PROTOCOL_PAGE.read_text(encoding="utf-8").split("\n### Bordes models\n", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    table = {}
    for row in rows[2:]:
        cells = dict(zip(header, (cell.strip() for cell in row.strip("|").split("|"))))
        table[cells["preset"].strip("`")] = {term: float(cells[col]) for col, term in COLUMNS.items()
                                             if float(cells[col]) != 0}
    return table


def test_every_preset_has_the_weights_of_the_papers_table():
    table = paper_table()
    assert table["bordes-b"] == {"perceptual": 0.1, "cluster": 1.0}  # M_b = M_A^p(0, 0.1, 1)
    assert set(table) == set(LOSS_PRESETS)
    for preset, terms in LOSS_PRESETS.items():
        assert dict(terms) == table[preset], preset

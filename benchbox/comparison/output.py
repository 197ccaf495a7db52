"""A comparison written for machines: the table as CSV (with the claims beside it) and the whole comparison as
strict JSON (docs/schema.md, "Compare JSON"). Values are as computed: correlations in [−1, 1], accuracies and
recalls in percent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchbox.comparison.claims import ALPHA
from benchbox.comparison.compare import Comparison
from benchbox.storage.atomic import atomic_path
from benchbox.storage import jsonio


def write_csv(comparison: Comparison, path: str | os.PathLike) -> None:
    """The comparison table as CSV at ``path`` (claims beside it, :func:`claims_csv_path`), or the table alone on
    stdout for ``-``."""
    if os.fspath(path) == "-":
        comparison.table.to_csv(sys.stdout, index=False)
        return
    with atomic_path(path) as tmp:
        comparison.table.to_csv(tmp, index=False)
    if comparison.claims is not None and not comparison.claims.empty:
        with atomic_path(claims_csv_path(path)) as tmp:
            comparison.claims.to_csv(tmp, index=False)


def claims_csv_path(path: str | os.PathLike) -> Path:
    """Where :func:`write_csv` writes the claims beside the table: ``cmp.csv`` → ``cmp.claims.csv``."""
    path = Path(path)
    return path.with_name(f"{path.stem}.claims{path.suffix or '.csv'}")


def write_json(comparison: Comparison, path: str | os.PathLike) -> None:
    """The comparison as strict JSON at ``path``, or on stdout for ``-``."""
    records, settings = jsonio.frame_records, comparison.settings
    jsonio.write_json(path, {
        "schema_version": jsonio.SCHEMA_VERSION, "models": comparison.models, "correction": settings.correction,
        "family": settings.family, "item_dependence": settings.item_dependence, "alpha": ALPHA,
        "verdicts": comparison.verdicts(), "headlines": comparison.headlines(), "claim_notes": comparison.claim_notes,
        "claims": records(comparison.claims), "protocol_mismatches": comparison.protocol_mismatches,
        "claim_rows": records(comparison.claim_rows), "claim_seeds": records(comparison.claim_seeds),
        "summary": comparison.summary_lines(), "comparisons": records(comparison.table),
        "seeds": records(comparison.seeds), "version_differences": comparison.versions,
    })

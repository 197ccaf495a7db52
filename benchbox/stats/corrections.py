"""Corrections of p-values for multiple comparisons, each declared once as a :class:`Correction`: Holm (1979,
family-wise error) and Benjamini–Hochberg (1995, false discovery rate), computed by statsmodels' ``multipletests``.

A declaration is everything the rest of benchbox derives from a correction: the name ``compare --correction``
takes (and the choices it lists), the comparison table's column of its adjusted p (:attr:`Correction.p_column`:
``p_holm``), the name a report and a table give it. Adding one is one declaration: it registers itself in
:data:`CORRECTIONS`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchbox.errors import BenchboxError

#: every correction, by name, in the order tables show their p columns
CORRECTIONS: dict[str, Correction] = {}


@dataclass(frozen=True)
class Correction:
    """One multiple-comparison correction; declaring it registers it in :data:`CORRECTIONS`."""

    #: as ``--correction`` names it
    name: str
    #: as a report's prose names it ("Benjamini–Hochberg") and as a column header does ("BH")
    title: str
    short: str
    #: statsmodels' ``multipletests`` method that computes it
    method: str

    def __post_init__(self) -> None:
        CORRECTIONS[self.name] = self

    @property
    def p_column(self) -> str:
        """The comparison table's column of the p-values it adjusted: ``p_<name>``."""
        return f"p_{self.name}"

    def adjust(self, p) -> np.ndarray:
        """``p`` adjusted over the family of its finite entries; NaN entries (comparisons without a test) stay NaN
        and do not count in the family."""
        from statsmodels.stats.multitest import multipletests

        p = np.asarray(p, dtype=float)
        adjusted = np.full(p.shape, np.nan)
        ok = np.isfinite(p)
        if np.any((p[ok] < 0) | (p[ok] > 1)):
            raise BenchboxError("p-values must lie in [0, 1]")
        if ok.any():
            adjusted[ok] = multipletests(p[ok], method=self.method)[1]
        return adjusted


Correction("holm", "Holm", "Holm", "holm")
Correction("bh", "Benjamini–Hochberg", "BH", "fdr_bh")


def correction(name: str) -> Correction:
    """The correction ``name`` names: its :attr:`~Correction.name`, or its statsmodels ``method`` (``fdr_bh``)."""
    found = CORRECTIONS.get(name) or next((c for c in CORRECTIONS.values() if c.method == name), None)
    if found is None:
        raise BenchboxError(f"unknown correction {name!r}: use "
                            + " or ".join(c.name if c.method == c.name else f"{c.method} ({c.name})"
                                          for c in CORRECTIONS.values()))
    return found


def adjust_pvalues(p, method: str) -> np.ndarray:
    """p-values adjusted for multiple comparisons by the correction ``method`` names (:func:`correction`: ``"holm"``,
    ``"bh"`` or ``"fdr_bh"``, ...). NaN entries (comparisons without a test) stay NaN and do not count in the
    family."""
    return correction(method).adjust(p)

"""Two runs' per-item rows joined item by item, and the clusters of rows that share items: what every paired test
and every claim of a comparison starts from.

Items are joined on the task's ``item_keys`` — ``(subset, item)`` for pair and classification items,
``(subset, direction, query)`` for retrieval queries — never by position. Rows whose items share a normalised
sentence, directly or through other rows, form one cluster (:func:`row_clusters`): e.g. STS-B test with the
STS12–16 subsets its sentences come from. The claims treat a cluster as one item set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.task_contract.paired_tests import sentence_columns
from benchbox.stats.pooling import sentence_clusters

if TYPE_CHECKING:
    from benchbox.comparison.sources import Source


def pair_items(a: Source, ia: pd.DataFrame, b: Source, ib: pd.DataFrame, keys: list[str], task: str) -> pd.DataFrame:
    """Per-item rows of two runs joined on their keys (never by position), columns suffixed ``_a``/``_b``: a key
    column or a key missing from either run, a key twice in one run, or different gold scores for one key is an
    error that names the runs."""
    for source, items in ((a, ia), (b, ib)):
        where = source.path or source.label
        lacking = [k for k in keys if k not in items.columns]
        if lacking:
            raise BenchboxError(f"{where}: the per-item file of {task} lacks the key column(s) {', '.join(lacking)}; "
                                "restore the file or re-run the evaluation")
        twice = items.duplicated(keys, keep=False)
        if twice.any():
            first = items.loc[twice, keys].iloc[0].tolist()
            raise BenchboxError(f"{where}: the per-item file of {task} holds {int(twice.sum())} rows with a repeated "
                                f"key ({', '.join(keys)} = {first}); restore the file or re-run the evaluation")
    merged = ia.merge(ib, on=keys, suffixes=("_a", "_b"), validate="one_to_one")
    if not (len(merged) == len(ia) == len(ib)):
        raise BenchboxError(f"{task}: {a.path or a.label} and {b.path or b.label} scored different items "
                            f"({len(ia)} vs {len(ib)}, {len(merged)} shared): were they evaluated on the same data "
                            "and protocol?")
    if "gold_a" in merged and not np.allclose(merged["gold_a"], merged["gold_b"], equal_nan=True):
        raise BenchboxError(f"{task}: {a.path or a.label} and {b.path or b.label} have different gold scores for "
                            "the same items")
    return merged


def row_clusters(items: dict[str, pd.DataFrame | None], own: set[str]) -> dict[tuple[str, str], str]:
    """Cluster labels of the (task, subset) rows whose items carry sentences
    (:data:`benchbox.task_contract.paired_tests.TEXT_COLUMNS`): rows that share a normalised sentence, directly or through other
    rows, get one label (:func:`benchbox.stats.pooling.sentence_clusters`). ``items``: task → per-item rows
    (either run's: both scored the same items); tasks whose items have no sentences, and the tasks ``own`` whose
    kinds make their rows' item sets themselves (:meth:`benchbox.task_contract.paired_tests.PairedKind.cluster`,
    e.g. the directions of a retrieval task: one cluster), are left out."""
    texts: dict[tuple[str, str], list[Any]] = {}
    for task, frame in items.items():
        if frame is None or frame.empty or "subset" not in frame.columns or task in own:
            continue
        if not sentence_columns(frame):
            continue
        for subset, part in frame.groupby(frame["subset"].astype(str), sort=False):
            texts[(task, subset)] = [t for column in sentence_columns(part) for t in column.tolist()]
    return sentence_clusters(texts)

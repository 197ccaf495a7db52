"""A task's main score recomputed from per-item rows under bootstrap weights: the per-replicate scores the
leaderboard's intervals and ranks come from (:mod:`benchbox.comparison.leaderboard`, :mod:`benchbox.stats.ranking`).

Each replicate is a row of a weight matrix ``W`` [B, items] (how many times each item was drawn,
:func:`benchbox.stats.ranking.cluster_weights`); what the items are drawn by and the statistic are the metric's
kind's (:meth:`benchbox.task_contract.paired_tests.PairedKind.strata`, ``clusters`` and ``resampled``), built-in
or a plugin's alike.

A main score recorded per subset with no headline subset is the unweighted mean of its per-subset scores
(:data:`PER_SUBSET`), the rule the STS years declare for their ``_mean`` aggregates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchbox.task_contract.paired_tests import KINDS, PairedKind
from benchbox.task_contract.protocol import MetricSpec

#: how a main score recorded on several subsets (no ``all``/``test`` subset) becomes one task score
PER_SUBSET = "mean over subsets"


def strata_and_clusters(task: str, kind: str | None, items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """What the items of a task are drawn by: the strata and clusters of its kind (of a metric without an
    installed kind: subsets, each item its own cluster)."""
    drawn = KINDS.get(kind) or PairedKind()
    strata = drawn.strata(items)
    return strata.to_numpy(), drawn.clusters(items, strata)


def resampled_score(spec: MetricSpec, subset: str | None, items: pd.DataFrame,
                    weights: np.ndarray) -> np.ndarray | None:
    """[B] the metric ``spec`` of one run under each row of ``weights``: on ``subset``, or, ``subset=None``, the
    mean over the subsets it is recorded on (:data:`PER_SUBSET`; correlation aggregates on subset ``all`` are
    computed from every subset). None: the metric has no resampled statistic (no kind, or none installed)."""
    kind = KINDS.get(spec.kind)
    return None if kind is None else kind.resampled(spec, subset, items, weights)

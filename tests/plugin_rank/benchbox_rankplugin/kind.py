"""The plugin's own kind of paired test: a sign-flip permutation test of the per-query reciprocal ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchbox import stats
from benchbox.task_contract.paired_tests import PairedKind, PairSettings, RowTest
from benchbox.task_contract.protocol import MetricSpec


class SignFlipReciprocalRank(PairedKind):
    """MRR by a sign-flip permutation test of the per-query differences of reciprocal rank (Fisher's randomisation
    test; each query's difference keeps or flips its sign, ``pair.n_boot`` times), interval by a paired bootstrap."""

    name = "signflip-rr"
    columns = ("direction", "rank")
    keys = ("direction",)
    subset = "direction"
    noun = "reciprocal-rank"
    description = "a sign-flip permutation test of per-query reciprocal ranks; interval by a paired bootstrap"

    def cluster(self, task: str, subset: str) -> str:
        return task  # both directions rank the same pairs: one item set

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec,
             rows: pd.DataFrame) -> RowTest | None:
        part = rows[rows[self.subset] == subset]
        if part.empty:
            return None
        ra, rb = 1.0 / part["rank_a"].to_numpy(float), 1.0 / part["rank_b"].to_numpy(float)
        d = ra - rb
        signs = np.random.default_rng(pair.seed).choice([-1.0, 1.0], size=(pair.n_boot, len(d)))
        flipped = np.abs((signs * d).mean(axis=1))
        p = (1 + np.sum(flipped >= abs(d.mean()) - 1e-12)) / (pair.n_boot + 1)
        result = pair.bootstrap(None, ra, rb, statistic=stats.weighted_mean)
        effect = (result.diff, result.se**2) if spec.summary else None
        return RowTest("sign-flip", float(d.mean()), float(p), result.ci, effect=effect)

    def scale(self, metric: str) -> str | None:
        return "Δmrr"

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        return weights @ (1.0 / items["rank"].to_numpy(float)) / weights.sum(axis=1)

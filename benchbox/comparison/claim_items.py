"""The per-item scores of a claim's correlation rows, aligned item by item over every run of both models: what the
claim test resamples (:func:`benchbox.stats.claim_test.joint_test`, sentence groups formed across the rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchbox.task_contract.paired_tests import sentence_columns
from benchbox.stats.claim_test import ClaimTest, claim_groups, joint_test

if TYPE_CHECKING:
    from benchbox.comparison.sources import Source
    from benchbox.task_contract.metadata import KnownTasks


def correlation_claim(sources: list[Source], runs_a: list[str], runs_b: list[str], rows: list[tuple[str, str]],
                      known: KnownTasks, variances: np.ndarray, pooling: str, clusters: list[str]) -> ClaimTest | None:
    """The claim test of the Pearson rows ``rows`` ((task, subset) pairs) between the runs of A and of B, from the
    runs' per-item ``gold`` and ``score`` joined on the task's item keys (the first run of A gives the order), with
    sentence groups across the rows and the random-effects weights of the rows' sampling ``variances`` with τ² by
    ``pooling`` (the pooled analysis'); ``clusters``: the rows' clusters (the sign-flip fallback's). None when some
    run lacks a row's per-item scores."""
    by_label = {s.label: s for s in sources}
    read: dict[str, dict[str, pd.DataFrame | None]] = {}  # task → run → its per-item rows, each file read once
    gold, scores_a, scores_b, texts = [], [], [], []
    for task, subset in rows:
        keys = list(known[task].item_keys) if task in known else ["subset", "item"]
        if task not in read:
            read[task] = {label: by_label[label].items(task) for label in (*runs_a, *runs_b)}
        frames = read[task]
        if any(frame is None or frame.empty or "score" not in frame for frame in frames.values()):
            return None
        first = frames[runs_a[0]]
        part = first[first["subset"].astype(str) == subset]
        order = part.set_index(keys).index

        def scores(label: str) -> np.ndarray:
            frame = frames[label]
            return frame.set_index(keys)["score"].reindex(order).to_numpy(float)

        side_a, side_b = np.array([scores(r) for r in runs_a]), np.array([scores(r) for r in runs_b])
        if not (np.isfinite(side_a).all() and np.isfinite(side_b).all()):
            return None
        gold.append(part["gold"].to_numpy(float))
        scores_a.append(side_a)
        scores_b.append(side_b)
        texts.append([column.tolist() for column in sentence_columns(part)])
    return joint_test(gold, scores_a, scores_b, claim_groups(texts, [len(x) for x in gold]), variances=variances,
                      pooling=pooling, clusters=clusters)

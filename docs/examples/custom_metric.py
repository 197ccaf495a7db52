"""A custom metric on a task base (docs/plugins.md, "A metric of your own on a base task"): paraphrase pairs scored
by the pair-classification base's ROC AUC, plus the average precision of the cosine, tested by ``compare`` like
the AUC (a paired bootstrap of the statistic, kind ``bootstrap``).

Three steps: the statistic, a function of the per-item rows (``gold``, ``score``: the base's columns); its
:class:`~benchbox.task_contract.protocol.MetricSpec` added to the base's ``metrics``; and ``measure`` returning its record per subset
beside the base's. ``tests/core/test_plugin_kit.py`` imports this file, evaluates the task and runs the plugin kit
on it; ``benchbox --include docs/examples/custom_metric.py eval glove-bow -t paraphrase-ap`` runs it from the
command line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from sklearn.metrics import average_precision_score

from benchbox.registry import TASKS
from benchbox.task_contract.protocol import DataFile, EvalContext, MetricRecord, MetricSpec
from benchbox.tasks.bases import PairClassificationTask, bootstrap_interval

DATA = Path(__file__).parent / "paraphrase_pairs.tsv"


def average_precision(rows: pd.DataFrame) -> float:
    """Average precision of ``score`` ranking the pairs with ``gold`` 1 first (scikit-learn's, no interpolation)."""
    return float(average_precision_score(rows["gold"], rows["score"]))


#: higher is better; a proportion, shown with three decimals; counted in compare's summary and pooled into claims
AP = MetricSpec("ap", "bootstrap", unit="value", decimals=3, summary=True, statistic=average_precision,
                description="average precision of the cosine")


class ParaphraseAP(PairClassificationTask):
    name = "paraphrase-ap"
    description = "24 paraphrase pairs (docs/examples), ROC AUC and average precision of the cosine"
    reference = "docs/examples/custom_metric.py; AP: scikit-learn average_precision_score"
    group, order, version, license = "paraphrase detection", 910, "1", "CC0-1.0"
    data_files = (DataFile(DATA.name, sha256=hashlib.sha256(DATA.read_bytes()).hexdigest(), package_dir=DATA.parent),)
    columns = {"gold": "label"}
    metrics = (*PairClassificationTask.metrics, AP)

    def measure(self, items: pd.DataFrame, ctx: EvalContext) -> list[MetricRecord]:
        records = super().measure(items, ctx)  # the base's AUC per subset, its classes checked
        return records + [MetricRecord(self.name, str(subset), "ap", average_precision(part),
                                       *bootstrap_interval(part, average_precision, ctx), len(part))
                          for subset, part in items.groupby("subset", sort=False)]


TASKS.register(ParaphraseAP.name, ParaphraseAP)

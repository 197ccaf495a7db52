"""The kinds of paired test (benchbox.task_contract.paired_tests): a kind is one class, and everything else derives from it —
the item columns eval checks, the test compare runs, the common scale a claim pools on, the claim's noun and the
item set of a row. A plugin's summary metric joins a claim like a built-in one (issue #28)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchbox import stats
from benchbox.comparison.compare import compare_sources
from benchbox.comparison.sources import Source
from benchbox.errors import BenchboxError
from benchbox.task_contract.item_checks import check_items
from benchbox.task_contract.paired_tests import KINDS, PairedKind, PairSettings, RowTest
from benchbox.registry import TASKS
from benchbox.task_contract.protocol import MetricRecord, MetricSpec, Task, TaskResult
from benchbox.comparison.settings import CompareSettings

SUBSETS = ("news", "forums", "captions")
N = 120


class Brier(PairedKind):
    """A kind written for this test, as a plugin would: the Brier score of predicted probabilities (lower is
    better), tested by a paired bootstrap of its mean, pooled on its own scale."""

    name = "test-brier"
    columns = ("prob", "label")
    noun = "calibration"

    def test(self, pair: PairSettings, task: str, subset: str, spec: MetricSpec, rows: pd.DataFrame) -> RowTest | None:
        part = rows[rows["subset"] == subset]
        errors = [(part[f"prob_{s}"] - part["label_a"]) ** 2 for s in "ab"]
        result = pair.bootstrap(None, errors[0], errors[1], statistic=stats.weighted_mean)
        return RowTest("bootstrap", result.z, result.p, result.ci, effect=(result.diff, result.se**2))

    def scale(self, metric: str) -> str | None:
        return "ΔBrier"

    def resampled_subset(self, spec: MetricSpec, items: pd.DataFrame, weights: np.ndarray) -> np.ndarray | None:
        errors = ((items["prob"] - items["label"]) ** 2).to_numpy(float)
        return weights @ errors / weights.sum(axis=1)


def teardown_module():
    KINDS.pop(Brier.name, None)  # the class statement registered the kind: no other test module sees it


def _mean(rows: pd.DataFrame) -> float:
    return float(rows["value"].mean())


class Calibration(Task):
    name = "test-calibration"
    description = "a plugin task with its own kind of paired test"
    main_score = "brier"
    metrics = (MetricSpec("brier", Brier.name, higher_is_better=False, summary=True),)

    def evaluate(self, encoder, ctx):  # pragma: no cover - the sources below are built directly
        raise NotImplementedError


class Detection(Task):
    name = "test-detection"
    description = "a plugin task whose metric is tested by a bootstrap of its own statistic"
    main_score = "score"
    metrics = (MetricSpec("score", "bootstrap", summary=True, statistic=_mean),)

    def evaluate(self, encoder, ctx):  # pragma: no cover
        raise NotImplementedError


@pytest.fixture
def registered():
    for task in (Calibration, Detection):
        TASKS.register(task.name, task)
    yield
    for task in (Calibration, Detection):
        TASKS.unregister(task.name)


def _source(label: str, items: dict[str, pd.DataFrame], statistic: dict[str, callable]) -> Source:
    records = [MetricRecord(task, subset, metric, fn(frame[frame["subset"] == subset]), n=N)
               for task, frame in items.items() for metric, fn in statistic[task].items() for subset in SUBSETS]
    return Source(label, pd.DataFrame([r.to_dict() for r in records]), items=lambda task: items.get(task))


def _items(rng: np.random.Generator, noise: float) -> dict[str, pd.DataFrame]:
    label = rng.integers(0, 2, size=(len(SUBSETS), N))
    prob = np.clip(label + rng.normal(0, noise, size=label.shape), 0, 1)
    calibration = pd.DataFrame({"subset": np.repeat(SUBSETS, N), "item": np.tile(np.arange(N), len(SUBSETS)),
                                "prob": prob.ravel(), "label": label.ravel()})
    detection = pd.DataFrame({"subset": np.repeat(SUBSETS, N), "item": np.tile(np.arange(N), len(SUBSETS)),
                              "value": (1 - noise) + rng.normal(0, 0.1, size=len(SUBSETS) * N)})
    return {Calibration.name: calibration, Detection.name: detection}


STATISTICS = {Calibration.name: {"brier": lambda rows: float(((rows["prob"] - rows["label"]) ** 2).mean())},
              Detection.name: {"score": _mean}}


def test_a_new_kind_is_one_class_and_its_summary_metric_joins_a_claim(registered):
    """One class (Brier) declares the columns, the test, the scale and the noun; compare tests its rows, the
    claims pool them, and "better" follows the metric's direction (a lower Brier score is better)."""
    assert KINDS[Brier.name].columns == ("prob", "label")
    rng = np.random.default_rng(0)
    sharp, blurred = _source("sharp", _items(rng, 0.2), STATISTICS), _source("blurred", _items(rng, 0.45), STATISTICS)
    comparison = compare_sources([sharp, blurred], [Calibration.name, Detection.name], settings=CompareSettings(n_boot=200))
    rows = comparison.table[comparison.table["task"] == Calibration.name]
    assert list(rows["subset"]) == list(SUBSETS) and set(rows["verdict"]) == {"better"}  # lower Brier: better
    assert (rows["diff"] < 0).all() and rows["effect"].notna().all()
    claims = comparison.claims.set_index("kind")
    brier = claims.loc[Brier.name]
    assert brier["scale"] == "ΔBrier" and brier["rows"] == 3 and brier["estimate"] < 0
    assert brier["verdict"] == "better"
    assert any("sharp vs blurred on 3 calibration rows: pooled ΔBrier = -" in line for line in comparison.headlines())
    score = claims.loc["bootstrap"]  # a bootstrap-kind plugin metric pools on its own scale too
    assert score["scale"] == "Δscore" and score["rows"] == 3 and score["verdict"] == "better"
    assert score["estimate"] == pytest.approx(rows_effect(comparison, Detection.name), rel=0.05)


def rows_effect(comparison, task: str) -> float:
    """The plain mean of a task's per-row effects (the pooled estimate is a weighted mean of them)."""
    rows = comparison.table[comparison.table["task"] == task]
    return float(rows["effect"].mean())


def test_eval_refuses_items_without_the_columns_a_kind_reads():
    items = pd.DataFrame({"subset": ["news"] * 3, "item": [0, 1, 2], "prob": [0.1, 0.5, 0.9]})
    result = TaskResult(Calibration.name, [MetricRecord(Calibration.name, "news", "brier", 0.1, n=3)], items)
    with pytest.raises(BenchboxError, match=r"lack the column\(s\) label \(read by the 'test-brier' test of metric brier"):
        check_items(Calibration(), result)


def test_the_built_in_kinds_declare_what_claims_and_clusters_read():
    assert [k for k in KINDS if not k.startswith("test-")] == ["correlation", "classification", "ranks", "mean",
                                                               "bootstrap"]
    correlation, classification, ranks = KINDS["correlation"], KINDS["classification"], KINDS["ranks"]
    assert (correlation.scale("pearson"), correlation.scale("spearman")) == ("Δz", None)
    assert classification.scale("accuracy") == "Δacc" and ranks.scale("r10") == "ΔR@10" and ranks.scale("medr") is None
    assert ranks.cluster("retrieval", "i2t") == ranks.cluster("retrieval", "t2i") == "retrieval"
    assert correlation.cluster("sts12", "MSRpar") == "sts12/MSRpar"
    percent = MetricSpec("accuracy", "classification", unit="%")
    assert classification.on_scale(80.0, percent) == 0.8 and classification.on_scale(0.8, MetricSpec("accuracy")) == 0.8
    assert correlation.on_scale(0.5, MetricSpec("pearson")) == pytest.approx(np.arctanh(0.5))

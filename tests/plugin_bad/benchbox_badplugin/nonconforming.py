"""Encoders and tasks that break benchbox's contract on purpose, each in several ways: what the plugin kit
(``benchbox.testing``) reports for them is asserted in ``tests/core/test_plugin_kit.py``. Not registered: the
tests name them as ``benchbox_badplugin.nonconforming:ATTRIBUTE``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchbox.task_contract.protocol import MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption

PAIRS = [("a dog runs", "a dog is running", 4.5), ("a cat sleeps", "the cat is asleep", 4.8),
         ("a man cooks", "a child swims", 0.4), ("two birds fly", "a car is parked", 0.1)]


class HalfPrecision:
    """Returns float16, NaN for the empty sentence; ``lowercase`` annotated ``str`` with the default ``True``; a
    ``seed_option`` its constructor does not take."""

    name = "half-precision"
    dim = 4
    seed_option = "seed"

    def __init__(self, lowercase: str = True) -> None:
        self.lowercase = lowercase

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.array([[len(s), s.count(" "), 1.0, 1.0 / len(s) if s else np.nan] for s in sentences],
                        dtype=np.float16)

    def fingerprint(self) -> str:
        return "half-precision-1"


class Drifting:
    """Centres each batch on its own mean (a sentence's vector depends on its batch-mates), adds unseeded noise,
    and has no fingerprint."""

    name = "drifting"

    def __init__(self) -> None:
        self._rng = np.random.default_rng()

    def encode(self, sentences: list[str]) -> np.ndarray:
        rows = np.array([[len(s), s.count("a"), s.count(" ")] for s in sentences], dtype=np.float64)
        return rows - rows.mean(axis=0) + self._rng.normal(0, 0.1, rows.shape)


class BadMetadata(Task):
    """A name that is a path, no description, a main score it does not declare, an option whose default its own
    range refuses, and Task's default group and order."""

    name = "../escape"
    main_score = "accuracy"
    item_kind = "sentence pair"
    reference = "none"
    metrics = (MetricSpec("pearson", "correlation", summary=True),)
    options = (TaskOption("pairs", int, 0, "the first N pairs", low=2),)

    def evaluate(self, encoder, ctx):
        raise NotImplementedError("never evaluated: its metadata fails first")


class _Pairs(Task):
    description = "four sentence pairs, cosine vs gold"
    group, order, reference, item_kind = "broken", 990, "tests/plugin_bad", "sentence pair"
    main_score = "pearson"
    metrics = (MetricSpec("pearson", "correlation", summary=True),)

    def scored(self, ctx) -> pd.DataFrame:
        first = ctx.embed([a for a, _, _ in PAIRS])
        second = ctx.embed([b for _, b, _ in PAIRS])
        cosine = (first * second).sum(1) / (np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1))
        return pd.DataFrame({"subset": "test", "item": range(len(PAIRS)), "gold": [g for *_, g in PAIRS],
                             "score": cosine})


class NoItems(_Pairs):
    """Returns no per-item rows, reports an undeclared metric but not its main score, and does not record its
    option under the option's protocol_key."""

    name = "no-items"
    options = (TaskOption("pairs", int, 4, "the first N pairs", low=2, protocol_key="pairs"),)

    def evaluate(self, encoder, ctx):
        rows = self.scored(ctx)
        return TaskResult(self.name, [MetricRecord(self.name, "test", "coverage", 1.0, n=len(rows))])


class MissingColumn(_Pairs):
    """Its per-item rows lack ``score``, which its metric's kind (``correlation``) reads."""

    name = "missing-column"

    def evaluate(self, encoder, ctx):
        rows = self.scored(ctx)
        pearson = float(np.corrcoef(rows["gold"], rows["score"])[0, 1])
        return TaskResult(self.name, [MetricRecord(self.name, "test", "pearson", pearson, n=len(rows))],
                          rows.drop(columns="score"))


class SeedBlind:
    """A random projection seeded by ``seed`` (its ``seed_option``) whose fingerprint ignores the seed."""

    name = "seed-blind"
    dim = 6
    seed_option = "seed"

    def __init__(self, seed: int = 0) -> None:
        self._projection = np.random.default_rng(seed).normal(size=(3, self.dim))

    def encode(self, sentences: list[str]) -> np.ndarray:
        rows = np.array([[len(s), s.count("a"), s.count(" ")] for s in sentences], dtype=np.float64).reshape(-1, 3)
        return rows @ self._projection

    def fingerprint(self) -> str:
        return "seed-blind-1"

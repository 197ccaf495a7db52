"""Hypernym prediction on WordNet (Vendrov et al. 2016, §4.1 and Table 1; docs/protocols.md#hypernym-prediction):
``hypernym``, for concept embeddings with the order similarity (``benchbox train order-wordnet``).

The data (:mod:`benchbox.data.wordnet`): the transitive closure of WordNet 3.0's noun hypernym relation
(``@`` and ``@i`` pointers, one entry per path as the authors' code lists it), shuffled; 4000 entries are the
test positives, the next 4000 the dev positives, and each held-out positive gets one negative made by replacing
its hyponym or its hypernym with a random concept. The concepts are named as NLTK names synsets
(``dog.n.01``), which is what the task asks the encoder to embed.

Scoring: Vendrov et al. order concepts in the reversed product order of the non-negative orthant, the more
general concept nearer the origin, so a pair (hyponym u, hypernym a) has the order-violation penalty
E(u, a) = ‖max(0, f(a) − f(u))‖² and is predicted a hypernym pair when E ≤ t; t is chosen on dev to maximise
dev accuracy (:func:`benchbox.tasks.order_entailment.best_threshold`: midpoints of the distinct dev penalties,
the smallest best). Reported: test accuracy in percent over the 8000 test pairs with a Wilson 95% interval,
dev accuracy, and the paper's transitive-closure baseline on the same test pairs (a pair is positive iff it is
in the closure of the training and dev edges; no learning, independent of the encoder). Per-item rows (hypo,
hyper, gold, pred, correct, penalty, closure) in split order, for McNemar's test in compare.

Options: ``wordnet`` (the database folder, default ``/usr/share/wordnet``), ``held_out`` (pairs per held-out
split, default 4000) and ``split_seed`` (default 1). An encoder that records the split it was trained on
(``hypernym_split``: the split's digest) is refused on another split: its training edges would hold test pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.wordnet import (DEFAULT_WORDNET, HELD_OUT, HypernymSplit, Nouns, closure_baseline, closure_paths,
                                   read_nouns, split_closure, wordnet_files)
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption
from benchbox.tasks.order_entailment import VENDROV_BIBTEX, best_threshold, order_penalty
from benchbox.tasks.transfer import ACCURACY

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

#: the baseline's accuracy on the same test pairs (shown, never tested: it does not depend on the encoder)
CLOSURE_ACCURACY = MetricSpec("closure-accuracy", None, unit="%", decimals=1,
                              description="the transitive-closure baseline's test accuracy (no learning)")
PENALTY = "E(u, a) = ||max(0, f(a) - f(u))||^2, hyponym u, hypernym a"


@dataclass(frozen=True)
class HypernymData:
    """The concepts and the split of one (wordnet folder, held-out, split seed)."""

    nouns: Nouns
    split: HypernymSplit

    @classmethod
    def build(cls, wordnet: str | Path = DEFAULT_WORDNET, held_out: int = HELD_OUT, split_seed: int = 1) -> HypernymData:
        nouns = read_nouns(wordnet)
        return cls(nouns, split_closure(closure_paths(nouns.edges, len(nouns)), len(nouns), held_out, split_seed))

    def pairs(self, part: str) -> tuple[np.ndarray, np.ndarray]:
        """A held-out part's pairs (positives, then their negatives) and whether each is a hypernym pair."""
        positives = getattr(self.split, part)
        negatives = getattr(self.split, f"{part}_negatives")
        return np.concatenate([positives, negatives]), np.repeat([True, False], [len(positives), len(negatives)])


@dataclass(frozen=True)
class HypernymScores:
    """Dev-chosen threshold, dev accuracy (0–1), and per test pair: penalty, prediction, gold."""

    threshold: float
    dev_accuracy: float
    penalty: np.ndarray
    pred: np.ndarray
    gold: np.ndarray

    @property
    def correct(self) -> int:
        return int((self.pred == self.gold).sum())


def penalties(embeddings: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """E(u, a) for each (hyponym row u, hypernym row a) of ``embeddings``."""
    return order_penalty(embeddings[pairs[:, 0]], embeddings[pairs[:, 1]])


def score(data: HypernymData, dev_penalty: np.ndarray, test_penalty: np.ndarray) -> HypernymScores:
    """The threshold chosen on dev and the test predictions at it."""
    threshold, dev_accuracy = best_threshold(dev_penalty, data.pairs("dev")[1])
    gold = data.pairs("test")[1]
    return HypernymScores(threshold, dev_accuracy, test_penalty, test_penalty <= threshold, gold)


def score_embeddings(data: HypernymData, embeddings: np.ndarray) -> HypernymScores:
    """:func:`score` for one embedding per concept (rows in concept order)."""
    return score(data, penalties(embeddings, data.pairs("dev")[0]), penalties(embeddings, data.pairs("test")[0]))


def closure_predictions(data: HypernymData) -> np.ndarray:
    """The transitive-closure baseline on the test pairs: in the closure of the training and dev edges."""
    known = np.concatenate([data.split.train, data.split.dev])
    return closure_baseline(known, data.pairs("test")[0], len(data.nouns))


def percent_record(task: str, metric: str, correct: int, n: int) -> MetricRecord:
    """Accuracy ``correct``/``n`` in percent with its Wilson 95% interval."""
    low, high = wilson_ci(correct, n)
    return MetricRecord(task, "test", metric, 100 * correct / n, 100 * low, 100 * high, n)


class Hypernym(Task):
    name = "hypernym"
    description = ("Vendrov et al. (2016) hypernym prediction: held-out pairs of WordNet 3.0's noun hypernym closure "
                   "against random corruptions, threshold on the order-violation penalty chosen on dev; test "
                   "accuracy beside the transitive-closure baseline; concept embeddings with the order similarity")
    main_score = "accuracy"
    metrics = (ACCURACY, CLOSURE_ACCURACY)
    item_kind = "test pair (hyponym, hypernym): gold, prediction, correct, penalty, closure baseline"
    options = (
        TaskOption("wordnet", str, str(DEFAULT_WORDNET), "WordNet 3.0 database folder (data.noun, index.noun; "
                   "Debian's wordnet-base)", protocol_key="wordnet"),
        TaskOption("held_out", int, HELD_OUT, "positive pairs held out for dev and for test", low=1,
                   protocol_key="held_out"),
        TaskOption("split_seed", int, 1, "seed of the shuffle and the negatives", protocol_key="split_seed"),
    )
    splits = ("dev", "test")
    group, order = "hypernymy", 340
    license = "WordNet 3.0 License (Princeton University)"
    citation = VENDROV_BIBTEX
    reference = "Vendrov et al. (2016), Order-Embeddings of Images and Language, §4.1, Table 1"

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        wordnet_files(values["wordnet"])  # one line when WordNet is missing, before any work
        return ()

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        similarity = getattr(encoder, "similarity", "cosine")
        if similarity != "order":
            raise BenchboxError(f"{self.name} needs concept embeddings with the order similarity (e.g. a "
                                f"`benchbox train order-wordnet` run); {encoder.name!r} uses {similarity!r}")
        values = ctx.values_for(self)
        data = HypernymData.build(values["wordnet"], values["held_out"], values["split_seed"])
        trained_on = getattr(encoder, "hypernym_split", None)
        if trained_on is not None and trained_on != data.split.digest():
            raise BenchboxError(f"{encoder.name!r} was trained on another split (digest {trained_on}, this one "
                                f"{data.split.digest()}): evaluate it with the wordnet, held_out and split_seed it "
                                "was trained with, or its training edges hold test pairs")
        names = data.nouns.names
        scored = []
        for part in self.splits:
            pairs = data.pairs(part)[0]
            scored.append(order_penalty(ctx.embed([names[i] for i in pairs[:, 0]]),
                                        ctx.embed([names[i] for i in pairs[:, 1]])))
        result = score(data, *scored)
        closure = closure_predictions(data)
        ctx.log(f"{self.name}: threshold {result.threshold:.6g} (dev accuracy {100 * result.dev_accuracy:.2f}%)")
        pairs, n = data.pairs("test")[0], len(result.gold)
        items = pd.DataFrame({"subset": "test", "item": np.arange(n), "hypo": [names[i] for i in pairs[:, 0]],
                              "hyper": [names[i] for i in pairs[:, 1]], "gold": result.gold.astype(np.int64),
                              "pred": result.pred.astype(np.int64),
                              "correct": (result.pred == result.gold).astype(np.int64),
                              "penalty": result.penalty, "closure": closure.astype(np.int64)})
        return TaskResult(
            task=self.name,
            metrics=[percent_record(self.name, "accuracy", result.correct, n),
                     MetricRecord(self.name, "dev", "accuracy", 100 * result.dev_accuracy, math.nan, math.nan,
                                  2 * values["held_out"]),
                     percent_record(self.name, "closure-accuracy", int((closure == result.gold).sum()), n)],
            items=items,
            protocol={"wordnet": values["wordnet"], "held_out": values["held_out"],
                      "split_seed": values["split_seed"], "split_digest": data.split.digest(),
                      "closure_entries": len(data.split.train) + 2 * values["held_out"],
                      "concepts": len(names), "penalty": PENALTY, "threshold": result.threshold,
                      "threshold_rule": "max dev accuracy over midpoints of distinct dev penalties (smallest best)",
                      "baseline": "positive iff in the transitive closure of the training and dev edges"},
            data_checksums=ctx.data.checksums(list(wordnet_files(values["wordnet"]))),
        )

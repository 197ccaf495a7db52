"""Supervised relatedness: STS Benchmark (``stsb``) and SICK-R (``sickr``), SentEval's protocol
(docs/protocols.md#relatedness; SentEval ``senteval/sick.py`` SICKRelatednessEval and ``senteval/sts.py``
STSBenchmarkEval; Conneau & Kiela 2018).

Each split is put in SentEval's order (pairs sorted by token counts of sentence A, then B, then score; a
stable sort) because the training permutations index that order; the regressor of
:mod:`benchbox.tasks.relatedness_probe` is trained on train, selected on dev Pearson and applied to test.
Reported: test Pearson and Spearman (Fisher-z 95% intervals) and MSE of ŷ against the gold scores, dev
Pearson, and ŷ per test pair (in file order).

STS-B scores run 0–5 while the label encoding assumes 1–5 (SentEval #83). By default that is reproduced;
the ``stsb`` option ``fix_stsb_labels`` (``--fix-stsb-labels``, ``-t stsb:fix_stsb_labels=true``) rescales the
STS-B scores to 1 + 0.8·y before training, and ŷ back to the
0–5 scale afterwards (Pearson and Spearman are unchanged by the map, MSE is on the 0–5 scale).
The protocol records which.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pandas as pd

from benchbox.data import DataRoot
from benchbox.device import resolve_device
from benchbox.embedding_checks import require_informative
from benchbox.encoder import Encoder
from benchbox.task import EvalContext, MetricRecord, MetricSpec, Task, TaskOption, TaskResult
from benchbox.tasks.pair_data import SICK_FILES, STSB_FILES, PairData, load_sick, load_stsb
from benchbox.tasks.probe_adam import ADAM
from benchbox.tasks.relatedness_probe import (
    BATCH_SIZE,
    CHUNK_EPOCHS,
    MAX_EPOCH,
    PATIENCE,
    fit_relatedness,
    pair_features,
)
from benchbox.tasks.sts import CORRELATIONS, SEMANTIC_GROUP, correlation_records
from benchbox.tasks.transfer_data import senteval_order as sort_rows, token_counts

SPLITS = ("train", "dev", "test")
#: mean squared error of the predicted scores on the 0-5 scale: paired bootstrap of the MSE
MSE = MetricSpec("mse", "bootstrap", higher_is_better=False, unit="mse", description="MSE of predicted vs gold scores",
                 statistic=lambda rows: float(np.mean((rows["score"].to_numpy(float) - rows["gold"].to_numpy(float)) ** 2)))
SENTEVAL_BIBTEX = """@inproceedings{conneau2018senteval,
  title = {{SentEval}: An Evaluation Toolkit for Universal Sentence Representations},
  author = {Conneau, Alexis and Kiela, Douwe},
  booktitle = {Proceedings of LREC 2018}, year = {2018}
}"""


def senteval_order(pairs: PairData) -> np.ndarray:
    """Indices of the pairs in SentEval's order: sorted by (tokens in A, tokens in B, score), stable."""
    return sort_rows(token_counts(pairs.sentences1), token_counts(pairs.sentences2), list(pairs.scores))


class RelatednessTask(Task):
    """SentEval's supervised relatedness on a train/dev/test sentence-pair dataset."""

    main_score = "pearson"
    #: test Pearson, Spearman, MSE; dev Pearson (no per-item rows: not tested)
    metrics = CORRELATIONS + (MSE,)
    item_kind = "test sentence pair: gold and predicted score"
    group = SEMANTIC_GROUP
    citation = SENTEVAL_BIBTEX
    splits = SPLITS
    reference = "SentEval sick.py + tools/relatedness.py (Conneau & Kiela 2018); labels after Tai et al. (2015)"
    loader: ClassVar[Callable[[DataRoot, str], PairData]]
    #: whether ``fix_stsb_labels`` applies (STS-B's 0–5 scale)
    zero_based: ClassVar[bool] = False

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        rescale = self.zero_based and ctx.option(self, "fix_stsb_labels")
        data, feats, gold = {}, {}, {}
        for split in SPLITS:
            pairs = type(self).loader(ctx.data, split)
            order = senteval_order(pairs)
            a = ctx.embed([pairs.sentences1[i] for i in order])
            b = ctx.embed([pairs.sentences2[i] for i in order])
            require_informative(np.concatenate([a, b]), encoder.name, f"{self.name} {split}")
            data[split], feats[split] = (pairs, order), pair_features(a, b)
            gold[split] = np.asarray(pairs.scores, dtype=np.float64)[order]
        train_y, dev_y = gold["train"], gold["dev"]
        if rescale:
            train_y, dev_y = 1 + 0.8 * train_y, 1 + 0.8 * dev_y
        device = resolve_device(ctx.options.device)
        ctx.log(f"{self.name}: training SentEval's relatedness regressor on {len(train_y)} pairs ({device})")
        fit = fit_relatedness(feats["train"], train_y, feats["dev"], dev_y, feats["test"],
                              seed=ctx.options.seed, device=device)
        pred = (fit.test_pred - 1) / 0.8 if rescale else fit.test_pred
        test_pairs, order = data["test"]
        score = np.empty_like(pred)
        score[order] = pred
        test_gold = np.asarray(test_pairs.scores, dtype=np.float64)
        metrics = correlation_records(self.name, "test", test_gold, score) + [
            MetricRecord(self.name, "test", "mse", float(np.mean((score - test_gold) ** 2)), math.nan, math.nan,
                         len(test_gold)),
            correlation_records(self.name, "dev", gold["dev"], fit.dev_pred)[0],
        ]
        items = pd.DataFrame({"subset": "test", "item": np.arange(len(test_gold)),
                              "sentence1": test_pairs.sentences1, "sentence2": test_pairs.sentences2,
                              "gold": test_gold, "score": score})
        return TaskResult(
            task=self.name,
            metrics=metrics,
            items=items,
            protocol={
                "probe": "SentEval RelatednessPytorch: Linear(2d->5)+softmax, MSE vs Tai et al. sparse targets",
                "features": "[|u-v|, u*v]",
                "labels": self._label_mode(rescale),
                "seed": ctx.options.seed,
                "batch_size": BATCH_SIZE,
                "optimizer": {"name": "adam", **ADAM, "weight_decay": 0.0},
                "epochs": {"chunk": CHUNK_EPOCHS, "max": MAX_EPOCH, "stop_after_non_improving": PATIENCE + 1,
                           "trained": fit.epochs, "best": fit.best_epoch},
                "selection": "dev pearson",
                "device": device.type,
                "order": "SentEval sort by (len A, len B, score)",
            },
            data_checksums=ctx.data.checksums([data[s][0].path for s in SPLITS]),
        )

    def _label_mode(self, rescale: bool) -> str:
        if not self.zero_based:
            return "1-5 as given"
        if rescale:
            return "fixed: STS-B 0-5 rescaled to 1+0.8y before encoding"
        return "senteval: STS-B 0-5 encoded as if 1-5 (SentEval #83 reproduced)"


class STSB(RelatednessTask):
    name = "stsb"
    description = "STS Benchmark, supervised (SentEval): train 5749 / dev 1500 / test 1379 pairs, Pearson"
    data_files = tuple(STSB_FILES[s] for s in SPLITS)
    loader = staticmethod(load_stsb)
    zero_based = True
    order = 120
    license = "STS Benchmark: per-source licences (Cer et al. 2017)"
    options = (TaskOption("fix_stsb_labels", bool, False, "rescale STS-B 0-5 to 1-5 before SentEval's relatedness "
                          "encoding (SentEval #83)", legacy="fix_stsb_labels", protocol_key="labels"),)


class SICKR(RelatednessTask):
    name = "sickr"
    description = "SICK relatedness, supervised (SentEval): train 4500 / trial 500 / test 4927 pairs, Pearson"
    data_files = tuple(SICK_FILES[s] for s in SPLITS)
    loader = staticmethod(load_sick)
    order = 121
    license = "SICK: CC BY-NC-SA 3.0 (Marelli et al. 2014)"

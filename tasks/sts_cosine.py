"""Unsupervised STS-B and SICK-R: cosine of the two embeddings vs gold on the test split, scored with
Spearman (main score) and Pearson, as MTEB does (Muennighoff et al. 2023).

Not comparable with SentEval's supervised ``stsb``/``sickr`` tasks (docs/protocols.md#cosine-variants: GloVe ~65 supervised
vs ~41 cosine on STS-B). Reads SentEval's files, falling back to the copies embedded in the package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.root import DataRoot
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.task_contract.protocol import EvalContext, Task, TaskResult
from benchbox.tasks.senteval_data import SICK_FILES, STSB_FILES, PairData, load_sick, load_stsb
from benchbox.tasks.sts import CORRELATIONS, SEMANTIC_GROUP, correlation_records, cosine_rows

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


class PairCosineTask(Task):
    """Cosine similarity vs gold on the test split of a sentence-pair dataset."""

    main_score = "spearman"
    metrics = CORRELATIONS
    item_kind = "test sentence pair: gold and cosine score"
    group = SEMANTIC_GROUP
    loader: ClassVar[Callable[[DataRoot, str], PairData]]
    reference = "MTEB STS evaluator (Muennighoff et al. 2023)"

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        pairs = type(self).loader(ctx.data, "test")
        a, b = ctx.embed(pairs.sentences1), ctx.embed(pairs.sentences2)
        require_informative(np.concatenate([a, b]), encoder.name, f"{self.name} test")
        score = cosine_rows(a, b)
        gold = np.asarray(pairs.scores)
        items = pd.DataFrame({"subset": "test", "item": np.arange(len(gold)), "sentence1": pairs.sentences1,
                              "sentence2": pairs.sentences2, "gold": gold, "score": score})
        return TaskResult(
            task=self.name,
            metrics=correlation_records(self.name, "test", gold, score),
            items=items,
            protocol={"similarity": "cosine", "split": "test", "supervised": False},
            data_checksums=ctx.data.checksums([pairs.path]),
        )


class STSBCosine(PairCosineTask):
    name = "stsb-cosine"
    description = "STS Benchmark test (1379 pairs), cosine vs gold, no training (MTEB-style)"
    data_files = (STSB_FILES["test"],)
    loader = staticmethod(load_stsb)
    order = 110


class SICKRCosine(PairCosineTask):
    name = "sickr-cosine"
    description = "SICK relatedness test (4927 pairs), cosine vs gold, no training (MTEB-style)"
    data_files = (SICK_FILES["test"],)
    loader = staticmethod(load_sick)
    order = 111

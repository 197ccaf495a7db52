"""SentEval's entailment transfer tasks (docs/protocols.md#entailment; Conneau & Kiela 2018): ``sicke``
(SICK-E, ``senteval/sick.py`` SICKEntailmentEval) and ``snli`` (``senteval/snli.py`` SNLIEval).

Both are three-class pair classifications (:mod:`benchbox.tasks.senteval_data` reads them) with SentEval's
SplitClassifier (:func:`benchbox.tasks.transfer.split`): the logistic regression of
:mod:`benchbox.tasks.senteval_probe` is fit on train with dev for early stopping, once per L2 value, and the
value best on dev is applied to test. Each split is put in SentEval's order first (a stable sort), because the
training permutations index that order:

- ``sicke``: SICK train / trial / test (4500 / 500 / 4927 pairs), labels CONTRADICTION, NEUTRAL, ENTAILMENT;
  sorted by (tokens of A, tokens of B, label id); features [|u − v|, u ⊙ v] (u = sentence A; SentEval's
  ``np.c_[np.abs(A - B), A * B]``); L2 grid 1e-5 … 1e-2; the literature classifier (epoch size 4, ≤ 200 epochs).
- ``snli``: s1 / s2 / labels for train / dev / test (550152 / 9842 / 9824 pairs in SNLI 1.0), from the data
  root's ``senteval/downstream/SNLI`` or the folder given by ``-t snli:path=DIR``; sorted by (tokens of s2,
  tokens of s1, label text); features [u, v, u ⊙ v, |u − v|] (u = premise s1; SentEval's
  ``np.hstack((enc1, enc2, enc1 * enc2, np.abs(enc1 - enc2)))``); ``noreg`` (L2 0 only) and the classifier's
  ``max_epoch`` 15, ``epoch_size`` 1.

Reported like the other transfer tasks: test accuracy in percent as SentEval rounds it, with a Wilson 95%
interval on correct/n, the dev accuracy, and per-item predictions in file order (McNemar's test in compare).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.device import resolve_device
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.task_contract.protocol import EvalContext, Task, TaskResult
from benchbox.task_contract.options import TaskOption
from benchbox.tasks.senteval_data import (
    SICK_FILES,
    SNLI_FOLDER,
    SNLI_LABELS,
    Pairs,
    load_sick_entailment,
    read_snli,
    senteval_order,
    snli_paths,
    token_counts,
)
from benchbox.tasks.senteval_probe import EPOCH_SIZE, MAX_EPOCH, REGS, nli_features, pair_features
from benchbox.tasks.transfer import TransferTask, file_order_items, split

SPLITS = ("train", "dev", "test")
#: SentEval's ``SNLIEval`` classifier changes: ``noreg`` (L2 0 only), ``max_epoch`` 15, ``epoch_size`` 1
SNLI_REGS = (0.0,)
SNLI_MAX_EPOCH = 15
SNLI_EPOCH_SIZE = 1


@dataclass(frozen=True)
class SNLIFolder(TaskOption):
    """A folder option whose value must hold SNLI's files of ``splits`` (checked before any work starts)."""

    splits: tuple[str, ...] = SPLITS

    def check(self, task: str, value: Any) -> Any:
        value = super().check(task, value)
        if value is not None:
            folder = Path(value).expanduser()
            missing = [p.name for s in self.splits for p in snli_paths(folder, s) if not p.is_file()]
            if missing:
                raise BenchboxError(f"{task}:path={value} lacks {', '.join(missing)}: put SNLI there as "
                                    f"s1/s2/labels.{{{','.join(self.splits)}}} (SentEval's SNLI folder; "
                                    "`benchbox train infersent --nli` reads the same)")
        return value


def snli_folder(task: Task, ctx: EvalContext) -> Path:
    """The SNLI folder: the one ``-t TASK:path=DIR`` names, else the data root's :data:`SNLI_FOLDER`."""
    given = ctx.option(task, "path")
    return Path(given).expanduser() if given is not None else ctx.data.path(f"{SNLI_FOLDER}/labels.dev").parent


def snli_required(values: dict[str, Any], splits: tuple[str, ...]) -> tuple[str, ...]:
    """The data-root files of ``splits`` when no folder is given (none otherwise: the option checks its own)."""
    if values["path"] is not None:
        return ()
    return tuple(f"{SNLI_FOLDER}/{p.name}" for s in splits for p in snli_paths(Path(SNLI_FOLDER), s))


class EntailmentTransfer(TransferTask):
    """A SentEval three-class pair task with the SplitClassifier (see the module docstring)."""

    nclasses = 3
    options = ()
    splits = SPLITS
    item_kind = "test sentence pair: gold label, prediction, correct"
    scheme = "train/dev/test: L2 chosen on dev accuracy"
    features: ClassVar[str]
    #: SentEval's sort of each split, as recorded
    order_rule: ClassVar[str]
    regs: ClassVar[tuple[float, ...]] = REGS
    epoch_size: ClassVar[int] = EPOCH_SIZE
    max_epoch: ClassVar[int] = MAX_EPOCH

    @abstractmethod
    def load(self, ctx: EvalContext, split_name: str) -> tuple[Pairs, list[Path]]:
        """A split's pairs and the files they were read from."""

    @abstractmethod
    def sort_keys(self, pairs: Pairs) -> np.ndarray:
        """SentEval's order of the split's rows."""

    @abstractmethod
    def pair_matrix(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """SentEval's features of the pairs (u: first sentences, v: second)."""

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        xy, orders, paths = {}, {}, []
        for name in SPLITS:
            pairs, read = self.load(ctx, name)
            order = self.sort_keys(pairs)
            u = ctx.embed([pairs.sentences1[i] for i in order])
            v = ctx.embed([pairs.sentences2[i] for i in order])
            require_informative(np.concatenate([u, v]), encoder.name, f"{self.name} {name}")
            xy[name], orders[name] = (self.pair_matrix(u, v), pairs.labels[order]), order
            paths += read
        device = resolve_device(ctx.options.device)
        ctx.log(f"{self.name}: SentEval's split classifier on {len(xy['train'][1])} training pairs ({device})")
        outcome = split(xy["train"], xy["dev"], xy["test"], self.nclasses, seed=ctx.options.seed, device=device,
                        regs=self.regs, epoch_size=self.epoch_size, max_epoch=self.max_epoch, log=ctx.log_for(self))
        return self._result(ctx, file_order_items(xy["test"][1], outcome.pred, orders["test"]), outcome,
                            paths, features=self.features, l2_grid=list(self.regs),
                            epoch_size=self.epoch_size, max_epoch=self.max_epoch, device=device.type,
                            order=self.order_rule)


class SICKE(EntailmentTransfer):
    name = "sicke"
    description = "SICK entailment (SentEval SICK-E): train 4500 / trial 500 / test 4927 pairs, 3 classes, accuracy"
    data_files = tuple(SICK_FILES[s] for s in SPLITS)
    order = 307
    license = "SICK: CC BY-NC-SA 3.0 (Marelli et al. 2014)"
    reference = "SentEval sick.py SICKEntailmentEval + tools/validation.py SplitClassifier (Conneau & Kiela 2018)"
    features = "[|u-v|, u*v]"
    order_rule = "SentEval sort by (tokens A, tokens B, label id)"

    def load(self, ctx: EvalContext, split_name: str) -> tuple[Pairs, list[Path]]:
        pairs = load_sick_entailment(ctx.data, split_name)
        return pairs, [pairs.path]

    def sort_keys(self, pairs: Pairs) -> np.ndarray:
        return senteval_order(token_counts(pairs.sentences1), token_counts(pairs.sentences2), pairs.labels.tolist())

    def pair_matrix(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return pair_features(u, v)


class SNLI(EntailmentTransfer):
    name = "snli"
    description = ("SNLI (SentEval): train 550k / dev 9842 / test 9824 pairs, 3 classes, accuracy; SNLI from "
                   "-t snli:path=DIR or the data root's senteval/downstream/SNLI (s1/s2/labels.{train,dev,test})")
    options = (SNLIFolder("path", str, None, "SNLI folder with s1/s2/labels.{train,dev,test} (default: the data "
                          "root's senteval/downstream/SNLI)"),)
    order = 308
    license = "SNLI: CC BY-SA 4.0 (Bowman et al. 2015)"
    reference = ("SentEval snli.py SNLIEval + tools/validation.py SplitClassifier, noreg, max_epoch 15, epoch_size 1 "
                 "(Conneau & Kiela 2018)")
    features = "[u, v, u*v, |u-v|]"
    order_rule = "SentEval sort by (tokens s2, tokens s1, label text)"
    regs = SNLI_REGS
    epoch_size = SNLI_EPOCH_SIZE
    max_epoch = SNLI_MAX_EPOCH

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        return snli_required(values, SPLITS)

    def load(self, ctx: EvalContext, split_name: str) -> tuple[Pairs, list[Path]]:
        folder = snli_folder(self, ctx)
        return read_snli(folder, split_name), snli_paths(folder, split_name)

    def sort_keys(self, pairs: Pairs) -> np.ndarray:
        return senteval_order(token_counts(pairs.sentences2), token_counts(pairs.sentences1),
                              [SNLI_LABELS[i] for i in pairs.labels.tolist()])

    def pair_matrix(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return nli_features(u, v)

"""The task contract: metadata (as in mteb), an ``evaluate`` method, and tidy results.

A task declares the data files it reads (relative to the data root), its splits and its main score, and
``evaluate(encoder, ctx)`` returns a :class:`TaskResult`: tidy metric records (one per task × subset ×
metric, each with a confidence interval and n) plus per-item scores (per-pair similarities, per-query
ranks), without which no paired significance test is possible. A task never trains the encoder;
supervised probes live inside the task.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from benchbox.data import DataRoot
from benchbox.encoder import Encoder


@dataclass(frozen=True)
class MetricRecord:
    """One number: ``value`` with its 95% interval [ci_low, ci_high] over ``n`` items (NaN if none)."""

    task: str
    subset: str
    metric: str
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TaskOptions:
    """Protocol switches that tasks read; each task records the ones it used in ``TaskResult.protocol``."""

    #: STS text: ``"senteval"`` (SentEval's tokenised, lower-cased files) or ``"raw"`` (original release)
    text: str = "senteval"
    #: rescale STS-B scores 0–5 to 1–5 before SentEval's relatedness encoding (fixes SentEval #83)
    fix_stsb_labels: bool = False
    #: seed of every random choice a task makes (SentEval's default)
    seed: int = 1111
    #: bootstrap resamples for intervals that have no closed form (0: skip them, NaN intervals)
    bootstrap: int = 1000
    #: ``"auto"``, ``"cpu"`` or ``"cuda"`` for tasks with a trained probe
    device: str = "auto"
    #: k for SentEval's k-fold transfer tasks
    kfold: int = 10
    #: image features file for retrieval tasks
    features: str | None = None
    #: retrieval: interval of the recalls, ``"wilson"`` (on the share of queries) or ``"bootstrap"``
    #: (resampling images with their 5 captions; medr, meanr and rsum always use that bootstrap)
    retrieval_ci: str = "wilson"
    #: retrieval median rank: ``"vsepp"`` (⌊median of 1-based ranks⌋, as VSE++) or ``"median"`` (plain)
    retrieval_medr: str = "vsepp"
    #: retrieval ties with the target: ``"optimistic"`` (not counted; VSE++ on tie-free data) or ``"pessimistic"``
    retrieval_ties: str = "optimistic"


@dataclass
class TaskResult:
    """What one task returns: metrics, per-item scores and the protocol variant that produced them."""

    task: str
    metrics: list[MetricRecord]
    #: per-item scores, one row per item (e.g. columns subset, item, gold, score); may be empty
    items: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the protocol variant and options used (recorded in the run manifest)
    protocol: dict[str, Any] = field(default_factory=dict)
    #: sha256 of every data file read, by path relative to the data root (or ``embedded:`` path)
    data_checksums: dict[str, str] = field(default_factory=dict)


@dataclass
class EvalContext:
    """What a task gets besides the encoder: data, cached encoding, options, progress reporting."""

    data: DataRoot
    #: ``embed(sentences) -> float32 [n, d]``: the encoder behind the embedding cache and progress bar
    embed: Callable[[list[str]], np.ndarray]
    options: TaskOptions = field(default_factory=TaskOptions)
    #: ``log(message)``: progress lines to stderr (silenced by ``--quiet``)
    log: Callable[[str], None] = lambda message: None


class Task(ABC):
    """Base class for evaluation tasks. Subclasses set the metadata and implement :meth:`evaluate`."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: metric name of the headline score (e.g. ``"pearson"``)
    main_score: ClassVar[str]
    #: data files relative to the data root; the data layer checks them before evaluation
    data_files: ClassVar[tuple[str, ...]] = ()
    #: evaluation splits used
    splits: ClassVar[tuple[str, ...]] = ("test",)
    #: short citation of the protocol's source
    reference: ClassVar[str] = ""

    def required_files(self, options: TaskOptions) -> tuple[str, ...]:
        """The files this task will read under ``options`` (default: ``data_files``)."""
        return self.data_files

    @abstractmethod
    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        """Run the protocol and return the result."""


@dataclass(frozen=True)
class TaskGroup:
    """A named list of task names (e.g. ``sts`` = STS12–16), expanded by :func:`resolve_tasks`."""

    name: str
    members: tuple[str, ...]
    description: str = ""


def resolve_tasks(names: list[str]) -> list[Task]:
    """Instantiate the tasks named (groups expanded, duplicates dropped, order kept)."""
    from benchbox.registry import TASKS

    seen: dict[str, Task] = {}

    def add(name: str) -> None:
        target = TASKS.get(name)
        if isinstance(target, TaskGroup):
            for member in target.members:
                add(member)
        elif name not in seen:
            seen[name] = target()

    for name in names:
        add(name)
    return list(seen.values())

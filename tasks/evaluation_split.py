"""What a task on an image–caption evaluation split shares (retrieval, structure): the data files it needs and its
captions, in the order that defines queries, folds and per-image items (:func:`benchbox.data.captions.load_evaluation_split`)."""

from __future__ import annotations

from typing import Any

from benchbox.data.captions import CaptionSplit, evaluation_split_files, load_evaluation_split
from benchbox.task import EvalContext


class OnEvaluationSplit:
    """Mixin for a task on one split (``split``) of an image–caption dataset (``dataset``)."""

    dataset: str
    split: str

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        return evaluation_split_files(self.dataset, self.split)

    def load_captions(self, ctx: EvalContext) -> CaptionSplit:
        return load_evaluation_split(ctx.data, self.dataset, self.split)

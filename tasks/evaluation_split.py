"""What a task on an image–caption evaluation split shares (retrieval, structure): the data files it needs and its
captions, in the order that defines queries, folds and per-image items (:func:`benchbox.data.captions.load_evaluation_split`)."""

from __future__ import annotations

from typing import Any

from benchbox.data.captions import CaptionSplit, evaluation_split_files, load_evaluation_split
from benchbox.task_contract.protocol import EvalContext
from benchbox.task_contract.options import TaskOption

#: the captions' text: Merkx & Frank's (`` .`` appended to a caption without a final full stop, what their
#: published numbers used) or the files' own (what CLIP_benchmark and the CLIP-family comparators used)
CAPTION_TEXTS = ("merkx", "raw")
CAPTIONS = TaskOption("captions", str, "merkx", "caption text: merkx (' .' appended to a caption without a final full "
                      "stop, as Merkx & Frank) or raw (the files' text, as CLIP_benchmark)", choices=CAPTION_TEXTS,
                      flag="captions", protocol_key="caption_text")


class OnEvaluationSplit:
    """Mixin for a task on one split (``split``) of an image–caption dataset (``dataset``); its options include
    :data:`CAPTIONS`."""

    dataset: str
    split: str

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        return evaluation_split_files(self.dataset, self.split)

    def load_captions(self, ctx: EvalContext) -> CaptionSplit:
        full_stop = ctx.values_for(self)["captions"] == "merkx"
        return load_evaluation_split(ctx.data, self.dataset, self.split, full_stop=full_stop)
